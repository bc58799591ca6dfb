package rest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
)

// Conditional requests (RFC 9110 §13), for every route of the table at once.
//
// ETag: every GET answering 200 carries a strong entity tag, a digest of the
// body it writes. A digest is right by construction: it changes exactly when
// the representation does, whatever changed (the object, or something it
// embeds or counts), and it asks nothing of the resolvers. A GET whose
// If-None-Match names the current tag (or is *) answers 304, without a body.
// Query parameters choose other representations (format, extended, a page
// of a list), with tags of their own.
//
// If-Match: a PATCH, PUT or DELETE sent with it is made only if the
// resource's current representation, the answer of the GET of the same path
// in the table (its read counterpart, run without query parameters), has
// one of the tags given (the strong comparison), or, for *, exists. If not,
// 412 in the reference's error shape, with the current tag as ETag (none
// when there is no such resource). A write whose path has no GET in the
// table has no tag to compare: it is made with If-Match: *, and any other
// value is a 412. Writes answer no ETag (their body is not the GET's): GET
// again for the next one.
//
// The race between the check and the write: both run in the lock the API is
// given (store.DB.Serialize in the server, a PostgreSQL advisory lock keyed
// by the path, across every process on the database), so conditional writes
// of one resource run one after the other, and of two clients writing from
// the same tag one succeeds and the other gets 412. Writes without If-Match
// (GitBook's client, GraphQL mutations) do not take the lock: one landing
// between a conditional write's check and its write is overwritten by it,
// as it would be without If-Match. Content, which has versions, is guarded
// inside the mutation instead: its edits take baseRevision, checked under
// the space's (or change request's) row lock.

// Lock runs fn holding a lock named key: one fn at a time per key.
type Lock func(ctx context.Context, key string, fn func(ctx context.Context) error) error

func isWrite(method string) bool {
	return method == http.MethodPatch || method == http.MethodPut || method == http.MethodDelete
}

// readOf is the read counterpart of a write route: the GET of its path.
func (a *adapter) readOf(route Route) (Route, bool) {
	if !isWrite(route.Method) {
		return Route{}, false
	}
	for _, r := range Routes {
		if r.Method == http.MethodGet && r.Path == route.Path {
			return r, true
		}
	}
	return Route{}, false
}

// etagOf is the entity tag of a body: a strong validator, 144 bits of its
// SHA-256.
func etagOf(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
}

// writeRead writes the answer of a GET: with its ETag when it is a 200 with
// a body, and as 304 when If-None-Match names that tag.
func (ans answer) writeRead(w http.ResponseWriter, r *http.Request) {
	if ans.failed() || ans.body == nil || ans.status != http.StatusOK {
		ans.write(w)
		return
	}
	tag := etagOf(ans.body)
	w.Header().Set("ETag", tag)
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		if cond, err := parseETags(inm); err == nil && cond.matches(tag, false) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	ans.write(w)
}

// conditionalWrite makes a write sent with If-Match, if the resource's
// current tag matches (see above).
func (a *adapter) conditionalWrite(w http.ResponseWriter, r *http.Request, route Route, op *operation, vars map[string]any, ifMatch string, read Route, hasRead bool) {
	cond, err := parseETags(ifMatch)
	if err != nil {
		WriteError(w, http.StatusBadRequest, "If-Match: "+err.Error())
		return
	}
	if !hasRead {
		if cond.any {
			a.answer(r.Context(), route, op, vars).write(w)
			return
		}
		WriteError(w, http.StatusPreconditionFailed, "If-Match: "+route.DocumentedPath()+
			" has no GET, hence no entity tag to match: only If-Match: * is accepted")
		return
	}
	readOp := a.ops[read.Operation]
	var ans answer
	var current string // the current tag, when it did not match
	checkAndWrite := func(ctx context.Context) error {
		cur := a.answer(ctx, read, readOp, pathVariables(r, readOp))
		switch {
		case cur.failed() && cur.status == http.StatusNotFound:
			ans = errorAnswer(http.StatusPreconditionFailed, "If-Match: there is no such resource")
		case cur.failed():
			ans = cur
		case !cond.matches(etagOf(cur.body), true):
			current = etagOf(cur.body)
			ans = errorAnswer(http.StatusPreconditionFailed, "If-Match: the resource changed: its entity tag is now "+current+
				" (none of "+ifMatch+"); GET it again and retry")
		default:
			ans = a.answer(ctx, route, op, vars)
		}
		return nil
	}
	if a.lock == nil {
		err = checkAndWrite(r.Context())
	} else {
		// One key for every write of the path: a PATCH and a DELETE of
		// one resource wait for each other.
		err = a.lock(r.Context(), "rest "+r.URL.Path, checkAndWrite)
	}
	if err != nil {
		WriteGraphError(w, r, a.log, err)
		return
	}
	if current != "" {
		w.Header().Set("ETag", current)
	}
	ans.write(w)
}

// pathVariables are the variables of op from the request's path alone.
func pathVariables(r *http.Request, op *operation) map[string]any {
	vars := map[string]any{}
	for name := range op.Variables {
		if v := r.PathValue(name); v != "" {
			vars[name] = v
		}
	}
	return vars
}

// etagCondition is an If-Match or If-None-Match value: * or entity tags.
type etagCondition struct {
	any  bool
	tags []entityTag
}

type entityTag struct {
	weak   bool
	opaque string // with its quotes
}

// matches tells whether tag (one of ours, strong) satisfies the condition:
// by the strong comparison (If-Match), or the weak one (If-None-Match).
func (c etagCondition) matches(tag string, strong bool) bool {
	if c.any {
		return true
	}
	for _, t := range c.tags {
		if t.opaque == tag && (!strong || !t.weak) {
			return true
		}
	}
	return false
}

var errETags = errors.New(`not "*" or a list of entity tags ("...", W/"...")`)

// parseETags reads "*" or a comma-separated list of entity tags.
func parseETags(v string) (etagCondition, error) {
	v = strings.TrimSpace(v)
	if v == "*" {
		return etagCondition{any: true}, nil
	}
	var c etagCondition
	for v != "" {
		var t entityTag
		if strings.HasPrefix(v, "W/") {
			t.weak, v = true, v[2:]
		}
		if !strings.HasPrefix(v, `"`) {
			return c, errETags
		}
		end := strings.IndexByte(v[1:], '"')
		if end < 0 {
			return c, errETags
		}
		t.opaque, v = v[:end+2], strings.TrimSpace(v[end+2:])
		c.tags = append(c.tags, t)
		if v == "" {
			break
		}
		if v[0] != ',' {
			return c, errETags
		}
		v = strings.TrimSpace(v[1:])
	}
	if len(c.tags) == 0 {
		return c, errETags
	}
	return c, nil
}
