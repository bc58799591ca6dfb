package graph

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi/bundler"
	"github.com/pb33f/libopenapi/datamodel"
	"github.com/pb33f/libopenapi/utils"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"github.com/uptrace/bun"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/docsapi/docsapi/graph/outbound"
	"github.com/docsapi/docsapi/store"
)

// The work of the OpenAPI job: fetch the source through the guarded
// outbound client (or take the text a spec was published from), parse it with libopenapi (OpenAPI 3.0, 3.1 and Swagger
// 2.0), bundle the files its external $refs name (fetched through the same
// client, relative refs resolved against the source URL) into one document,
// validate that document against the OpenAPI JSON Schema of its version
// (santhosh-tekuri/jsonschema), and keep it as a new version when its digest
// differs from the newest version's. Every outcome is recorded on the spec.

const (
	// openAPIProcessTimeout bounds one processing, all fetches included.
	openAPIProcessTimeout = 5 * time.Minute
	// maxOpenAPIFiles bounds the files a spec may pull in through $refs.
	maxOpenAPIFiles = 200
	// maxOpenAPIErrors bounds the problems recorded on a spec.
	maxOpenAPIErrors = 50
)

// openAPIOutcome is what a processing found: a document, or a failure.
type openAPIOutcome struct {
	document    []byte
	contentType string
	entry       string
	files       map[string]string

	code   *store.OpenAPIErrorCode
	errors []store.OpenAPIProcessError
}

func failed(code store.OpenAPIErrorCode, messages ...string) *openAPIOutcome {
	o := &openAPIOutcome{code: &code}
	for _, m := range messages {
		if len(o.errors) == maxOpenAPIErrors {
			o.errors = append(o.errors, store.OpenAPIProcessError{Message: fmt.Sprintf("and %d more", len(messages)-maxOpenAPIErrors)})
			break
		}
		c := string(code)
		o.errors = append(o.errors, store.OpenAPIProcessError{Message: m, Code: &c})
	}
	return o
}

// ProcessOpenAPISpec is the job's work for spec id: claim it (pending to
// progress; nothing to do when it is not pending), process its source, and
// record the outcome unless the source changed meanwhile (then the newer
// job's outcome is the one that counts). It is idempotent.
func (r *Resolver) ProcessOpenAPISpec(ctx context.Context, id string) error {
	s, err := store.ClaimOpenAPISpec(ctx, r.DB, id, r.now())
	if errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, openAPIProcessTimeout)
	out := r.processOpenAPISource(pctx, s.SourceURL, s.SourceText)
	cancel()
	return store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		cur, err := store.LockOpenAPISpec(ctx, tx, s.OrganizationID, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil // deleted meanwhile
		} else if err != nil {
			return err
		}
		if cur.Generation != s.Generation || cur.ProcessingState != store.OpenAPIProgress {
			return nil
		}
		now := r.now()
		if out.code == nil {
			digest := sha256.Sum256(out.document)
			hexDigest := hex.EncodeToString(digest[:])
			same := false
			if cur.LastVersionID != nil {
				last, err := store.GetOpenAPISpecVersion(ctx, tx, cur.ID, *cur.LastVersionID)
				if err != nil && !errors.Is(err, store.ErrNotFound) {
					return err
				}
				same = err == nil && last.Digest == hexDigest
			}
			if !same {
				v := &store.OpenAPISpecVersion{ID: store.NewID(), SpecID: cur.ID, Digest: hexDigest, Document: out.document,
					ContentType: out.contentType, Entry: out.entry, Files: out.files, CreatedAt: now}
				if err := store.CreateOpenAPISpecVersion(ctx, tx, v); err != nil {
					return err
				}
				cur.LastVersionID = &v.ID
			}
		}
		if r.Log != nil {
			code := ""
			if out.code != nil {
				code = string(*out.code)
			}
			r.Log.InfoContext(ctx, "processed an OpenAPI spec", "spec", cur.ID, "errorCode", code)
		}
		cur.ProcessingState, cur.LastProcessedAt, cur.UpdatedAt = store.OpenAPIComplete, &now, now
		cur.LastErrorCode, cur.LastErrors = out.code, out.errors
		if cur.LastErrors == nil {
			cur.LastErrors = []store.OpenAPIProcessError{}
		}
		return store.UpdateOpenAPISpec(ctx, tx, cur, "processing_state", "last_processed_at", "updated_at",
			"last_error_code", "last_errors", "last_version_id")
	})
}

