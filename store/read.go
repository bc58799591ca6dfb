package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// selectRows reads the rows of T's table that match where (SQL with ?
// placeholders, after "WHERE"), ordered by orderBy, with the columns bun
// maps for T.
//
// The hot reads (the site tree, a space by id, the caller of a token) go
// through here. Outside a transaction they run on the pgx pool directly: a
// prepared statement, binary results scanned straight into T's fields. That
// is several times cheaper than bun's path through database/sql, which turns
// every value into a driver.Value and converts it again by reflection, and it
// is what a tree of a thousand rows per level spends its time on. Inside a
// transaction (mutations reading what they lock) the same SQL runs through
// bun. Arguments must mean the same to both: strings, numbers, and []string
// for a list of ids (idIn) or of keys (= ANY(?)).
func selectRows[T any](ctx context.Context, db bun.IDB, where, orderBy string, args ...any) ([]*T, error) {
	return selectModel[T](ctx, db, readModelOf[T](db), where, orderBy, args...)
}

// idIn is the condition that the primary key column is one of ids (the
// []string argument that goes with it). A few ids are matched with column =
// ANY(?), which PostgreSQL serves from the primary key. A long list is
// matched as a semi-join on the unnested array: with = ANY, a prepared
// statement's generic plan (which does not know the array) may scan a
// small table comparing every row with every element in turn (a thousand
// ids against a thousand spaces took 5.7 ms), where the semi-join hashes
// the list on a small table (0.3 ms) and probes the primary key once per id
// on a large one. The semi-join is no good for a few ids: on a table of a
// thousand rows it hashed one id and scanned them all (125 µs, against 8
// µs by the index). store/plans_test.go checks the plans at both sizes.
// Only for unique columns: on a column shared by many rows (a site's site
// spaces) the semi-join expects many rows, and at size PostgreSQL chose a
// scan of the whole table for it.
func idIn(column string, ids []string) string {
	if len(ids) <= shortIDList {
		return column + " = ANY(?)"
	}
	return column + " IN (SELECT unnest(?::text[]))"
}

// shortIDList is the longest list of ids idIn matches with = ANY: up to
// there, comparing each row of a small table with each id costs no more
// than hashing them.
const shortIDList = 32

// selectColumns is selectRows reading only columns (bun's SQL names of T's
// fields) and leaving T's other fields zero: for reads whose callers use
// nothing else (see SpaceSummariesOfSites). A thousand rows of a few columns
// cost PostgreSQL and pgx a fraction of the whole rows.
func selectColumns[T any](ctx context.Context, db bun.IDB, columns []string, where, orderBy string, args ...any) ([]*T, error) {
	return selectModel[T](ctx, db, readModelOf[T](db).only(columns), where, orderBy, args...)
}

// selectModel reads rows of T with m, T's model or a projection of it.
func selectModel[T any](ctx context.Context, db bun.IDB, m *readModel, where, orderBy string, args ...any) ([]*T, error) {
	query := m.query(where, orderBy)
	d, ok := db.(*DB)
	if !ok {
		var rows []*T
		err := db.NewRaw(query.sql, bunArgs(args)...).Scan(ctx, &rows)
		return rows, translate(err)
	}
	if c := QueryCounterFrom(ctx); c != nil {
		c.count(query.pgSQL, args)
	}
	pgArgs := make([]any, 0, len(args)+1)
	pgArgs = append(pgArgs, pgx.QueryExecModeCacheStatement)
	pgArgs = append(pgArgs, args...)
	if d.replicas != nil || d.workers != nil {
		route := d.routedRead
		if d.workers != nil {
			route = d.workerRead
		}
		var out []*T
		err := route(ctx, func(ctx context.Context, pool *pgxpool.Pool) (err error) {
			out, err = scanModel[T](ctx, pool, m, query.pgSQL, pgArgs)
			return err
		})
		return out, translate(err)
	}
	out, err := scanModel[T](ctx, d.Pool, m, query.pgSQL, pgArgs)
	return out, translate(err)
}

