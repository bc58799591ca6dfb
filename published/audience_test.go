package published_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// A share-link site opens to the keys of its active share links and to
// its own: a link made inactive or deleted stops opening it on the next
// request, for those who kept its key in a cookie too.
func TestShareLinksOpenTheirSiteWhileActive(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "share-link")
	own := f.publish()
	link := f.admin.Do("POST", f.sitePath("/share-links"), map[string]any{"name": "Partners"}).Expect(http.StatusCreated).JSON()
	linkURL := link["urls"].(map[string]any)["published"].(string)
	if !strings.Contains(linkURL, "?share=") || strings.Contains(linkURL, f.shareKey()) {
		t.Fatalf("the link's address %q carries no key of its own", linkURL)
	}
	linkPath := f.sitePath("/share-links/" + link["id"].(string))
	base := strings.SplitN(linkURL, "?", 2)[0]

	partner := newVisitor(t)
	partner.get(linkURL).expect(t, http.StatusOK, "Welcome to")
	partner.get(base+"/setup").expect(t, http.StatusOK, "Install")
	newVisitor(t).get(own).expect(t, http.StatusOK, "Welcome to") // the site's own key still opens it

	f.admin.Do("PATCH", linkPath, map[string]any{"active": false}).Expect(http.StatusOK)
	partner.get(base+"/setup").expect(t, http.StatusNotFound)
	newVisitor(t).get(linkURL).expect(t, http.StatusNotFound)
	f.admin.Do("PATCH", linkPath, map[string]any{"active": true}).Expect(http.StatusOK)
	newVisitor(t).get(linkURL).expect(t, http.StatusOK)
	f.admin.Do("DELETE", linkPath, nil).Expect(http.StatusResetContent)
	partner.get(base+"/setup").expect(t, http.StatusNotFound)
	newVisitor(t).get(linkURL).expect(t, http.StatusNotFound)
}

