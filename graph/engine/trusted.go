package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
)

// Trusted documents: a server whose clients are its own front ends runs the
// operations they were built with, and nothing else. A client names a
// registered document by its id, in Apollo's persisted-query extension
// (extensions.persistedQuery.sha256Hash) or in the GraphQL-over-HTTP
// persisted-documents draft's documentId ("sha256:<hex>" or a bare id);
// any other document is refused (TRUSTED_DOCUMENT_REQUIRED), and so is an
// id nothing is registered under (PERSISTED_QUERY_NOT_FOUND). A document
// sent in full runs if it is, byte for byte, a registered one. Developer
// callers (WithDeveloper: developer tokens) may still send any document,
// introspection included; nothing they send is registered. The REST
// adapter's documents are the server's own and always run.

// TrustedDocuments are the registered documents, by id.
type TrustedDocuments struct {
	byID map[string]string
}

// NewTrustedDocuments returns an empty registry.
func NewTrustedDocuments() *TrustedDocuments { return &TrustedDocuments{byID: map[string]string{}} }

// Add registers doc under id, and under its own SHA-256 (hex), which is
// what Apollo's persisted-query link sends whatever the manifest's ids.
// An id already registered to another document is an error: two builds
// disagreeing on what an id means is a mistake to fix, not to guess at.
func (t *TrustedDocuments) Add(id, doc string) error {
	for _, key := range []string{normalizeID(id), DocumentHash(doc)} {
		if key == "" {
			continue
		}
		if prev, ok := t.byID[key]; ok && prev != doc {
			return fmt.Errorf("document id %s is registered to two different documents", key)
		}
		t.byID[key] = doc
	}
	return nil
}

// Len is how many ids are registered.
func (t *TrustedDocuments) Len() int { return len(t.byID) }

// Lookup is the document registered under id ("sha256:" prefix or not).
func (t *TrustedDocuments) Lookup(id string) (string, bool) {
	doc, ok := t.byID[normalizeID(id)]
	return doc, ok
}

// DocumentHash is a document's id as Apollo's clients compute it: the hex
// SHA-256 of its text.
func DocumentHash(doc string) string {
	sum := sha256.Sum256([]byte(doc))
	return hex.EncodeToString(sum[:])
}

func normalizeID(id string) string {
	id = strings.TrimSpace(id)
	if rest, ok := strings.CutPrefix(id, "sha256:"); ok {
		return strings.ToLower(rest)
	}
	return id
}

// LoadTrustedDocuments reads the documents of path: a JSON manifest, or a
// directory of them and of .graphql / .gql files (each registered under
// its SHA-256). A manifest is either an object mapping ids to documents
// (GraphQL Code Generator's client preset, persistedDocuments: true;
// Relay's --persist-output) or Apollo's persisted query manifest
// ({"format": "apollo-persisted-query-manifest", "operations": [{id,
// body}]}). Every document must parse: a file that is not what it should be
// stops the server rather than refusing its operations one by one later.
func LoadTrustedDocuments(path string) (*TrustedDocuments, error) {
	t := NewTrustedDocuments()
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	files := []string{path}
	if info.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		files = files[:0]
		for _, e := range entries {
			switch strings.ToLower(filepath.Ext(e.Name())) {
			case ".json", ".graphql", ".gql":
				if !e.IsDir() {
					files = append(files, filepath.Join(path, e.Name()))
				}
			}
		}
		sort.Strings(files)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if ext := strings.ToLower(filepath.Ext(f)); ext == ".graphql" || ext == ".gql" {
			err = t.addChecked("", string(raw))
		} else {
			err = t.addManifest(raw)
		}
		if err != nil {
			return nil, fmt.Errorf("trusted documents %s: %w", f, err)
		}
	}
	return t, nil
}

