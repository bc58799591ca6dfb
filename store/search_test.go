package store_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/pgtest"
)

// A word in more sections than a search ranks: the answer still holds the
// best sections (those whose heading has the word, stored after thousands
// whose text has it), is cut at MaxSearchHits, best first, and comes only
// from the searched spaces' current pages, never from another space,
// another revision or another organization's copy of the same text.
func TestSearchCommonWord(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDB(t)
	ctx := context.Background()
	common := 3 * store.MaxSearchCandidates
	itoa := strconv.Itoa
	for _, q := range []string{
		`INSERT INTO organizations (id, title, created_at, updated_at) VALUES ('mine', 'Mine', now(), now()), ('other', 'Other', now(), now())`,
		`INSERT INTO spaces (id, organization_id, title, revision_id, created_at, updated_at) VALUES
			('a', 'mine', 'A', 'ra', now(), now()), ('b', 'mine', 'B', 'rb', now(), now()),
			('hidden', 'mine', 'Hidden', 'rh', now(), now()), ('theirs', 'other', 'Theirs', 'rt', now(), now())`,
		`INSERT INTO revisions (id, organization_id, space_id, type, created_at) VALUES
			('ra0', 'mine', 'a', 'edits', now()), ('ra', 'mine', 'a', 'edits', now()), ('rb', 'mine', 'b', 'edits', now()),
			('rh', 'mine', 'hidden', 'edits', now()), ('rt', 'other', 'theirs', 'edits', now())`,
		// Thousands of sections with the word in their text, then a few
		// with it in their heading; "unique7" is in one section only.
		`INSERT INTO page_bodies (organization_id, sha256, markdown)
			SELECT o, 't' || i, 'x' FROM generate_series(1, ` + itoa(common) + `) i, unnest(ARRAY['mine', 'other']) o`,
		`INSERT INTO body_sections (organization_id, body_sha256, position, anchor, heading, body)
			SELECT o, 't' || i, 0, '', '', 'Some tea and words, unique' || i FROM generate_series(1, ` + itoa(common) + `) i, unnest(ARRAY['mine', 'other']) o`,
		`INSERT INTO page_bodies (organization_id, sha256, markdown)
			SELECT o, 'h' || i, 'x' FROM generate_series(1, 5) i, unnest(ARRAY['mine', 'other']) o`,
		`INSERT INTO body_sections (organization_id, body_sha256, position, anchor, heading, body)
			SELECT o, 'h' || i, 0, 'tea-time', 'Tea time', 'Nothing else.' FROM generate_series(1, 5) i, unnest(ARRAY['mine', 'other']) o`,
		`INSERT INTO page_bodies (organization_id, sha256, markdown) VALUES ('mine', 'secret', 'x'), ('mine', 'old', 'x')`,
		`INSERT INTO body_sections (organization_id, body_sha256, position, anchor, heading, body) VALUES
			('mine', 'secret', 0, 'tea', 'Tea', 'Tea tea tea.'), ('mine', 'old', 0, 'tea', 'Tea', 'Tea tea tea.')`,
		// a shows the first half, b the rest and the headings; a's previous
		// revision showed them all, and a section of its own; the hidden
		// space and the other organization show theirs.
		`INSERT INTO revision_pages (organization_id, revision_id, page_id, position, type, title, slug, body_sha256, created_at, updated_at)
			SELECT 'mine', CASE WHEN i <= ` + itoa(common/2) + ` THEN 'ra' ELSE 'rb' END, 'p' || i, i, 'document', 'Page', 'p', 't' || i, now(), now()
			FROM generate_series(1, ` + itoa(common) + `) i`,
		`INSERT INTO revision_pages (organization_id, revision_id, page_id, position, type, title, slug, body_sha256, created_at, updated_at)
			SELECT 'mine', 'rb', 'ph' || i, i, 'document', 'Page', 'p', 'h' || i, now(), now() FROM generate_series(1, 5) i`,
		`INSERT INTO revision_pages (organization_id, revision_id, page_id, position, type, title, slug, body_sha256, created_at, updated_at)
			SELECT 'mine', 'ra0', 'old' || i, i, 'document', 'Page', 'p', 't' || i, now(), now() FROM generate_series(1, ` + itoa(common) + `) i`,
		`INSERT INTO revision_pages (organization_id, revision_id, page_id, position, type, title, slug, body_sha256, created_at, updated_at) VALUES
			('mine', 'ra0', 'oldtea', 0, 'document', 'Tea', 'p', 'old', now(), now()),
			('mine', 'rh', 'secret', 0, 'document', 'Tea', 'p', 'secret', now(), now())`,
		`INSERT INTO revision_pages (organization_id, revision_id, page_id, position, type, title, slug, body_sha256, created_at, updated_at)
			SELECT 'other', 'rt', 'p' || i, i, 'document', 'Tea', 'p', b, now(), now()
			FROM unnest(ARRAY['h1', 'h2', 'h3', 'h4', 'h5', 't1', 't2']) WITH ORDINALITY AS x(b, i)`,
		`ANALYZE`,
	} {
		if _, err := db.Pool.Exec(ctx, q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}

	// The organization has three live spaces: a search of two reads its
	// candidates the wide way, a search of one the narrow way (through
	// the space's pages); both answer alike.
	for _, c := range []struct {
		spaces []string
		narrow bool
	}{
		{[]string{"a", "b"}, false},
		{[]string{"b"}, true},
	} {
		if got := store.NarrowSearch(len(c.spaces), 3); got != c.narrow {
			t.Fatalf("%v: narrow %v, want %v", c.spaces, got, c.narrow)
		}
		hits, err := store.Search(ctx, db, "mine", c.spaces, "tea")
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != store.MaxSearchHits {
			t.Fatalf("%v: %d hits, want %d", c.spaces, len(hits), store.MaxSearchHits)
		}
		for i, h := range hits {
			if i < 5 {
				if h.SpaceID != "b" || !strings.HasPrefix(h.PageID, "ph") || store.StringOf(h.Anchor) != "tea-time" || h.Heading != "Tea time" {
					t.Errorf("%v: hit %d is %+v, want a section headed Tea time", c.spaces, i, h)
				}
			} else if !strings.HasPrefix(h.Body, "Some tea") {
				t.Errorf("%v: hit %d is %+v, want a section whose text has the word", c.spaces, i, h)
			}
			if !slices.Contains(c.spaces, h.SpaceID) || strings.HasPrefix(h.PageID, "old") {
				t.Errorf("%v: hit %d is %+v: not a page of a searched space's current content", c.spaces, i, h)
			}
			if i > 0 && h.Rank > hits[i-1].Rank {
				t.Errorf("%v: hit %d ranks %v, above the hit before it (%v)", c.spaces, i, h.Rank, hits[i-1].Rank)
			}
		}
	}

	// A word of one section: found, as before.
	for _, c := range []struct {
		spaces []string
		query  string
		want   []string
	}{
		{[]string{"a", "b"}, "unique7", []string{"a/p7"}},
		{[]string{"a", "b"}, "unique" + itoa(common), []string{"b/p" + itoa(common)}},
		{[]string{"a"}, "time", nil},
		{[]string{"b"}, "time", []string{"b/ph1", "b/ph2", "b/ph3", "b/ph4", "b/ph5"}},
		{[]string{"a"}, "unique7", []string{"a/p7"}},
		{[]string{"b"}, "unique7", nil},
		{[]string{"hidden"}, "tea", []string{"hidden/secret", "hidden/secret"}}, // its title and its section
	} {
		hits, err := store.Search(ctx, db, "mine", c.spaces, c.query)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.SpaceID+"/"+h.PageID)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%v %q: %v, want %v", c.spaces, c.query, got, c.want)
		}
	}
}

func TestSplitSections(t *testing.T) {
	got := store.SplitSections("Intro.\n\n## Install the CLI\n\nRun it.\n\n```\n## not a heading\n```\n\n## Usage <a href=\"#use\" id=\"use\"></a>\n\nUse it.\n")
	want := []store.Section{
		{Position: 0, Body: "Intro."},
		{Position: 1, Anchor: "install-the-cli", Heading: "Install the CLI", Body: "Run it.\n\n```\n## not a heading\n```"},
		{Position: 2, Anchor: "use", Heading: "Usage", Body: "Use it."},
	}
	if len(got) != len(want) {
		t.Fatalf("%d sections: %+v", len(got), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("section %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
