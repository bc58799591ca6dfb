package insights

import (
	"fmt"
	"math"
	"reflect"
	"testing"
)

func TestExtract(t *testing.T) {
	tests := []struct {
		name     string
		messages []Message
		want     []Issue
	}{
		{"a problem and a question in one message", []Message{
			{Role: "user", Body: "Hello there. I can't log in since yesterday! Is there a reset link?"},
		}, []Issue{{Title: "I can't log in since yesterday!", Summary: "I can't log in since yesterday! Is there a reset link?"}}},
		{"only the user's messages count", []Message{
			{Role: "assistant", Body: "Does the error persist?"},
			{Role: "team-member", Body: "This is a known bug."},
			{Role: "user", Body: "Thanks, that's all."},
		}, nil},
		{"html and markdown are stripped", []Message{
			{Role: "user", Body: "<p>The <b>export</b> to PDF fails</p><p>Great product otherwise</p>"},
			{Role: "user", Body: "**Search** is [slow](https://x.test) on big spaces."},
		}, []Issue{{Title: "The export to PDF fails", Summary: "The export to PDF fails"},
			{Title: "Search is slow on big spaces.", Summary: "Search is slow on big spaces."}}},
		{"one issue per message, repeated ones once", []Message{
			{Role: "user", Body: "Why is my site down?"},
			{Role: "user", Body: "Why is my site down?"},
		}, []Issue{{Title: "Why is my site down?", Summary: "Why is my site down?"}}},
		{"nothing problematic", []Message{{Role: "user", Body: "I love the new editor."}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Extract(tt.messages); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Extract = %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	long := "I cannot find the button that exports the whole documentation space as a single PDF file anywhere in the interface today"
	got := truncate(long, 40)
	if len([]rune(got)) > 40 || got[len(got)-3:] != "…" {
		t.Errorf("truncate = %q", got)
	}
}

func TestTermsFoldInflections(t *testing.T) {
	a, b := Terms("Logging in crashes the app"), Terms("the app crashed when I logged in")
	if fmt.Sprint(a) != "[login crash app]" || fmt.Sprint(b) != "[app crash login]" {
		t.Errorf("Terms = %v and %v", a, b)
	}
}

func TestCosine(t *testing.T) {
	c := NewCorpus([]string{"login page", "export page", "billing invoice"})
	a, b := c.Vector("login page"), c.Vector("login page")
	if s := Cosine(a, b); s < 0.999 || s > 1.001 {
		t.Errorf("identical texts: %v", s)
	}
	if s := Cosine(c.Vector("login page"), c.Vector("billing invoice")); s != 0 {
		t.Errorf("disjoint texts: %v", s)
	}
	if s := Cosine(c.Vector("login page"), c.Vector("export page")); s <= 0 || s >= 0.5 {
		t.Errorf("texts sharing a common word: %v", s)
	}
	if Cosine(Vector{}, a) != 0 {
		t.Error("empty vector")
	}
}

func TestCluster(t *testing.T) {
	texts := []string{
		"I cannot log in, the login page says my password is wrong",
		"Exporting a space to PDF fails with an error",
		"Login fails: password rejected although it is right",
		"The PDF export is broken, it fails every time",
		"How do I change the billing email on invoices?",
		"My password is not accepted at login",
	}
	c := NewCorpus(texts)
	vectors := make([]Vector, len(texts))
	for i, s := range texts {
		vectors[i] = c.Vector(s)
	}
	none := []int{-1, -1, -1, -1, -1, -1}
	got := Cluster(vectors, none, 0.2)
	if want := []int{0, 1, 0, 1, 2, 0}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Cluster = %v, want %v", got, want)
	}
	// Placed texts keep their cluster; a new login complaint joins theirs,
	// a new topic starts cluster 3.
	texts = append(texts, "Login: my password does not work", "The dark mode colors are hard to read")
	c = NewCorpus(texts)
	vectors = vectors[:0]
	for _, s := range texts {
		vectors = append(vectors, c.Vector(s))
	}
	got = Cluster(vectors, append(got, -1, -1), 0.2)
	if want := []int{0, 1, 0, 1, 2, 0, 0, 3}; !reflect.DeepEqual(got, want) {
		t.Fatalf("incremental Cluster = %v, want %v", got, want)
	}
	if i := Central(vectors, []int{0, 2, 5, 6}); i != 0 && i != 2 && i != 5 && i != 6 {
		t.Errorf("Central = %d", i)
	}
}

// A new cluster that grows as similar as an older one merges into it; an
// existing cluster never does (change requests name it).
func TestClusterMerges(t *testing.T) {
	r := 1 / math.Sqrt2
	vectors := []Vector{{"a": 1}, {"b": 1}, {"a": r, "b": r}}
	if got := Cluster(vectors, []int{-1, -1, -1}, 0.35); !reflect.DeepEqual(got, []int{0, 0, 0}) {
		t.Errorf("new clusters: %v, want one", got)
	}
	if got := Cluster(vectors, []int{0, 1, -1}, 0.35); !reflect.DeepEqual(got, []int{0, 1, 1}) {
		t.Errorf("existing clusters: %v, want both kept", got)
	}
	if got := Cluster(vectors, []int{-1, -1, -1}, 0.9); !reflect.DeepEqual(got, []int{0, 1, 2}) {
		t.Errorf("high threshold: %v, want three", got)
	}
}