// fetchFailure turns an outbound error into the recorded failure.
func fetchFailure(what string, err error, client *outbound.Client) *openAPIOutcome {
	switch {
	case errors.Is(err, outbound.ErrTimeout):
		return failed(store.OpenAPIFetchTimeout, fmt.Sprintf("%s did not answer within the time limit (%s)", what, client.Timeout()))
	case errors.Is(err, outbound.ErrTooLarge):
		return failed(store.OpenAPIFetchError, fmt.Sprintf("%s is larger than %d bytes", what, client.MaxBytes()))
	case errors.Is(err, outbound.ErrBlockedAddress):
		return failed(store.OpenAPIFetchError, what+"'s address is not allowed (private, loopback or link-local)")
	case errors.Is(err, outbound.ErrBadURL):
		return failed(store.OpenAPIFetchError, what+" is not an http(s) URL")
	}
	var status *outbound.StatusError
	if errors.As(err, &status) {
		return failed(store.OpenAPIFetchError, fmt.Sprintf("%s answered HTTP %d", what, status.Code))
	}
	return failed(store.OpenAPIFetchError, what+" could not be reached")
}

// outbound is the guarded client of outbound requests.
func (r *Resolver) outbound() *outbound.Client {
	if r.Outbound == nil {
		return outbound.New(outbound.Config{})
	}
	return r.Outbound
}

// textBase is the base address of a spec published from a text: its $refs
// to other files resolve under it (libopenapi puts every remote reference
// on the base's host, absolute ones too) and are refused there, never
// looked for on this machine or elsewhere. A text has no address of its
// own: it must hold its definitions.
const textBase = "https://text.docsapi.invalid/"

