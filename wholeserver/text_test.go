package wholeserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

// Text PostgreSQL cannot store (a NUL byte, bytes that are not UTF-8) is
// refused before anything runs, with 400 BAD_REQUEST, wherever it comes
// from: a variable, the query's text or a string written in it, over POST,
// GET, multipart and the websocket. Nothing is stored, and nothing is
// stored changed (invalid UTF-8 replaced by U+FFFD).

// rawGraphQL POSTs body as it is to /graphql as u, and returns the status
// and the decoded response.
func rawGraphQL(t *testing.T, u *servertest.User, contentType string, body []byte) (int, *servertest.GraphQLResponse) {
	t.Helper()
	req, _ := http.NewRequest("POST", u.Env.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+u.Token)
	return sendGraphQL(t, req)
}

func sendGraphQL(t *testing.T, req *http.Request) (int, *servertest.GraphQLResponse) {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out servertest.GraphQLResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: %d, not JSON: %s", req.Method, req.URL.Path, res.StatusCode, raw)
	}
	return res.StatusCode, &out
}

// badRequest fails unless the answer is 400 with one BAD_REQUEST error.
func expectBadRequest(t *testing.T, what string, status int, out *servertest.GraphQLResponse) servertest.GraphQLError {
	t.Helper()
	if status != http.StatusBadRequest || len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "BAD_REQUEST" ||
		out.Errors[0].Extensions["status"] != 400.0 {
		t.Fatalf("%s: %d %+v %s", what, status, out.Errors, out.Data)
	}
	return out.Errors[0]
}

func TestGraphQLRefusesTextTheDatabaseCannotStore(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	orgs := func() string {
		return string(alice.Do("GET", "/v1/orgs", nil).Expect(http.StatusOK).Body)
	}
	before := orgs()
	const create = `mutation($t: String!) { createOrganization(input: {title: $t}) { id } }`
	const read = `query($id: ID!) { organization(id: $id) { id } }`

	// Variables, POSTed: a NUL (JSON's escape), in a string and in a
	// member name, and invalid UTF-8 (raw bytes, which decoding would hide).
	for _, tc := range []struct {
		name, body string
		path       []any
	}{
		{"a NUL in a variable", `{"query":"` + create + `","variables":{"t":"Ac\u0000me"}}`, []any{"variable", "t"}},
		{"a NUL in an id", `{"query":"` + read + `","variables":{"id":"` + org + `\u0000"}}`, []any{"variable", "id"}},
		{"a NUL in a member name", `{"query":"mutation($i: JSONObject) { x: __typename }","variables":{"i":{"a\u0000":1}}}`, []any{"variable", "i", "a\x00"}},
		{"a NUL in the query", `{"query":"{ viewer { id } }\u0000"}`, nil},
		{"an escaped NUL written in the query", `{"query":"mutation { createOrganization(input: {title: \"Ac\\u0000me\"}) { id } }"}`, nil},
		{"a NUL in the operation name", `{"query":"query A { viewer { id } }","operationName":"A\u0000"}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := rawGraphQL(t, alice, "application/json", []byte(tc.body))
			e := expectBadRequest(t, tc.name, status, out)
			if !strings.Contains(e.Message, "NUL") || (tc.path != nil && !equalPath(e.Path, tc.path)) {
				t.Fatalf("%s: %+v", tc.name, e)
			}
		})
	}
	for _, body := range [][]byte{
		[]byte(`{"query":"` + create + `","variables":{"t":"Ac` + "\xff" + `me"}}`),
		[]byte(`{"query":"mutation { createOrganization(input: {title: \"Ac` + "\xc3\x28" + `me\"}) { id } }"}`),
	} {
		status, out := rawGraphQL(t, alice, "application/json", body)
		if e := expectBadRequest(t, "invalid UTF-8", status, out); !strings.Contains(e.Message, "UTF-8") {
			t.Fatalf("invalid UTF-8: %+v", e)
		}
	}

	// GET: the parameters are checked before their JSON is decoded.
	for name, query := range map[string]string{
		"a NUL in a variable":         "query=" + url.QueryEscape(read) + "&variables=" + url.QueryEscape(`{"id":"x\u0000"}`),
		"invalid UTF-8 in a variable": "query=" + url.QueryEscape(read) + "&variables=" + url.QueryEscape(`{"id":"x`+"\xff"+`"}`),
		"a NUL in the query":          "query=" + url.QueryEscape("{ viewer { id } }\x00"),
		"invalid UTF-8 in the query":  "query=" + url.QueryEscape(`{ organization(id: "`+"\xff"+`") { id } }`),
	} {
		req, _ := http.NewRequest("GET", env.URL+"/graphql?"+query, nil)
		req.Header.Set("Authorization", "Bearer "+alice.Token)
		status, out := sendGraphQL(t, req)
		expectBadRequest(t, "GET, "+name, status, out)
	}

	// Multipart: an uploaded file's name is text too.
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	// (A NUL in a part header is already refused by the multipart reader.)
	for _, name := range []string{"a\xffb.txt"} {
		req := servertest.UploadRequest(env.URL, alice.Token, `mutation($s: ID!, $file: Upload!) { uploadFile(spaceId: $s, file: $file) { id } }`,
			map[string]any{"s": space}, name, "text/plain", []byte("x"))
		status, out := sendGraphQL(t, req)
		expectBadRequest(t, "multipart, file name "+name, status, out)
	}
	if files := alice.Do("GET", "/v1/spaces/"+space+"/content/files", nil).Expect(http.StatusOK).JSON(); files["count"] != 0.0 {
		t.Fatalf("a file was stored: %v", files)
	}

	// The websocket: an operation with a NUL is refused as over HTTP; a
	// message that is not UTF-8 closes the connection with 1007.
	c := connectWS(t, env, alice)
	if r := c.operation("1", create, map[string]any{"t": "Ac\x00me"}); r.code() != "BAD_REQUEST" || r.Errors[0].Extensions["status"] != 400.0 {
		t.Fatalf("websocket, a NUL in a variable: %+v", r)
	}
	if r := c.operation("2", `mutation { createOrganization(input: {title: "Ac\u0000me"}) { id } }`, nil); r.code() != "BAD_REQUEST" {
		t.Fatalf("websocket, a NUL written in the query: %+v", r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wsWait)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, []byte(`{"id":"3","type":"subscribe","payload":{"query":"`+create+`","variables":{"t":"Ac`+"\xff"+`me"}}}`)); err != nil {
		t.Fatal(err)
	}
	if code := c.closeStatus(); code != websocket.StatusInvalidFramePayloadData {
		t.Fatalf("websocket, invalid UTF-8: closed with %d", code)
	}

	if after := orgs(); after != before {
		t.Fatalf("organizations changed:\n%s\n%s", before, after)
	}
}

func equalPath(got, want []any) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}
