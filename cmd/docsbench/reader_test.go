package main

import (
	"strings"
	"testing"
)

func TestRelativeLink(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"a.md", "b.md", "b.md"},
		{"a/README.md", "a/b.md", "b.md"},
		{"a/b/c.md", "a/README.md", "../README.md"},
		{"a/b/c.md", "d/e/README.md", "../../d/e/README.md"},
		{"a/README.md", "b/README.md", "../b/README.md"},
		{"a/b/README.md", "a/b/c/README.md", "c/README.md"},
		{"x.md", "a/b/c.md", "a/b/c.md"},
	} {
		if got := relativeLink(c.from, c.to); got != c.want {
			t.Errorf("relativeLink(%q, %q) = %q, want %q", c.from, c.to, got, c.want)
		}
	}
}

func TestPlannedReaderSpace(t *testing.T) {
	s := plannedReaderSpace(1000)
	paths := map[string]bool{}
	for k, p := range s.pages {
		if paths[p.path] {
			t.Fatalf("page %d: path %q twice", k, p.path)
		}
		paths[p.path] = true
		if p.parent >= k {
			t.Fatalf("page %d comes before its parent %d", k, p.parent)
		}
		if n := len(p.markdown); n < 2000 || n > 5000 {
			t.Errorf("page %d: %d bytes of markdown", k, n)
		}
		for _, want := range []string{"## ", "```yaml", `{% hint style="info" %}`, "{% endhint %}", "](", "| Option |"} {
			if !strings.Contains(p.markdown, want) {
				t.Errorf("page %d lacks %q", k, want)
			}
		}
	}
	if s.pages[999].parent < 0 || s.pages[s.pages[s.pages[999].parent].parent].parent < 0 {
		t.Errorf("the last page is not 4 deep: %s", s.pages[999].path)
	}
}

func TestMetricValue(t *testing.T) {
	exposition := []byte(`# HELP docsapi_published_cache_bytes Bytes the reader's cache holds.
# TYPE docsapi_published_cache_bytes gauge
docsapi_published_cache_bytes 1.048576e+06
docsapi_published_cache_bytes_total 7
docsapi_published_cache_entries{site="a"} 3
docsapi_published_cache_entries{site="b"} 4
`)
	if v, ok := metricValue(exposition, "docsapi_published_cache_bytes"); !ok || v != 1<<20 {
		t.Errorf("bytes = %v, %v", v, ok)
	}
	if v, ok := metricValue(exposition, "docsapi_published_cache_entries"); !ok || v != 7 {
		t.Errorf("entries = %v, %v", v, ok)
	}
	if _, ok := metricValue(exposition, "docsapi_subscriptions"); ok {
		t.Error("found a metric that is not there")
	}
}