// processOpenAPISource fetches the source at sourceURL (or takes text),
// then parses, bundles and validates it.
func (r *Resolver) processOpenAPISource(ctx context.Context, sourceURL, text *string) *openAPIOutcome {
	client := r.outbound()
	var body []byte
	var u *url.URL
	entry := ""
	switch {
	case text != nil:
		body = []byte(*text)
		// Checked when it was given; the limit may have been lowered since.
		if int64(len(body)) > client.MaxBytes() {
			return failed(store.OpenAPIFetchError, fmt.Sprintf("the text is larger than %d bytes", client.MaxBytes()))
		}
		u, _ = url.Parse(textBase)
		entry = "openapi.yaml"
		if isJSON(body) {
			entry = "openapi.json"
		}
	case sourceURL != nil:
		var err error
		if body, err = client.Fetch(ctx, *sourceURL); err != nil {
			return fetchFailure("the source", err, client)
		}
		u, _ = url.Parse(*sourceURL) // Fetch checked it
	default:
		return failed(store.OpenAPIFetchError, "the specification has no source")
	}
	if !utf8.Valid(body) {
		return failed(store.OpenAPIParseError, "the source is not text: an OpenAPI document is JSON or YAML")
	}
	base := *u
	base.RawQuery, base.Fragment = "", ""
	base.Path = path.Dir(u.Path)
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	baseURL := base.String()
	if entry == "" {
		entry = path.Base(u.Path)
	}
	if entry == "/" || entry == "." {
		entry = "openapi"
	}

	// The files $refs name, fetched through the guarded client. libopenapi
	// may fetch several at once.
	var mu sync.Mutex
	files := map[string]string{entry: string(body)}
	total := int64(len(body))
	var refFailure *openAPIOutcome
	remote := func(ref string) (*http.Response, error) {
		name := strings.TrimPrefix(ref, baseURL)
		if text != nil && strings.HasPrefix(ref, textBase) {
			mu.Lock()
			defer mu.Unlock()
			if refFailure == nil {
				refFailure = failed(store.OpenAPIFetchError, fmt.Sprintf("the text refers to the file %q: a specification given as text "+
					"must hold its own definitions ($refs within it, #/...); bundle it into one document, or publish it from its URL", name))
			}
			return nil, errors.New("a reference to another file in a text")
		}
		data, err := client.Fetch(ctx, ref)
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			total += int64(len(data))
			switch {
			case len(files) >= maxOpenAPIFiles:
				err = fmt.Errorf("more than %d files", maxOpenAPIFiles)
				refFailure = failed(store.OpenAPIFetchError, fmt.Sprintf("the source refers to more than %d files", maxOpenAPIFiles))
			case total > 4*client.MaxBytes():
				err = outbound.ErrTooLarge
				refFailure = failed(store.OpenAPIFetchError, fmt.Sprintf("the source and its files are larger than %d bytes", 4*client.MaxBytes()))
			case !utf8.Valid(data):
				err = errors.New("not text")
				refFailure = failed(store.OpenAPIParseError, fmt.Sprintf("the referenced file %q is not text", name))
			default:
				files[name] = string(data)
			}
		} else if refFailure == nil {
			refFailure = fetchFailure(fmt.Sprintf("the referenced file %q", name), err, client)
		}
		if err != nil {
			return nil, err
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(data))}, nil
	}
	cfg := &datamodel.DocumentConfiguration{
		BaseURL:                 &base,
		AllowRemoteReferences:   true,
		RemoteURLHandler:        remote,
		ExtractRefsSequentially: true,
		Logger:                  slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	doc, err := libopenapi.NewDocumentWithConfiguration(body, cfg)
	if err != nil {
		return failed(store.OpenAPIParseError, "the source is not an OpenAPI or Swagger document: "+err.Error())
	}
	out := &openAPIOutcome{entry: entry, files: files}
	switch doc.GetSpecInfo().SpecType {
	case utils.OpenApi3:
		model, buildErr := doc.BuildV3Model()
		if refFailure != nil {
			return refFailure
		}
		if model == nil || buildErr != nil {
			return failed(store.OpenAPIParseError, errorMessages(buildErr)...)
		}
		bundled, err := bundler.BundleDocument(&model.Model)
		if err != nil {
			return failed(store.OpenAPIParseError, errorMessages(err)...)
		}
		out.document, out.contentType = bundled, "application/yaml"
		if isJSON(body) {
			// Served in the source's format; the model keeps the order.
			if rendered, err := renderJSON(bundled); err == nil {
				out.document, out.contentType = rendered, "application/json"
			}
		}
	case utils.OpenApi2:
		// libopenapi bundles OpenAPI 3 only: a Swagger 2.0 document is kept
		// as fetched, once its model builds.
		if _, buildErr := doc.BuildV2Model(); buildErr != nil {
			return failed(store.OpenAPIParseError, errorMessages(buildErr)...)
		}
		if refFailure != nil {
			return refFailure
		}
		out.document, out.contentType = body, "application/yaml"
		if isJSON(body) {
			out.contentType = "application/json"
		}
	default:
		return failed(store.OpenAPIParseError, "the source is not an OpenAPI or Swagger document")
	}
	if problems := validateOpenAPI(out.document); len(problems) > 0 {
		return failed(store.OpenAPIParseError, problems...)
	}
	return out
}

// validateOpenAPI checks a (bundled) document against the OpenAPI
// Initiative's JSON Schema of its version, which libopenapi carries
// (SpecInfo.APISchema), with santhosh-tekuri/jsonschema, the validator the
// REST adapter's reference checks use too. Each problem is where it is in
// the document (a JSONPath) and what is wrong there.
func validateOpenAPI(document []byte) []string {
	doc, err := libopenapi.NewDocument(document)
	if err != nil {
		return []string{err.Error()}
	}
	info := doc.GetSpecInfo()
	schema, err := openAPISchemaOf(info.APISchema)
	if err != nil {
		return []string{"the OpenAPI schema of version " + info.Version + " could not be compiled: " + err.Error()}
	}
	raw := info.GetSpecJSONBytes()
	if raw == nil || len(*raw) == 0 {
		return []string{"the document has no JSON form to validate"}
	}
	instance, err := jsonschema.UnmarshalJSON(bytes.NewReader(*raw))
	if err != nil {
		return []string{"the document's JSON form cannot be read: " + err.Error()}
	}
	err = schema.Validate(instance)
	var invalid *jsonschema.ValidationError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &invalid):
		return []string{err.Error()}
	}
	var out []string
	var collect func(e *jsonschema.ValidationError, parent []string)
	collect = func(e *jsonschema.ValidationError, parent []string) {
		if name, ok := e.ErrorKind.(*kind.PropertyNames); ok {
			// The failure of a name, located by the jsonschema package
			// at the name itself: it is a key of an object at or
			// beneath the parent's location. Its cause says why.
			at := append(slices.Clip(parent), keyPath(valueAt(instance, parent), name.Property)...)
			problem := e.ErrorKind.LocalizedString(openAPIPrinter)
			if len(e.Causes) > 0 {
				problem = "invalid property name: " + firstLeaf(e).ErrorKind.LocalizedString(openAPIPrinter)
			}
			out = append(out, jsonPathOf(instance, at)+": "+problem)
			return
		}
		if len(e.Causes) == 0 {
			out = append(out, jsonPathOf(instance, e.InstanceLocation)+": "+e.ErrorKind.LocalizedString(openAPIPrinter))
		}
		for _, cause := range e.Causes {
			collect(cause, e.InstanceLocation)
		}
	}
	collect(invalid, nil)
	// The jsonschema package reports the properties of an object in no
	// set order: sorted, the same document always gets the same problems.
	slices.Sort(out)
	return out
}