func (t *TrustedDocuments) addManifest(raw []byte) error {
	var apollo struct {
		Format     string `json:"format"`
		Operations []struct {
			ID   string `json:"id"`
			Body string `json:"body"`
		} `json:"operations"`
	}
	if err := json.Unmarshal(raw, &apollo); err == nil && apollo.Format == "apollo-persisted-query-manifest" {
		for _, op := range apollo.Operations {
			if err := t.addChecked(op.ID, op.Body); err != nil {
				return err
			}
		}
		return nil
	}
	var byID map[string]string
	if err := json.Unmarshal(raw, &byID); err != nil {
		return fmt.Errorf("not a manifest: a JSON object of id → document, or an Apollo persisted query manifest (%v)", err)
	}
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if err := t.addChecked(id, byID[id]); err != nil {
			return err
		}
	}
	return nil
}

func (t *TrustedDocuments) addChecked(id, doc string) error {
	if _, err := parser.ParseQuery(&ast.Source{Input: doc}); err != nil {
		if id == "" {
			return fmt.Errorf("not a GraphQL document: %v", err)
		}
		return fmt.Errorf("document %s: not a GraphQL document: %v", id, err)
	}
	return t.Add(id, doc)
}

type developerKey struct{}

// WithDeveloper marks ctx's operations as a developer's (or not): under
// trusted documents a developer may send any document.
func WithDeveloper(ctx context.Context, developer bool) context.Context {
	return context.WithValue(ctx, developerKey{}, developer)
}

func isDeveloper(ctx context.Context) bool {
	v, _ := ctx.Value(developerKey{}).(bool)
	return v
}

type documentIDKey struct{}

// withDocumentID carries the documentId member of a request (the
// persisted-documents draft's), which graphql.RawParams has no room for.
func withDocumentID(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, documentIDKey{}, id)
}

// Error codes of trusted documents.
const (
	CodeTrustedDocumentRequired = "TRUSTED_DOCUMENT_REQUIRED"
	CodePersistedQueryNotFound  = "PERSISTED_QUERY_NOT_FOUND"
)

func trustedError(code string, status int, format string, args ...any) *gqlerror.Error {
	err := gqlerror.Errorf(format, args...)
	err.Extensions = map[string]any{"code": code, "status": status}
	return err
}

// trustedOnly runs registered documents only, for callers not developers.
// It stands where Apollo's automatic persisted queries would, which it
// replaces: nothing a client sends is registered.
type trustedOnly struct{ docs *TrustedDocuments }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = trustedOnly{}

func (trustedOnly) ExtensionName() string                   { return "TrustedDocuments" }
func (trustedOnly) Validate(graphql.ExecutableSchema) error { return nil }

func (t trustedOnly) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if serverDocument(ctx) {
		return nil
	}
	id, _ := ctx.Value(documentIDKey{}).(string)
	if raw := p.Extensions["persistedQuery"]; raw != nil && id == "" {
		pq, _ := raw.(map[string]any)
		id, _ = pq["sha256Hash"].(string)
		if id == "" {
			return trustedError("BAD_REQUEST", http.StatusBadRequest, "extensions.persistedQuery: sha256Hash must be a string")
		}
	}
	delete(p.Extensions, "persistedQuery")
	developer := isDeveloper(ctx)
	if id == "" {
		// A document sent in full is as good as its id when it is exactly
		// a registered one (what a client without persisted-query support
		// sends).
		if doc, ok := t.docs.Lookup(DocumentHash(p.Query)); developer || ok && doc == p.Query {
			return nil
		}
		return trustedError(CodeTrustedDocumentRequired, http.StatusForbidden,
			"this server runs registered documents only: send the id of one as documentId or extensions.persistedQuery.sha256Hash (a developer token may send any document)")
	}
	doc, ok := t.docs.Lookup(id)
	switch {
	case !ok && p.Query != "" && developer:
		return nil
	case !ok && p.Query != "":
		return trustedError(CodeTrustedDocumentRequired, http.StatusForbidden,
			"document %s is not registered: this server runs registered documents only", id)
	case !ok:
		return trustedError(CodePersistedQueryNotFound, http.StatusBadRequest, "no document is registered under id %s", id)
	case p.Query != "" && p.Query != doc:
		return trustedError("BAD_REQUEST", http.StatusBadRequest, "the query sent is not the document registered under id %s", id)
	}
	p.Query = doc
	return nil
}
