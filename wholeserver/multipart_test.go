package wholeserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

// formPart is one part of a multipart form: a field, or a file when
// filename is set.
type formPart struct{ name, filename, content string }

// multipartBody writes parts as a multipart/form-data body with boundary
// "b", each as it is (no escaping, any order, names repeated).
func multipartBody(parts ...formPart) []byte {
	var b bytes.Buffer
	for _, p := range parts {
		b.WriteString("--b\r\nContent-Disposition: form-data; name=\"" + p.name + "\"")
		if p.filename != "" {
			b.WriteString("; filename=\"" + p.filename + "\"\r\nContent-Type: text/plain")
		}
		b.WriteString("\r\n\r\n" + p.content + "\r\n")
	}
	b.WriteString("--b--\r\n")
	return b.Bytes()
}

// GraphQL multipart requests (uploads) whose form is malformed, or whose
// operations and map do not agree: each is refused with a 4xx and GraphQL
// errors with their codes, never a 5xx, and no file is stored.
func TestMultipartRefusesHostileForms(t *testing.T) {
	t.Parallel()
	env := servertest.New(t) // uploads of at most 1 MiB
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	const upload = `mutation($s: ID!, $file: Upload!) { uploadFile(spaceId: $s, file: $file) { id } }`
	operations := func(vars string) string {
		return `{"query":` + jsonString(upload) + `,"variables":` + vars + `}`
	}
	ops := operations(`{"s":"` + space + `","file":null}`)
	file := formPart{"0", "a.txt", "hello"}
	okMap := formPart{"map", "", `{"0":["variables.file"]}`}
	manyFiles := []formPart{{"operations", "", operations(`{"s":"` + space + `","file":null,"x":[` + strings.Repeat("null,", 9_999) + `null]}`)}}
	manyMap := map[string][]string{"0": {"variables.file"}}
	for i := range 10_000 {
		manyMap[fmt.Sprint(i+1)] = []string{fmt.Sprintf("variables.x.%d", i)}
	}
	rawMap, _ := json.Marshal(manyMap)
	manyFiles = append(manyFiles, formPart{"map", "", string(rawMap)}, file)
	for i := range 10_000 {
		manyFiles = append(manyFiles, formPart{fmt.Sprint(i + 1), "x.txt", "x"})
	}

	for _, tc := range []struct {
		what        string
		contentType string // default: multipart/form-data; boundary=b
		body        []byte
	}{
		{"operations with trailing data", "", multipartBody(formPart{"operations", "", ops + "x"}, okMap, file)},
		{"operations followed by a '}'", "", multipartBody(formPart{"operations", "", ops + "}"}, okMap, file)},
		{"operations twice", "", multipartBody(formPart{"operations", "", ops + ops}, okMap, file)},
		{"operations not JSON", "", multipartBody(formPart{"operations", "", "query=x"}, okMap, file)},
		{"operations a list (a batch)", "", multipartBody(formPart{"operations", "", "[" + ops + "]"}, okMap, file)},
		{"operations with variables as a string", "", multipartBody(formPart{"operations", "", `{"query":` + jsonString(upload) + `,"variables":"x"}`}, okMap, file)},
		{"operations with no variables", "", multipartBody(formPart{"operations", "", `{"query":` + jsonString(upload) + `}`}, okMap, file)},
		{"map with trailing data", "", multipartBody(formPart{"operations", "", ops}, formPart{"map", "", okMap.content + "x"}, file)},
		{"map followed by a ']'", "", multipartBody(formPart{"operations", "", ops}, formPart{"map", "", okMap.content + "]"}, file)},
		{"map not JSON", "", multipartBody(formPart{"operations", "", ops}, formPart{"map", "", "0=variables.file"}, file)},
		{"map a list", "", multipartBody(formPart{"operations", "", ops}, formPart{"map", "", `["variables.file"]`}, file)},
		{"map with a path as a string", "", multipartBody(formPart{"operations", "", ops}, formPart{"map", "", `{"0":"variables.file"}`}, file)},
		{"map with a path as a number", "", multipartBody(formPart{"operations", "", ops}, formPart{"map", "", `{"0":[5]}`}, file)},
		{"map with no paths for a file", "", multipartBody(formPart{"operations", "", ops}, formPart{"map", "", `{"0":[]}`}, file)},
		{"map naming a variable that does not exist", "", multipartBody(formPart{"operations", "", ops}, formPart{"map", "", `{"0":["variables.nope.deeper"]}`}, file)},
		{"map naming variables when there are none", "", multipartBody(formPart{"operations", "", `{"query":` + jsonString(upload) + `}`}, formPart{"map", "", `{"0":["variables.file"]}`}, file)},
		{"map into a string variable", "", multipartBody(formPart{"operations", "", ops}, formPart{"map", "", `{"0":["variables.s"]}`}, file)},
		{"map below a string variable", "", multipartBody(formPart{"operations", "", ops}, formPart{"map", "", `{"0":["variables.s.x"]}`}, file)},
		{"map into an index past a list", "", multipartBody(formPart{"operations", "", operations(`{"s":"` + space + `","file":null,"l":[null]}`)}, formPart{"map", "", `{"0":["variables.l.5"]}`}, file)},
		{"map into a negative index", "", multipartBody(formPart{"operations", "", operations(`{"s":"` + space + `","file":null,"l":[null]}`)}, formPart{"map", "", `{"0":["variables.l.-1"]}`}, file)},
		{"map indexing an object", "", multipartBody(formPart{"operations", "", operations(`{"s":"` + space + `","file":{"a":null}}`)}, formPart{"map", "", `{"0":["variables.file.0"]}`}, file)},
		{"map naming a member of a list", "", multipartBody(formPart{"operations", "", operations(`{"s":"` + space + `","file":null,"l":[null]}`)}, formPart{"map", "", `{"0":["variables.l.x"]}`}, file)},
		{"map outside the variables", "", multipartBody(formPart{"operations", "", ops}, formPart{"map", "", `{"0":["query"]}`}, file)},
		{"map naming one path twice", "", multipartBody(formPart{"operations", "", ops}, formPart{"map", "", `{"0":["variables.file"],"1":["variables.file"]}`}, file, formPart{"1", "b.txt", "b"})},
		{"more files than mapped", "", multipartBody(formPart{"operations", "", ops}, okMap, file, formPart{"1", "b.txt", "b"})},
		{"a mapped file missing", "", multipartBody(formPart{"operations", "", ops}, okMap)},
		{"a file named twice", "", multipartBody(formPart{"operations", "", ops}, okMap, file, file)},
		{"operations twice as parts", "", multipartBody(formPart{"operations", "", ops}, formPart{"operations", "", ops}, okMap, file)},
		{"map before operations", "", multipartBody(okMap, formPart{"operations", "", ops}, file)},
		{"no parts", "", multipartBody()},
		{"10,000 files", "", multipartBody(manyFiles...)},
		{"a file just past the upload limit", "", multipartBody(formPart{"operations", "", ops}, okMap, formPart{"0", "big.txt", strings.Repeat("x", 1<<20+1)})},
		{"a file past the body limit", "", multipartBody(formPart{"operations", "", ops}, okMap, formPart{"0", "big.txt", strings.Repeat("x", 3<<20)})},
		{"no boundary", "multipart/form-data", multipartBody(formPart{"operations", "", ops}, okMap, file)},
		{"another boundary", "multipart/form-data; boundary=c", multipartBody(formPart{"operations", "", ops}, okMap, file)},
		{"a truncated body", "", multipartBody(formPart{"operations", "", ops}, okMap, file)[:200]},
	} {
		contentType := tc.contentType
		if contentType == "" {
			contentType = "multipart/form-data; boundary=b"
		}
		for _, chunked := range []bool{false, true} {
			var body io.Reader = bytes.NewReader(tc.body)
			if chunked {
				// No Content-Length: the server cannot tell the size first.
				body = io.MultiReader(body)
			}
			req, _ := http.NewRequest(http.MethodPost, env.URL+"/graphql", body)
			req.Header.Set("Content-Type", contentType)
			req.Header.Set("Authorization", "Bearer "+alice.Token)
			status, out := sendGraphQL(t, req)
			// Refused before it runs: a 4xx; or by the resolver (a file too
			// large): a field error, and no data.
			refused := status >= 400 && status < 500 || status == http.StatusOK && (len(out.Data) == 0 || string(out.Data) == "null")
			if !refused || len(out.Errors) == 0 {
				t.Errorf("%s (chunked: %v): %d %+v %s", tc.what, chunked, status, out.Errors, out.Data)
				continue
			}
			for _, e := range out.Errors {
				s, _ := e.Extensions["status"].(float64)
				if code, _ := e.Extensions["code"].(string); code == "" || s < 400 || s >= 500 || status != http.StatusOK && s != float64(status) {
					t.Errorf("%s (chunked: %v): %d, error %q %v", tc.what, chunked, status, e.Message, e.Extensions)
				}
			}
		}
	}
	files := func() float64 {
		return alice.Do("GET", "/v1/spaces/"+space+"/content/files", nil).Expect(http.StatusOK).JSON()["count"].(float64)
	}
	if n := files(); n != 0 {
		t.Fatalf("a refused request stored %v files", n)
	}
	// The well-formed request is taken.
	req, _ := http.NewRequest(http.MethodPost, env.URL+"/graphql", bytes.NewReader(multipartBody(formPart{"operations", "", ops}, okMap, file)))
	req.Header.Set("Content-Type", "multipart/form-data; boundary=b")
	req.Header.Set("Authorization", "Bearer "+alice.Token)
	if status, out := sendGraphQL(t, req); status != http.StatusOK || len(out.Errors) > 0 || files() != 1 {
		t.Fatalf("the upload: %d %+v", status, out.Errors)
	}
}
