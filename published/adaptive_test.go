package published_test

import (
	"net/http"
	"net/url"
	"testing"
)

// Adaptive content: a section or site space whose condition is false for
// a visitor is absent from everything that visitor gets (its tab, its
// variant, its addresses), whoever else saw it before; unsigned claims
// count only when the site's visitor schema declares them, and only on a
// site with adaptive content on.
func TestConditionsDecideWhatEachVisitorSees(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	beta := f.newSpace("Beta guides")
	legacy := f.newSpace("Legacy guides")
	f.admin.Do("POST", f.sitePath("/sections"), map[string]any{"spaceId": beta, "title": "Beta program"}).Expect(http.StatusCreated)
	var betaSection, docsSection string
	for _, s := range f.admin.Do("GET", f.sitePath("/sections"), nil).Expect(http.StatusOK).JSON()["items"].([]any) {
		m := s.(map[string]any)
		if m["title"] == "Beta program" {
			betaSection = m["id"].(string)
		} else {
			docsSection = m["id"].(string)
		}
	}
	if betaSection == "" || docsSection == "" {
		t.Fatal("the site has no two sections")
	}
	f.admin.Do("PATCH", f.sitePath("/sections/"+betaSection), map[string]any{"path": "beta",
		"condition": "visitor.claims.unsigned.beta === true"}).Expect(http.StatusOK)
	// A variant of the main section that no visitor's claims open.
	legacySS := f.admin.Do("POST", f.sitePath("/site-spaces"), map[string]any{"spaceId": legacy, "sectionId": docsSection}).
		Expect(http.StatusCreated).String("id")
	f.admin.Do("PATCH", f.sitePath("/site-spaces/"+legacySS), map[string]any{"path": "legacy",
		"condition": "visitor.claims.unsigned.legacy === true && false"}).Expect(http.StatusOK)
	f.declareUnsignedClaim("beta", false)
	base := f.publish()

	// Adaptive content is off: the claim is not taken.
	newVisitor(t).get(base+"/beta?visitor.beta=true").expect(t, http.StatusNotFound).lacks(t, "Beta program")
	f.declareUnsignedClaim("beta", true)

	anonymous := newVisitor(t)
	for round := range 2 { // the second round from the cache
		anonymous.get(base).expect(t, http.StatusOK, "Welcome to <strong>Guides</strong>").lacks(t, "Beta program", "Legacy guides")
		anonymous.get(base+"/beta").expect(t, http.StatusNotFound)
		anonymous.get(base+"/legacy").expect(t, http.StatusNotFound)

		tester := newVisitor(t)
		tester.get(base+"?visitor.beta=true").expect(t, http.StatusOK, ">Beta program</a>").lacks(t, "Legacy guides")
		tester.get(base+"/beta?visitor.beta=true").expect(t, http.StatusOK, "Welcome to <strong>Beta guides</strong>")
		// The claim from the site's own cookie, as GitBook's scripts set it.
		cookie := newVisitor(t)
		u, _ := url.Parse(base)
		cookie.client.Jar.SetCookies(u, []*http.Cookie{{Name: "gitbook-visitor-public", Value: url.PathEscape(`{"beta":true}`), Path: "/"}})
		cookie.get(base+"/beta").expect(t, http.StatusOK, "Welcome to <strong>Beta guides</strong>")
		// A claim the schema does not declare, or of another type, counts
		// for nothing.
		newVisitor(t).get(base+"/beta?visitor.legacy=true&visitor.beta=yes").expect(t, http.StatusNotFound)
		newVisitor(t).get(base+"/legacy?visitor.legacy=true").expect(t, http.StatusNotFound)
		if round == 0 {
			t.Log("again, from the pages kept")
		}
	}
}

// declareUnsignedClaim declares the boolean unsigned claim name in the
// site's visitor schema and turns adaptive content on (when on) or off.
func (f *readerFixture) declareUnsignedClaim(name string, on bool) {
	f.t.Helper()
	f.admin.Do("PUT", f.sitePath("/adaptive-schema"), map[string]any{"jsonSchema": map[string]any{"type": "object", "additionalProperties": false,
		"properties": map[string]any{"unsigned": map[string]any{"type": "object", "description": "Unsigned claims of the site visitor.",
			"additionalProperties": false, "properties": map[string]any{name: map[string]any{"type": "boolean", "description": "A claim"}}}}}}).
		Expect(http.StatusOK)
	f.admin.Do("PATCH", f.sitePath(), map[string]any{"adaptiveContent": map[string]any{"enabled": on}}).Expect(http.StatusOK)
}
