// Package docs_test checks the documentation (README.md and docs/*.md)
// against the tree: links, the DOCSAPI_ variables and the commands shown.
package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// root is the repository's root, from this package's directory.
const root = ".."

// toolVariables are DOCSAPI_ variables that neither the server nor the
// tests read, used by tools of the repository, with where.
var toolVariables = map[string]string{
	"DOCSAPI_URL":   "examples/apollo/check.mjs: the GraphQL endpoint the example checks",
	"DOCSAPI_TOKEN": "examples/apollo/check.mjs: the API token it sends",
}

// testOnly reports whether a DOCSAPI_ variable is the tests' own: they
// are documented in docs/contributing.md, not in operations.md.
func testOnly(name string) bool {
	return strings.HasPrefix(name, "DOCSAPI_TEST_") || name == "DOCSAPI_PLAN_TIMINGS"
}

// docFile is one page of the documentation, read.
type docFile struct {
	path string // from the root, with slashes
	text string
}

func readDocs(t *testing.T) []docFile {
	t.Helper()
	paths := []string{"README.md"}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no docs/*.md found")
	}
	for _, p := range pages {
		paths = append(paths, "docs/"+filepath.Base(p))
	}
	var docs []docFile
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, docFile{p, string(b)})
	}
	return docs
}

var (
	fence      = regexp.MustCompile("^\\s*(```|~~~)")
	inlineCode = regexp.MustCompile("`[^`]*`")
	link       = regexp.MustCompile(`\]\(([^()\s]*(?:\([^()\s]*\)[^()\s]*)*)\)`)
	heading    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// prose returns text's lines outside fenced code blocks (code lines are
// blanked, so that line numbers stay right).
func prose(text string) []string {
	lines := strings.Split(text, "\n")
	in := false
	for i, l := range lines {
		if fence.MatchString(l) {
			in = !in
			lines[i] = ""
			continue
		}
		if in {
			lines[i] = ""
		}
	}
	return lines
}

// anchors are the anchors GitHub makes of a page's headings: the text
// lowercased, with what is neither a letter, a digit, a space, '-' nor '_'
// dropped, and spaces turned into '-'; a repeated one gets -1, -2...
func anchors(text string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range prose(text) {
		m := heading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		a := slug(m[1])
		if n := seen[a]; n > 0 {
			out[a+"-"+itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func slug(h string) string {
	// A link in a heading counts by its text.
	h = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// Every relative link of the docs leads to a file of the tree and, with an
// anchor, to a heading of that file.
func TestLinks(t *testing.T) {
	docs := readDocs(t)
	pageAnchors := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, bool) {
		if a, ok := pageAnchors[path]; ok {
			return a, true
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
		if err != nil {
			return nil, false
		}
		pageAnchors[path] = anchors(string(b))
		return pageAnchors[path], true
	}
	checked := 0
	for _, d := range docs {
		for n, l := range prose(d.text) {
			for _, m := range link.FindAllStringSubmatch(inlineCode.ReplaceAllString(l, ""), -1) {
				target := m[1]
				if target == "" || scheme.MatchString(target) || strings.HasPrefix(target, "//") {
					continue
				}
				checked++
				where := d.path + ":" + itoa(n+1)
				file, anchor, _ := strings.Cut(target, "#")
				path := d.path
				if file != "" {
					path = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(d.path), file)))
					if strings.HasPrefix(path, "../") {
						t.Errorf("%s: %s leads out of the repository", where, target)
						continue
					}
					if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(path))); err != nil {
						t.Errorf("%s: %s: no such file (%s)", where, target, path)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				if !strings.HasSuffix(path, ".md") {
					t.Errorf("%s: %s: an anchor in a file that is not markdown", where, target)
					continue
				}
				a, ok := anchorsOf(path)
				if !ok {
					t.Errorf("%s: %s: cannot read %s", where, target, path)
				} else if !a[anchor] {
					t.Errorf("%s: %s: %s has no heading #%s", where, target, path, anchor)
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d relative links found: the link pattern is out of date", checked)
	}
}

// configVariables are the DOCSAPI_ variables cmd/docsapi/config.go reads
// (every string literal that is one whole name).
func configVariables(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "cmd", "docsapi", "config.go"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range regexp.MustCompile(`"(DOCSAPI_[A-Z0-9_]+)"`).FindAllStringSubmatch(string(b), -1) {
		if !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	if len(names) < 40 {
		t.Fatalf("only %d variables found in config.go: the pattern is out of date", len(names))
	}
	return names
}

// goSources is the text of every Go file of the tree, tests included,
// but this package's.
func goSources(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// This package names the variables it looks for: not a reader.
		if d.IsDir() && path != root && (d.Name() == "node_modules" || d.Name() == "docs" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			b.Write(src)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var variable = regexp.MustCompile(`DOCSAPI_[A-Z0-9_]*`)

// Every DOCSAPI_ variable the docs name is one the server reads, or the
// tests' own (which some Go file of the tree reads), or a tool's
// (toolVariables). A name ending in '_' (DOCSAPI_GIT_MAX_*) stands for
// the variables it begins.
func TestVariablesExist(t *testing.T) {
	config := configVariables(t)
	sources := goSources(t)
	for _, d := range readDocs(t) {
		for n, l := range strings.Split(d.text, "\n") {
			for _, name := range variable.FindAllString(l, -1) {
				where := d.path + ":" + itoa(n+1)
				switch {
				case strings.HasSuffix(name, "_"):
					if !slices.ContainsFunc(config, func(c string) bool { return strings.HasPrefix(c, name) }) {
						t.Errorf("%s: %s* names no variable of cmd/docsapi/config.go", where, name)
					}
				case slices.Contains(config, name):
				case testOnly(name):
					if !regexp.MustCompile(`\b` + name + `\b`).MatchString(sources) {
						t.Errorf("%s: %s: no Go file of the tree reads it", where, name)
					}
				case toolVariables[name] != "":
				default:
					t.Errorf("%s: %s is not a variable of cmd/docsapi/config.go", where, name)
				}
			}
		}
	}
}

// Every DOCSAPI_ variable config.go reads is in docs/operations.md.
func TestVariablesDocumented(t *testing.T) {
	ops, err := os.ReadFile(filepath.Join(root, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, name := range variable.FindAllString(string(ops), -1) {
		documented[name] = true
	}
	for _, name := range configVariables(t) {
		if !documented[name] {
			t.Errorf("%s (cmd/docsapi/config.go) is not in docs/operations.md", name)
		}
	}
}

// flagNames are the flags a command's Go files declare.
func flagNames(t *testing.T, files ...string) map[string]bool {
	t.Helper()
	decl := regexp.MustCompile(`(?:\b(?:flag|fs)\.\w+Var\(&[\w.]+|\bstr\(&[\w.]+),\s*"([a-z0-9-]+)"`)
	names := map[string]bool{"h": true, "help": true}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			names[m[1]] = true
		}
	}
	if len(names) < 10 {
		t.Fatalf("only %d flags found in %v: the pattern is out of date", len(names), files)
	}
	return names
}

// command finds a command line in the docs: in a code block, or in inline
// code, up to a comment, a pipe, a redirection or the end of the code.
var command = regexp.MustCompile(`(?:go run \./cmd/(docsbench|docsapi)|\x60(docsapi))((?:\s+[^\s#|;&>\x60]+)*)`)

// The commands of docsbench and docsapi the docs show have flags (and, for
// docsapi, a subcommand) that exist; so do the packages of the go run and
// go test commands.
func TestCommands(t *testing.T) {
	flags := map[string]map[string]bool{
		"docsbench": flagNames(t, goFiles(t, "cmd/docsbench")...),
		"docsapi":   flagNames(t, "cmd/docsapi/config.go", "cmd/docsapi/main.go"),
	}
	main, err := os.ReadFile(filepath.Join(root, "cmd", "docsapi", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	subcommands := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s*case ("[a-z ]+"(?:, "[a-z ]+")*):`).FindAllStringSubmatch(string(main), -1) {
		for _, c := range strings.Split(m[1], ", ") {
			subcommands[strings.Trim(c, `"`)] = true
		}
	}
	if !subcommands["serve"] || !subcommands["tokens create"] {
		t.Fatalf("subcommands of cmd/docsapi/main.go not found (%v): the pattern is out of date", subcommands)
	}
	pkg := regexp.MustCompile(`\bgo (?:run|test|vet|build|generate)(?:\s+-\S+)*\s+(\./[\w./-]*)`)
	found := map[string]int{}
	for _, d := range readDocs(t) {
		for n, l := range strings.Split(d.text, "\n") {
			where := d.path + ":" + itoa(n+1)
			for _, m := range pkg.FindAllStringSubmatch(l, -1) {
				dir := strings.TrimSuffix(strings.TrimSuffix(m[1], "..."), "/")
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(dir))); err != nil {
					t.Errorf("%s: %s: no such package", where, m[1])
				}
			}
			for _, m := range command.FindAllStringSubmatch(l, -1) {
				cmd := m[1] + m[2]
				found[cmd]++
				args := strings.Fields(strings.NewReplacer("[", " ", "]", " ").Replace(m[3]))
				if cmd == "docsapi" && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
					sub := args[0]
					if len(args) > 1 && (sub == "users" || sub == "tokens") {
						sub += " " + args[1]
					}
					if !subcommands[sub] {
						// Prose such as "docsapi migrate (or serve)" names
						// subcommands; anything else is not a command.
						if m[2] == "" {
							t.Errorf("%s: docsapi %s: no such subcommand", where, sub)
						}
						continue
					}
				}
				for _, a := range args {
					if !strings.HasPrefix(a, "-") || a == "-" {
						continue
					}
					name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
					if !flags[cmd][name] {
						t.Errorf("%s: %s %s: no such flag", where, cmd, a)
					}
				}
			}
		}
	}
	if found["docsbench"] < 5 || found["docsapi"] < 5 {
		t.Errorf("few commands found (%v): the pattern is out of date", found)
	}
}

// goFiles are the non-test Go files of a directory, from the root.
func goFiles(t *testing.T, dir string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(dir), "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, m := range matches {
		if !strings.HasSuffix(m, "_test.go") {
			files = append(files, dir+"/"+filepath.Base(m))
		}
	}
	return files
}