// token signs claims with key, as a site owner's login backend does.
func token(t *testing.T, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A visitor-auth site opens to a token signed with its private key, kept
// as the visitor's session until it expires or the key is regenerated;
// every other token is refused, and a refused visitor goes to the site's
// login page (fallbackURL) when it has one.
func TestVisitorAuthSiteOpensToSignedTokens(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "visitor-auth")
	base := f.publish()
	authPath := f.sitePath("/publishing/auth")
	key := f.admin.Do("GET", authPath, nil).Expect(http.StatusOK).String("privateKey")
	now := f.env.Clock.Now()
	valid := jwt.MapClaims{"exp": now.Add(time.Hour).Unix(), "plan": "pro"}

	// Every token that is not the site's, valid, is refused alike.
	other := newReaderFixture(t, "visitor-auth")
	otherKey := other.admin.Do("GET", other.sitePath("/publishing/auth"), nil).Expect(http.StatusOK).String("privateKey")
	good := token(t, jwt.SigningMethodHS256, []byte(key), valid)
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"exp":4102444800,"plan":"enterprise"}`)) + "." + parts[2]
	unsigned, _ := jwt.NewWithClaims(jwt.SigningMethodNone, valid).SignedString(jwt.UnsafeAllowNoneSignatureType)
	for name, tok := range map[string]string{
		"none":              "",
		"expired":           token(t, jwt.SigningMethodHS256, []byte(key), jwt.MapClaims{"exp": now.Add(-time.Hour).Unix()}),
		"without an expiry": token(t, jwt.SigningMethodHS256, []byte(key), jwt.MapClaims{"plan": "pro"}),
		"another key":       token(t, jwt.SigningMethodHS256, []byte("not the site's key"), valid),
		"another site's":    token(t, jwt.SigningMethodHS256, []byte(otherKey), valid),
		"alg none":          unsigned,
		"HS512":             token(t, jwt.SigningMethodHS512, []byte(key), valid),
		"tampered claims":   tampered,
		"a member's token":  f.admin.Token,
		"malformed":         "a.b.c",
		"oversized":         strings.Repeat("a", 20_000),
	} {
		p := newVisitor(t).get(base + "?jwt_token=" + url.QueryEscape(tok))
		if p.status != http.StatusUnauthorized || strings.Contains(p.body, "Welcome to") {
			t.Errorf("%s: %d %.200s", name, p.status, p.body)
		}
	}

	// A valid token: kept as the session, and the address without it.
	reader := newVisitor(t)
	arrived := reader.get(base + "/setup?jwt_token=" + good)
	if arrived.status != http.StatusFound || arrived.header.Get("Location") != strings.TrimPrefix(base, f.env.URL)+"/setup" {
		t.Fatalf("with a token: %d, Location %q", arrived.status, arrived.header.Get("Location"))
	}
	if c := arrived.header.Get("Set-Cookie"); !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Lax") {
		t.Errorf("session cookie %q", c)
	}
	reader.get(base+"/setup").expect(t, http.StatusOK, "Install")
	reader.get(base+"/setup/advanced").expect(t, http.StatusOK, "Deep")

	// The site's login page, told where the visitor was going.
	f.admin.Do("PATCH", authPath, map[string]any{"backend": "custom", "fallbackURL": "https://login.acme.example/docs"}).Expect(http.StatusOK)
	p := newVisitor(t).get(base + "/setup")
	if p.status != http.StatusFound || !strings.HasPrefix(p.header.Get("Location"), "https://login.acme.example/docs?location=") {
		t.Errorf("refused with a fallback: %d %q", p.status, p.header.Get("Location"))
	}

	// A new key ends every session at once.
	f.admin.Do("POST", authPath+"/regenerate", nil).Expect(http.StatusOK)
	if p := reader.get(base + "/setup"); p.status != http.StatusFound || strings.Contains(p.body, "Install") {
		t.Errorf("after a new key: %d", p.status)
	}
	// And the token expires with the session.
	newKey := f.admin.Do("GET", authPath, nil).Expect(http.StatusOK).String("privateKey")
	short := token(t, jwt.SigningMethodHS256, []byte(newKey), jwt.MapClaims{"exp": now.Add(10 * time.Minute).Unix()})
	later := newVisitor(t)
	later.get(base + "?jwt_token=" + short)
	later.get(base).expect(t, http.StatusOK)
	f.env.Clock.Advance(20 * time.Minute)
	if p := later.get(base); p.status == http.StatusOK {
		t.Error("an expired session still opens the site")
	}
}

// Signed claims decide conditions as unsigned ones do, and cannot be
// forged: on a visitor-auth site, a section for one plan is there for the
// tokens that say so only.
func TestSignedClaimsDecideConditions(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "visitor-auth")
	pro := f.newSpace("Pro features")
	section := f.admin.Do("POST", f.sitePath("/sections"), map[string]any{"spaceId": pro, "title": "Pro"}).Expect(http.StatusCreated).String("id")
	f.admin.Do("PATCH", f.sitePath("/sections/"+section), map[string]any{"path": "pro", "condition": `visitor.claims.plan === "pro"`}).
		Expect(http.StatusOK)
	base := f.publish()
	key := f.admin.Do("GET", f.sitePath("/publishing/auth"), nil).Expect(http.StatusOK).String("privateKey")
	exp := f.env.Clock.Now().Add(time.Hour).Unix()

	free := newVisitor(t)
	free.get(base + "?jwt_token=" + token(t, jwt.SigningMethodHS256, []byte(key), jwt.MapClaims{"exp": exp, "plan": "free"}))
	free.get(base).expect(t, http.StatusOK).lacks(t, ">Pro</a>")
	free.get(base+"/pro").expect(t, http.StatusNotFound)
	// An unsigned claim does not make a visitor pro.
	free.get(base+"/pro?visitor.plan=pro").expect(t, http.StatusNotFound)

	paying := newVisitor(t)
	paying.get(base + "?jwt_token=" + token(t, jwt.SigningMethodHS256, []byte(key), jwt.MapClaims{"exp": exp, "plan": "pro"}))
	paying.get(base).expect(t, http.StatusOK, ">Pro</a>")
	paying.get(base+"/pro").expect(t, http.StatusOK, "Welcome to <strong>Pro features</strong>")
}