// valueAt is the value at location in instance (nil when there is none).
func valueAt(instance any, location []string) any {
	for _, token := range location {
		switch v := instance.(type) {
		case map[string]any:
			instance = v[token]
		case []any:
			i, err := strconv.Atoi(token)
			if err != nil || i < 0 || i >= len(v) {
				return nil
			}
			instance = v[i]
		default:
			return nil
		}
	}
	return instance
}

// keyPath is the location, within value, of the first object (depth
// first, keys in order) that has key: the key itself, when value has it.
func keyPath(value any, key string) []string {
	switch v := value.(type) {
	case map[string]any:
		if _, ok := v[key]; ok {
			return []string{key}
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if p := keyPath(v[k], key); p != nil {
				return append([]string{k}, p...)
			}
		}
	case []any:
		for i, item := range v {
			if p := keyPath(item, key); p != nil {
				return append([]string{strconv.Itoa(i)}, p...)
			}
		}
	}
	return nil
}

var (
	openAPIPrinter = message.NewPrinter(language.English)
	// openAPISchemas holds each version's schema, compiled at the first
	// document of that version: compiling one takes longer than
	// validating a document.
	openAPISchemas sync.Map // schema text → func() (*jsonschema.Schema, error)
)

func openAPISchemaOf(text string) (*jsonschema.Schema, error) {
	compile, _ := openAPISchemas.LoadOrStore(text, sync.OnceValues(func() (*jsonschema.Schema, error) {
		decoded, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
		if err != nil {
			return nil, err
		}
		c := jsonschema.NewCompiler()
		// The schemas refer only to themselves and to the JSON Schema
		// drafts the compiler knows: nothing is loaded from anywhere.
		c.UseLoader(jsonschema.SchemeURLLoader{})
		if err := c.AddResource("openapi-schema.json", decoded); err != nil {
			return nil, err
		}
		return c.Compile("openapi-schema.json")
	}))
	return compile.(func() (*jsonschema.Schema, error))()
}

func firstLeaf(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	for len(e.Causes) > 0 {
		e = e.Causes[0]
	}
	return e
}

// jsonPathOf writes a location in instance as a JSONPath: $.info,
// $.paths['/pets'].get.parameters[0], $.responses['200'].
func jsonPathOf(instance any, location []string) string {
	var b strings.Builder
	b.WriteString("$")
	for i, token := range location {
		_, inArray := valueAt(instance, location[:i]).([]any)
		switch {
		case inArray:
			b.WriteString("[" + token + "]")
		case simpleJSONPathName.MatchString(token):
			b.WriteString("." + token)
		default:
			b.WriteString("['" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(token) + "']")
		}
	}
	return b.String()
}

var simpleJSONPathName = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func renderJSON(yamlDoc []byte) ([]byte, error) {
	doc, err := libopenapi.NewDocument(yamlDoc)
	if err != nil {
		return nil, err
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		return nil, err
	}
	return model.Model.RenderJSON("  ")
}

func isJSON(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{'
}

// errorMessages flattens joined errors into their messages.
func errorMessages(err error) []string {
	if err == nil {
		return []string{"the document could not be read"}
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range joined.Unwrap() {
			out = append(out, errorMessages(e)...)
		}
		return out
	}
	return []string{err.Error()}
}