// scanModel runs a read of rows of T with m on pool and scans them.
func scanModel[T any](ctx context.Context, pool *pgxpool.Pool, m *readModel, sql string, pgArgs []any) ([]*T, error) {
	rows, err := pool.Query(ctx, sql, pgArgs...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*T
	var chunk []T
	targets := make([]any, len(m.fields))
	// A text column's value is shared with the row before when it is the
	// same (repeatedString): a site's thousand site spaces name the same
	// organization and site.
	repeated := make([]repeatedString, len(m.fields))
	for rows.Next() {
		// Rows are allocated in chunks that double up to 64 (a thousand rows
		// are some twenty allocations, a single row one).
		if len(chunk) == 0 {
			chunk = make([]T, min(max(len(out), 1), 64))
		}
		row := &chunk[0]
		chunk = chunk[1:]
		base := unsafe.Pointer(row)
		for i, f := range m.fields {
			if f.text {
				repeated[i].dst = (*string)(unsafe.Add(base, f.offset))
				targets[i] = &repeated[i]
				continue
			}
			targets[i] = f.target(unsafe.Add(base, f.offset))
		}
		if err := rows.Scan(targets...); err != nil {
			return nil, fmt.Errorf("store: scan %s: %w", m.table, err)
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// selectRow is selectRows for one row: ErrNotFound when there is none.
func selectRow[T any](ctx context.Context, db bun.IDB, where string, args ...any) (*T, error) {
	rows, err := selectRows[T](ctx, db, where+" LIMIT 1", "", args...)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, ErrNotFound
	}
	return rows[0], nil
}

// readModel is what selectRows needs of a model, worked out once per type
// from bun's table metadata, so the column list and the scan targets always
// agree with what bun itself reads and writes.
type readModel struct {
	table     string
	selectSQL string
	columns   []string    // the selected columns, qualified by the table's alias
	fields    []readField // where each selected column goes
	// queries are the model's statements, by where and order: the callers'
	// are constants, so they are put together (and numbered for pgx) once.
	queries sync.Map // readQueryKey → *readQuery
	// byName locates a column of the whole model; projections are the
	// models of column subsets (only), by their column list.
	byName      map[string]int
	from        string   // " FROM table AS alias"
	projections sync.Map // string → *readModel
}

// only is the projection of m on columns (SQL names, a subset of m's). The
// callers' column lists are constants, so there are few projections. An
// unknown column is a programming error, reported the first time the read
// runs (as a query on a missing column would be).
func (m *readModel) only(columns []string) *readModel {
	key := strings.Join(columns, ",")
	if p, ok := m.projections.Load(key); ok {
		return p.(*readModel)
	}
	p := &readModel{table: m.table, from: m.from}
	for _, c := range columns {
		i, ok := m.byName[c]
		if !ok {
			panic(fmt.Sprintf("store: %s has no column %q", m.table, c))
		}
		p.columns = append(p.columns, m.columns[i])
		p.fields = append(p.fields, m.fields[i])
	}
	p.selectSQL = "SELECT " + strings.Join(p.columns, ", ") + m.from
	stored, _ := m.projections.LoadOrStore(key, p)
	return stored.(*readModel)
}

// readField is a column's field: its type, its offset in the struct (bun's
// models embed structs by value only, so an offset is all a path of indexes
// comes to), and how to make a scan target of its address.
type readField struct {
	typ    reflect.Type
	offset uintptr
	target func(unsafe.Pointer) any
	// text: a string field (of a named string type too) of a text column
	// (no SQL type in its tag: bun's own, varchar), scanned through
	// repeatedString.
	text bool
}

// repeatedString is a scan target of a text column into a string field that
// reuses the value of the previous row when the bytes are the same: no
// allocation for an organization, a site or an enum value read a thousand
// times over. pgx hands it the column's bytes (BytesScanner). Strings are
// immutable, so rows sharing one is safe. (Nullable strings stay pgx's: a
// shared *string saved fewer allocations than it cost.)
type repeatedString struct {
	dst  *string
	prev string
	seen bool
}

func (r *repeatedString) ScanBytes(b []byte) error {
	if b == nil {
		return errors.New("NULL in a column read into a string")
	}
	if !r.seen || string(b) != r.prev { // no allocation for the comparison
		r.prev, r.seen = string(b), true
	}
	*r.dst = r.prev
	return nil
}

var (
	timeType    = reflect.TypeFor[time.Time]()
	scannerType = reflect.TypeFor[sql.Scanner]()
)

// scanTarget returns how to turn the address of a field of type t into what
// pgx scans into. For the plain kinds of most columns (strings, including
// the named string types of enums, numbers, booleans, times, and nullable
// pointers to them) it is a typed pointer of the same memory layout: pgx
// then takes its direct path for that type, where a pointer to a named type
// costs it a reflective conversion per value, and making the pointer costs
// nothing, where reflect.NewAt(...).Interface() is the largest cost of
// scanning a row. Types that scan themselves (sql.Scanner) and anything else
// keep their own type.
func scanTarget(t reflect.Type) func(unsafe.Pointer) any {
	if reflect.PointerTo(t).Implements(scannerType) {
		return func(p unsafe.Pointer) any { return reflect.NewAt(t, p).Interface() }
	}
	switch {
	case t == timeType:
		return func(p unsafe.Pointer) any { return (*time.Time)(p) }
	case t.Kind() == reflect.String:
		return func(p unsafe.Pointer) any { return (*string)(p) }
	case t.Kind() == reflect.Bool:
		return func(p unsafe.Pointer) any { return (*bool)(p) }
	case t.Kind() == reflect.Int:
		return func(p unsafe.Pointer) any { return (*int)(p) }
	case t.Kind() == reflect.Int64:
		return func(p unsafe.Pointer) any { return (*int64)(p) }
	case t.Kind() == reflect.Pointer && !t.Implements(scannerType):
		switch e := t.Elem(); {
		case e == timeType:
			return func(p unsafe.Pointer) any { return (**time.Time)(p) }
		case e.Kind() == reflect.String && e.Name() != "":
			// A nullable enum (a named string type): its few values are
			// shared, not allocated for every row.
			return func(p unsafe.Pointer) any { return (*internedField)(p) }
		case e.Kind() == reflect.String:
			return func(p unsafe.Pointer) any { return (**string)(p) }
		}
	}
	return func(p unsafe.Pointer) any { return reflect.NewAt(t, p).Interface() }
}

// internedField is a nullable enum field (a *string of a named string
// type) as a scan target: pgx hands it the column's bytes (BytesScanner),
// and it points the field at a shared copy of the value. Enum values are
// few; past maxInterned distinct values (a column that is no enum after
// all) new ones are allocated as usual. Shared values are never written
// through: fields are given new pointers, not changed in place.
type internedField struct{ s *string }

// The shared values: a map read without a lock (a thousand rows look it up
// a thousand times; a sync.Map hashed each string through an interface, at
// some 100 ns a look), replaced by a copy when a value is added, which
// happens some dozens of times in a process's life.
var (
	internedValues atomic.Pointer[map[string]*string]
	internedAdd    sync.Mutex
)

const maxInterned = 256

func (f *internedField) ScanBytes(b []byte) error {
	if b == nil {
		f.s = nil
		return nil
	}
	f.s = interned(b)
	return nil
}

// interned is the shared copy of b's value, or a copy of its own once
// maxInterned values are shared.
func interned(b []byte) *string {
	if v := internedIn(internedValues.Load(), b); v != nil {
		return v
	}
	internedAdd.Lock()
	defer internedAdd.Unlock()
	shared := internedValues.Load()
	if v := internedIn(shared, b); v != nil {
		return v
	}
	s := string(b)
	next := map[string]*string{}
	if shared != nil {
		next = maps.Clone(*shared)
	}
	next[s] = &s
	internedValues.Store(&next)
	return &s
}

// internedIn is b's value as shared holds it, or a copy of its own when
// shared is full; nil when it may be added.
func internedIn(shared *map[string]*string, b []byte) *string {
	if shared == nil {
		return nil
	}
	if v, ok := (*shared)[string(b)]; ok { // no allocation for the lookup
		return v
	}
	if len(*shared) >= maxInterned {
		s := string(b)
		return &s
	}
	return nil
}

type readQueryKey struct{ where, orderBy string }

// readQuery is a statement of selectRows, with ? placeholders (for bun) and
// numbered ones (for pgx).
type readQuery struct{ sql, pgSQL string }

func (m *readModel) query(where, orderBy string) *readQuery {
	key := readQueryKey{where, orderBy}
	if q, ok := m.queries.Load(key); ok {
		return q.(*readQuery)
	}
	sql := m.selectSQL + " WHERE " + where
	if orderBy != "" {
		sql += " ORDER BY " + orderBy
	}
	q, _ := m.queries.LoadOrStore(key, &readQuery{sql: sql, pgSQL: dollarPlaceholders(sql)})
	return q.(*readQuery)
}

var readModels sync.Map // reflect.Type → *readModel

func readModelOf[T any](db bun.IDB) *readModel {
	typ := reflect.TypeFor[T]()
	if m, ok := readModels.Load(typ); ok {
		return m.(*readModel)
	}
	table := db.Dialect().Tables().Get(typ)
	m := &readModel{table: table.Name, byName: make(map[string]int, len(table.Fields))}
	for i, f := range table.Fields {
		m.byName[f.Name] = i
		m.columns = append(m.columns, string(table.SQLAlias)+"."+string(f.SQLName))
		field := fieldAt(typ, f.Index)
		field.text = field.typ.Kind() == reflect.String && f.UserSQLType == f.DiscoveredSQLType
		m.fields = append(m.fields, field)
	}
	m.from = " FROM " + string(table.SQLName) + " AS " + string(table.SQLAlias)
	m.selectSQL = "SELECT " + strings.Join(m.columns, ", ") + m.from
	stored, _ := readModels.LoadOrStore(typ, m)
	return stored.(*readModel)
}

// pairModel is the model of a read of two tables at once, a row of a and
// one of b per result row, scanned into P: a struct of two fields, the
// first of a's type, the second of b's, by value. from is the statement's
// FROM clause (naming both tables by the aliases a's and b's columns are
// qualified with). One statement where two would do the same work: on a
// Citus cluster each statement costs its planning on the worker, whatever
// it reads (docs/scaling.md).
func pairModel[P any](a, b *readModel, from string) *readModel {
	typ := reflect.TypeFor[P]()
	if typ.NumField() != 2 {
		panic(fmt.Sprintf("store: %s is no pair", typ))
	}
	m := &readModel{table: a.table + "+" + b.table, from: from}
	for i, part := range []*readModel{a, b} {
		offset := typ.Field(i).Offset
		m.columns = append(m.columns, part.columns...)
		for _, f := range part.fields {
			f.offset += offset
			m.fields = append(m.fields, f)
		}
	}
	m.selectSQL = "SELECT " + strings.Join(m.columns, ", ") + from
	return m
}

// fieldAt locates the field at index (a path through embedded structs) in
// struct type t. An embedded pointer would put the field outside the struct:
// bun's models have none, and this refuses them rather than guess.
func fieldAt(t reflect.Type, index []int) readField {
	var offset uintptr
	for _, i := range index {
		if t.Kind() != reflect.Struct {
			panic(fmt.Sprintf("store: %s reaches a field through a %s", t, t.Kind()))
		}
		f := t.Field(i)
		offset += f.Offset
		t = f.Type
	}
	return readField{typ: t, offset: offset, target: scanTarget(t)}
}

// pgQueries holds the pgx form of the statements of eachRow and execRows.
// Their callers pass constants, so it stays small; it stops growing at
// maxPgQueries all the same, should one ever be built from data.
var (
	pgQueries     sync.Map // query → numbered query
	pgQueriesSize atomic.Int64
)

const maxPgQueries = 1000

// pgQuery is dollarPlaceholders(query), worked out once per query.
func pgQuery(query string) string {
	if q, ok := pgQueries.Load(query); ok {
		return q.(string)
	}
	q := dollarPlaceholders(query)
	if pgQueriesSize.Load() < maxPgQueries {
		if _, loaded := pgQueries.LoadOrStore(query, q); !loaded {
			pgQueriesSize.Add(1)
		}
	}
	return q
}

// dollarPlaceholders numbers the ? placeholders of query for pgx ($1, $2...).
// The queries given to selectRows have no other question marks.
func dollarPlaceholders(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 8)
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// execRows runs a statement that changes rows, the way selectRows reads them:
// on the pgx pool outside a transaction (no bun query hooks), through bun
// inside one. It returns the number of rows changed.
func execRows(ctx context.Context, db bun.IDB, query string, args ...any) (int64, error) {
	d, ok := db.(*DB)
	if !ok {
		res, err := db.NewRaw(query, bunArgs(args)...).Exec(ctx)
		if err != nil {
			return 0, translate(err)
		}
		n, _ := res.RowsAffected()
		return n, nil
	}
	if c := QueryCounterFrom(ctx); c != nil {
		c.count(pgQuery(query), args)
	}
	if d.replicas != nil {
		noteWrite(ctx)
	}
	tag, err := d.Pool.Exec(ctx, pgQuery(query), append([]any{pgx.QueryExecModeCacheStatement}, args...)...)
	if err != nil {
		return 0, translate(err)
	}
	return tag.RowsAffected(), nil
}

// bunArgs adapts selectRows' arguments for bun: a bare []string would be
// written as JSON, where PostgreSQL expects an array.
func bunArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		if list, ok := a.([]string); ok {
			a = pgdialect.Array(list)
		}
		out[i] = a
	}
	return out
}

// eachRow runs a read (? placeholders) and calls scan on each row's values:
// on the pgx pool with a prepared statement outside transactions (hot
// queries of every request are planned once), through bun inside one.
func eachRow(ctx context.Context, db bun.IDB, query string, args []any, scan func(scan func(dest ...any) error) error) error {
	if d, ok := db.(*DB); ok {
		if c := QueryCounterFrom(ctx); c != nil {
			c.count(pgQuery(query), args)
		}
		if d.replicas != nil && routeFrom(ctx) != nil {
			return eachRowRouted(ctx, d.routedRead, pgQuery(query), args, scan)
		}
		if d.workers != nil && d.workers.workerOf(ctx) != nil {
			return eachRowRouted(ctx, d.workerRead, pgQuery(query), args, scan)
		}
		rows, err := d.Pool.Query(ctx, pgQuery(query), append([]any{pgx.QueryExecModeCacheStatement}, args...)...)
		if err != nil {
			return translate(err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows.Scan); err != nil {
				return err
			}
		}
		return translate(rows.Err())
	}
	rows, err := db.QueryContext(ctx, query, bunArgs(args)...)
	if err != nil {
		return translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows.Scan); err != nil {
			return err
		}
	}
	return translate(rows.Err())
}
