package wholeserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

// gitbookCLIDir holds GitBook's command-line tool, @gitbook/cli, pinned by
// its package.json and package-lock.json. Its .npmrc skips install scripts:
// the CLI's fetches a tunnel binary that only `gitbook dev` uses.
var gitbookCLIDir = filepath.Join("testdata", "gitbook-cli")

// gitbookCLIVersion is the CLI the test runs, as a user installs it.
const gitbookCLIVersion = "0.25.1"

// GitBook's own CLI works against this server as a user runs it, pointed
// at it with `gitbook auth --endpoint`: whoami, publishing an OpenAPI
// specification from a file and from a URL (served on loopback), publishing
// a small integration, following its events with tail (for a few seconds),
// and unpublishing it. Each command must exit 0, and what it did is checked
// by what the API answers after it: the specification published from a
// file has a version whose content is the file.
//
// It needs node (18 or later) and the CLI, which .ci/run installs (npm ci
// in testdata/gitbook-cli); the test installs it itself when npm is there,
// and is skipped, saying why, when either cannot be had.
func TestGitBookCLI(t *testing.T) {
	t.Parallel()
	node := servertest.NodeHarness(t, gitbookCLIDir, "@gitbook/cli")
	cliJS, err := filepath.Abs(filepath.Join(gitbookCLIDir, "node_modules", "@gitbook", "cli", "cli.js"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Version string }
	if raw, err := os.ReadFile(filepath.Join(filepath.Dir(cliJS), "package.json")); err != nil || json.Unmarshal(raw, &pkg) != nil {
		t.Fatalf("@gitbook/cli's package.json: %v", err)
	}
	if pkg.Version != gitbookCLIVersion {
		t.Fatalf("%s has @gitbook/cli %s, not %s: run npm ci there", gitbookCLIDir, pkg.Version, gitbookCLIVersion)
	}

	env := servertest.New(t, servertest.Options{Jobs: true, OutboundTimeout: 5 * time.Second})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	src := newCLISpecSource(t)

	// The CLI keeps its configuration (the endpoint and token `auth`
	// saves) under the user's home and builds integrations in the
	// temporary directory: both are the test's. GITBOOK_TOKEN and
	// GITBOOK_ENDPOINT would override `auth`: they are not passed on.
	home := t.TempDir()
	work := t.TempDir()
	var environ []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GITBOOK_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") && !strings.HasPrefix(kv, "TMPDIR=") {
			environ = append(environ, kv)
		}
	}
	environ = append(environ, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "TMPDIR="+home, "NO_COLOR=1")
	command := func(ctx context.Context, stdin string, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, node, append([]string{cliJS}, args...)...)
		cmd.Dir, cmd.Env, cmd.Stdin = work, environ, strings.NewReader(stdin)
		return cmd
	}
	gitbook := func(stdin string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var stdout, stderr bytes.Buffer
		cmd := command(ctx, stdin, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("gitbook %s: %v\n%s%s", strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
		}
		return stdout.String()
	}
	expectLines := func(what, out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in:\n%s", what, w, out)
			}
		}
	}

	// auth and whoami: the user the token is, at this server.
	me := alice.Do("GET", "/v1/user", nil).Expect(http.StatusOK).JSON()
	expectLines("auth", gitbook("", "auth", "--endpoint", env.URL, "--token", alice.Token),
		"Authenticating with "+env.URL, fmt.Sprintf("You are now authenticated as %s.", me["displayName"]))
	expectLines("whoami", gitbook("", "whoami"),
		fmt.Sprintf("Authenticated as %s\n", me["displayName"]), "ID: "+alice.ID+"\n", "Email: "+alice.Email+"\n", "API: "+env.URL+"\n")

	// openapi publish from a file: the spec's version is the file.
	specs := "/v1/orgs/" + org + "/openapi"
	if err := os.WriteFile(filepath.Join(work, "spec.yaml"), []byte(zoo31Inline), 0o600); err != nil {
		t.Fatal(err)
	}
	out := gitbook("", "openapi", "publish", "--spec", "pets", "--organization", org, "spec.yaml")
	spec := waitProcessed(t, alice, org, "pets")
	expectLines("openapi publish spec.yaml", out, fmt.Sprintf("OpenAPI specification \"pets\" published to %s", spec["urls"].(map[string]any)["app"]))
	if spec["lastVersion"] == nil || spec["lastProcessErrorCode"] != nil || spec["sourceURL"] != nil {
		t.Errorf("the spec published from a file: %v", spec)
	}
	fsys := alice.Do("GET", specs+"/pets/versions/latest/content", nil).Expect(http.StatusOK).JSON()["filesystem"].(map[string]any)
	if files := fsys["files"].(map[string]any); len(files) != 1 || files[fsys["entryPoint"].(string)] != zoo31Inline {
		t.Errorf("the version of the spec published from a file is not the file: %v", fsys)
	}

	// openapi publish from a URL: fetched from it; published again, the
	// same slug takes the URL as its source.
	for _, slug := range []string{"zoo", "pets"} {
		out := gitbook("", "openapi", "publish", "--spec", slug, "--organization", org, src.URL+"/openapi.json")
		spec := waitProcessed(t, alice, org, slug)
		expectLines("openapi publish "+src.URL, out, fmt.Sprintf("OpenAPI specification %q published to %s", slug, spec["urls"].(map[string]any)["app"]))
		if spec["sourceURL"] != src.URL+"/openapi.json" || spec["lastProcessErrorCode"] != nil {
			t.Errorf("the spec %s published from a URL: %v", slug, spec)
		}
		fsys := alice.Do("GET", specs+"/"+slug+"/versions/latest/content", nil).Expect(http.StatusOK).JSON()["filesystem"].(map[string]any)
		if files := fsys["files"].(map[string]any); files[fsys["entryPoint"].(string)] != petstore30 {
			t.Errorf("the version of %s published from a URL is not the document served: %v", slug, fsys)
		}
	}
	if n := len(alice.Do("GET", specs+"/pets/versions", nil).Expect(http.StatusOK).JSON()["items"].([]any)); n != 2 {
		t.Errorf("pets, published from a file then a URL, has %d versions", n)
	}

	// publish: a small integration, built by the CLI (esbuild), owned by
	// the organization given on the command line.
	writeFiles(t, work, map[string]string{
		"gitbook-manifest.yaml": "name: cli-notes\ntitle: CLI Notes\ndescription: Published by GitBook's CLI\nsummary: Notes\n" +
			"script: ./src/index.js\nscopes:\n  - space:content:read\norganization: placeholder\nvisibility: private\n",
		"src/index.js": "export default { async fetch() { return new Response(\"ok\"); } };\n",
	})
	expectLines("publish", gitbook("", "publish", "--organization", org), `Integration "cli-notes" published`)
	in := alice.Do("GET", "/v1/integrations/cli-notes", nil).Expect(http.StatusOK).JSON()
	if in["title"] != "CLI Notes" || in["description"] != "Published by GitBook's CLI" || in["version"] != 1.0 ||
		in["owner"].(map[string]any)["id"] != org || in["visibility"] != "private" || fmt.Sprint(in["scopes"]) != "[space:content:read]" {
		t.Errorf("the integration published: %v", in)
	}

	// tail: installed in the organization, the integration has an event,
	// which tail prints (it polls every ten seconds until interrupted:
	// the test reads its first round, then interrupts it).
	alice.Do("POST", "/v1/integrations/cli-notes/installations", map[string]any{"organization": org}).Expect(http.StatusCreated)
	var events struct {
		Items []struct {
			ID, Status, CreatedAt string
			Payload               map[string]any
		}
	}
	alice.Do("GET", "/v1/integrations/cli-notes/events", nil).Expect(http.StatusOK).Decode(&events)
	if len(events.Items) != 1 {
		t.Fatalf("events of the installed integration: %+v", events)
	}
	event := events.Items[0]
	created, err := time.Parse(time.RFC3339Nano, event.CreatedAt)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(event.Payload)
	want := fmt.Sprintf("[%s][%s] ", event.Status, created.UTC().Format("2006-01-02T15:04:05.000Z"))
	tailed := tail(t, command, want, 60*time.Second)
	var printed map[string]any
	if err := json.Unmarshal([]byte(strings.TrimPrefix(tailed, want)), &printed); err != nil || !sameJSON(t, printed, event.Payload) {
		t.Errorf("tail printed %q, the API lists %s", tailed, payload)
	}
	t.Logf("gitbook tail printed %s", tailed)

	// unpublish (confirmed at its prompt): the integration is gone.
	expectLines("unpublish", gitbook("y\n", "unpublish", "cli-notes"), `Integration "cli-notes" has been deleted`)
	alice.Do("GET", "/v1/integrations/cli-notes", nil).Expect(http.StatusNotFound)
}

// tail runs `gitbook tail` until it prints a line starting with want (or
// timeout passes), interrupts it as a user would (it then exits 0) and
// returns that line.
func tail(t *testing.T, command func(context.Context, string, ...string) *exec.Cmd, want string, timeout time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := command(ctx, "", "tail")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	var all bytes.Buffer
	go func() {
		lines := bufio.NewScanner(io.TeeReader(stdout, &all))
		for lines.Scan() {
			if strings.HasPrefix(lines.Text(), want) {
				found <- lines.Text()
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		close(found)
	}()
	line, ok := <-found
	if err := cmd.Process.Signal(os.Interrupt); err != nil && ok {
		t.Errorf("interrupting tail: %v", err)
	}
	<-found
	if err := cmd.Wait(); err != nil || !ok {
		t.Fatalf("gitbook tail (found %q: %v): %v\n%s%s", want, ok, err, all.Bytes(), stderr.Bytes())
	}
	return line
}

// newCLISpecSource serves an OpenAPI document on loopback.
func newCLISpecSource(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/openapi.json" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, petstore30)
	}))
	t.Cleanup(s.Close)
	return s
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
