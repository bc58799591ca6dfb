package store

import (
	"context"
	"io/fs"
	"sync"
	"testing/fstest"

	"github.com/uptrace/bun/migrate"
)

// MigrateBefore applies our migrations whose file names sort before name,
// and nothing else: a test of migration name starts from the database the
// migration meets in the field.
func (db *DB) MigrateBefore(ctx context.Context, name string) error {
	older := fstest.MapFS{}
	err := fs.WalkDir(migrationFiles, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() >= name {
			return err
		}
		data, err := fs.ReadFile(migrationFiles, path)
		older[path] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		return err
	}
	migrations := migrate.NewMigrations()
	if err := migrations.Discover(older); err != nil {
		return err
	}
	migrator := migrate.NewMigrator(db.DB, migrations, migrate.WithMarkAppliedOnSuccess(true))
	if err := migrator.Init(ctx); err != nil {
		return err
	}
	_, err = migrator.Migrate(ctx)
	return err
}

// Statement is a statement a read sent: its SQL and, for the pgx reads,
// its arguments ($1...); bun's statements carry theirs inline.
type Statement struct {
	SQL  string
	Args []any
}

// RecordStatements returns ctx whose statements are counted and appended
// to the returned list, for tests that look at what a read runs.
func RecordStatements(ctx context.Context) (context.Context, *[]Statement) {
	ctx, c := WithQueryCounter(ctx)
	var out []Statement
	var mu sync.Mutex
	c.record = func(sql string, args []any) {
		mu.Lock()
		defer mu.Unlock()
		out = append(out, Statement{SQL: sql, Args: args})
	}
	return ctx, &out
}

// The bounds of one search.
const (
	MaxSearchHits       = maxSearchHits
	MaxSearchCandidates = maxSearchCandidates
)

// NarrowSearch says which way a search finds its candidates.
var NarrowSearch = narrowSearch

// SanitizeSQL is the statement text of a statement's span (tracing.go).
var SanitizeSQL = sanitizeSQL

// ReadOnly tells a statement the caller cache's hook deems to write nothing.
var ReadOnly = readOnly
