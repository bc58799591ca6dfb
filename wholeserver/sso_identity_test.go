package wholeserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crewjam/saml"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

// A SAML sign-in never borrows an identity: a provider signs people into its
// organization only, as the users bound to its NameIDs (or new ones), and
// their tokens reach that organization only. The identity providers are
// testIdP (sso_test.go), signing in-process with their own test keys.

// samlLinkLifetime is how long a link flow's request, then its code, works
// (graph's samlRequestLifetime).
const samlLinkLifetime = 10 * time.Minute

// addSAMLProvider configures idp as an active provider of org, by admin; it
// returns the provider's id and start URL.
func addSAMLProvider(t *testing.T, admin *servertest.User, org string, idp *testIdP) (id, startURL string) {
	t.Helper()
	p := admin.Do("POST", "/v1/orgs/"+org+"/saml", map[string]any{"label": "IdP", "entityID": idp.entityID(),
		"certificate": idp.keys.pem, "ssoURL": idp.ssoURL(), "defaultRole": "read"}).Expect(http.StatusCreated).JSON()
	return p["id"].(string), p["service"].(map[string]any)["startURL"].(string)
}

// ssoLogin is a sign-in's answer.
type ssoLogin struct{ Token, User, Email, Organization string }

// signIn signs in at startURL as the identity provider is set; it returns
// the status, the login (on 200) and the body.
func signIn(t *testing.T, startURL string) (int, ssoLogin, []byte) {
	t.Helper()
	acs, response := samlForm(t, startURL)
	status, body := postSAML(t, acs, response, "application/json")
	var login ssoLogin
	if status == http.StatusOK {
		if err := json.Unmarshal(body, &login); err != nil || login.Token == "" {
			t.Fatalf("sign-in answer: %s", body)
		}
	}
	return status, login, body
}

// session is the user a sign-in's token acts as.
func session(env *servertest.Env, login ssoLogin) *servertest.User {
	return &servertest.User{Env: env, ID: login.User, Email: login.Email, Token: login.Token}
}

// startLink starts a link flow of providerID as u: the URL to sign in at
// the identity provider with.
func startLink(t *testing.T, u *servertest.User, providerID string) string {
	t.Helper()
	return u.Do("POST", "/sso/saml/"+providerID+"/link", nil).Expect(http.StatusOK).String("url")
}

// answerLink signs in at the identity provider with a link flow's URL and
// posts its answer: the status, and the code it shows (on 200).
func answerLink(t *testing.T, authnURL string) (int, string) {
	t.Helper()
	acs, response := idpForm(t, authnURL)
	status, body := postSAML(t, acs, response, "application/json")
	var held struct{ LinkCode, Token string }
	if status == http.StatusOK && (json.Unmarshal(body, &held) != nil || held.LinkCode == "" || held.Token != "") {
		t.Fatalf("the answer to a link flow: %s", body)
	}
	return status, held.LinkCode
}

// confirmLink confirms a link flow's code as u.
func confirmLink(u *servertest.User, providerID, code string) *servertest.Response {
	return u.Do("POST", "/sso/saml/"+providerID+"/link/confirm", map[string]any{"code": code})
}

// linkIdentity links u to the identity the provider asserts, from u's session.
func linkIdentity(t *testing.T, u *servertest.User, providerID string) map[string]any {
	t.Helper()
	status, code := answerLink(t, startLink(t, u, providerID))
	if status != http.StatusOK {
		t.Fatalf("the answer to %s's link flow: %d", u.Email, status)
	}
	return confirmLink(u, providerID, code).Expect(http.StatusOK).JSON()
}

// tokensOf counts userID's API tokens.
func tokensOf(t *testing.T, env *servertest.Env, userID string) int {
	t.Helper()
	var n int
	if err := env.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM api_tokens WHERE user_id = ?`, userID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// orgIDs lists the ids of GET /v1/orgs as u.
func orgIDs(u *servertest.User) []string {
	var ids []string
	for _, o := range u.Do("GET", "/v1/orgs", nil).Expect(http.StatusOK).JSON()["items"].([]any) {
		ids = append(ids, o.(map[string]any)["id"].(string))
	}
	slices.Sort(ids)
	return ids
}

// An identity provider of an organization someone else runs cannot sign
// anyone in as an existing user, whatever it asserts.
func TestSAMLSignInNeverBorrowsAnIdentity(t *testing.T) {
	env := servertest.New(t)
	victim := env.NewUser("Victim")
	victimOrg := victim.NewOrg("Victim Corp")
	victimSpace := victim.Do("POST", "/v1/orgs/"+victimOrg+"/spaces", `{"title":"Secrets"}`).Expect(http.StatusCreated).String("id")
	// The victim signs in with their own organization's provider: an
	// identity bound there, which means nothing at any other provider.
	corp := newTestIdP(t)
	corpID, corpStart := addSAMLProvider(t, victim, victimOrg, corp)
	corp.setPerson("00u-victim", victim.Email)
	linkIdentity(t, victim, corpID)

	mallory := env.NewUser("Mallory")
	malloryOrg := mallory.NewOrg("Mallory Inc")
	evil := newTestIdP(t)
	_, evilStart := addSAMLProvider(t, mallory, malloryOrg, evil)
	victimTokens := tokensOf(t, env, victim.ID)
	upper := strings.ToUpper(victim.Email)

	for _, tc := range []struct {
		name          string
		nameID, email string
		want          int
	}{
		{"the victim's email, as NameID", victim.Email, victim.Email, http.StatusConflict},
		{"the victim's email in capitals", upper, upper, http.StatusConflict},
		{"the victim's email as attribute, another NameID", "mallory-1", victim.Email, http.StatusConflict},
		{"the victim's NameID at their provider, with their email", "00u-victim", victim.Email, http.StatusConflict},
		// The email free: a new user, who is not the victim.
		{"the victim's NameID at their provider, another email", "00u-victim", "decoy-1@evil.example", http.StatusOK},
		{"the victim's email as NameID, another email", victim.Email, "decoy-2@evil.example", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evil.setPerson(tc.nameID, tc.email)
			status, login, body := signIn(t, evilStart)
			if status != tc.want {
				t.Fatalf("sign-in: %d %s, want %d", status, body, tc.want)
			}
			if login.User == victim.ID || strings.Contains(string(body), victim.ID) {
				t.Fatalf("the sign-in yielded the victim: %s", body)
			}
			if n := tokensOf(t, env, victim.ID); n != victimTokens {
				t.Fatalf("the victim has %d tokens, had %d", n, victimTokens)
			}
			if status != http.StatusOK {
				if strings.Contains(string(body), `"token"`) {
					t.Fatalf("a refused sign-in answered a token: %s", body)
				}
				return
			}
			s := session(env, login)
			if me := s.Do("GET", "/v1/user", nil).Expect(http.StatusOK).JSON(); me["id"] == victim.ID || me["email"] != tc.email {
				t.Fatalf("the signed-in user: %v", me)
			}
			s.Do("GET", "/v1/orgs/"+victimOrg, nil).Expect(http.StatusNotFound)
			s.Do("GET", "/v1/orgs/"+victimOrg+"/spaces", nil).Expect(http.StatusNotFound)
			s.Do("GET", "/v1/spaces/"+victimSpace, nil).Expect(http.StatusNotFound)
			if ids := orgIDs(s); !slices.Equal(ids, []string{malloryOrg}) {
				t.Fatalf("the session's organizations: %v, want only %s", ids, malloryOrg)
			}
		})
	}
	// The victim joined nothing, and their own provider still signs them in.
	mallory.Do("GET", "/v1/orgs/"+malloryOrg+"/members/"+victim.ID, nil).Expect(http.StatusNotFound)
	var bound int
	if err := env.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM saml_identities WHERE user_id = ?`, victim.ID).Scan(&bound); err != nil || bound != 1 {
		t.Fatalf("the victim's identities: %d (%v), want their own provider's only", bound, err)
	}
	if status, login, body := signIn(t, corpStart); status != http.StatusOK || login.User != victim.ID || login.Organization != victimOrg {
		t.Fatalf("the victim's own sign-in: %d %s", status, body)
	}
}

// A sign-in whose NameID is bound signs in the bound user: a second sign-in
// with the NameID a first one created a user for gets that user, whatever
// email it asserts now.
func TestSAMLSignInSameNameIDSameUser(t *testing.T) {
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	idp := newTestIdP(t)
	_, start := addSAMLProvider(t, alice, org, idp)
	members := func() float64 {
		return alice.Do("GET", "/v1/orgs/"+org+"/members", nil).Expect(http.StatusOK).JSON()["count"].(float64)
	}

	for _, tc := range []struct {
		name               string
		nameID             string
		email, secondEmail string
	}{
		{"an email NameID", "erin@corp.example", "erin@corp.example", "erin@corp.example"},
		{"a persistent NameID", "00u-frank", "frank@corp.example", "frank@corp.example"},
		{"a persistent NameID whose email changed", "00u-gina", "gina@corp.example", "gina.new@corp.example"},
		{"a persistent NameID, no email the second time", "00u-hank", "hank@corp.example", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := members()
			idp.setPerson(tc.nameID, tc.email)
			status, first, body := signIn(t, start)
			if status != http.StatusOK || first.Email != tc.email {
				t.Fatalf("first sign-in: %d %s", status, body)
			}
			idp.setPerson(tc.nameID, tc.secondEmail)
			status, second, body := signIn(t, start)
			if status != http.StatusOK || second.User != first.User || second.Email != tc.email {
				t.Fatalf("second sign-in: %d %s, want user %s", status, body, first.User)
			}
			if n := members(); n != before+1 {
				t.Fatalf("members: %v, want %v", n, before+1)
			}
		})
	}
	// Another NameID asserting a bound user's email is not that user.
	idp.setPerson("00u-impostor", "frank@corp.example")
	if status, _, body := signIn(t, start); status != http.StatusConflict {
		t.Fatalf("another NameID with a user's email: %d %s, want 409", status, body)
	}
	// A transient NameID names nobody twice: refused.
	idp.set("ivan@corp.example", transientNameID)
	if status, _, body := signIn(t, start); status != http.StatusForbidden || !strings.Contains(string(body), "transient") {
		t.Fatalf("a transient NameID: %d %s, want 403", status, body)
	}
}

// The owner of an existing account links a provider from their own session:
// the link flow's answer shows a code, which they confirm with their token;
// the provider then signs them in. Nothing else links.
func TestSAMLLinkFlow(t *testing.T) {
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	idp := newTestIdP(t)
	pid, start := addSAMLProvider(t, alice, org, idp)

	// Bob has an account: the provider cannot sign him in until he links it.
	bob := env.NewUser("Bob")
	idp.setPerson("00u-bob", bob.Email)
	if status, _, body := signIn(t, start); status != http.StatusConflict {
		t.Fatalf("sign-in before linking: %d %s, want 409", status, body)
	}
	linked := linkIdentity(t, bob, pid)
	if linked["user"] != bob.ID || linked["nameID"] != "00u-bob" || linked["organization"] != org || linked["provider"] != pid {
		t.Fatalf("linked: %v", linked)
	}
	for range 2 {
		status, login, body := signIn(t, start)
		if status != http.StatusOK || login.User != bob.ID || login.Organization != org {
			t.Fatalf("sign-in after linking: %d %s, want bob %s", status, body, bob.ID)
		}
	}
	if m := alice.Do("GET", "/v1/orgs/"+org+"/members/"+bob.ID, nil).Expect(http.StatusOK).JSON(); m["sso"] != true || m["role"] != "read" {
		t.Fatalf("bob as a member: %v", m)
	}

	// Links that must not bind. Each asserts its own identity; afterwards a
	// sign-in with it is not the user who started the link.
	carol := env.NewUser("Carol")
	mallory := env.NewUser("Mallory")
	for _, tc := range []struct {
		name      string
		starter   *servertest.User // starts the link, with their token
		nameID    string           // the identity the browser signs in as at the provider
		wantHeld  int              // the ACS's answer
		confirmer *servertest.User
		code      func(shown string) string
		advance   time.Duration
		want      int // the confirmation's
	}{
		// Mallory sends Carol her link URL; Carol's provider session answers
		// it. The code is Carol's browser's: Mallory has none.
		{name: "started by someone else, who lacks the code", starter: mallory, nameID: "00u-carol-1", wantHeld: http.StatusOK,
			confirmer: mallory, code: func(string) string { return "guessed" }, want: http.StatusForbidden},
		{name: "confirmed with another user's token", starter: carol, nameID: "00u-carol-2", wantHeld: http.StatusOK,
			confirmer: mallory, want: http.StatusForbidden},
		{name: "confirmed too late", starter: carol, nameID: "00u-carol-3", wantHeld: http.StatusOK,
			confirmer: carol, advance: samlLinkLifetime + time.Second, want: http.StatusForbidden},
		{name: "an empty code", starter: carol, nameID: "00u-carol-4", wantHeld: http.StatusOK,
			confirmer: carol, code: func(string) string { return "" }, want: http.StatusBadRequest},
		{name: "another user's identity", starter: carol, nameID: "00u-bob", wantHeld: http.StatusConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idp.setPerson(tc.nameID, "")
			status, code := answerLink(t, startLink(t, tc.starter, pid))
			if status != tc.wantHeld {
				t.Fatalf("the link flow's answer: %d, want %d", status, tc.wantHeld)
			}
			if status == http.StatusOK {
				if tc.code != nil {
					code = tc.code(code)
				}
				env.Clock.Advance(tc.advance)
				confirmLink(tc.confirmer, pid, code).Expect(tc.want).ErrorMessage()
			}
			idp.setPerson(tc.nameID, tc.nameID+"@new.example")
			status, login, body := signIn(t, start)
			if status != http.StatusOK || login.User == tc.starter.ID || (tc.confirmer != nil && login.User == tc.confirmer.ID) {
				t.Fatalf("a sign-in as the identity afterwards: %d %s", status, body)
			}
		})
	}

	// A code works once, for its user only: another's attempt does not use it up.
	idp.setPerson("00u-carol", carol.Email)
	_, code := answerLink(t, startLink(t, carol, pid))
	confirmLink(mallory, pid, code).Expect(http.StatusForbidden)
	if got := confirmLink(carol, pid, code).Expect(http.StatusOK).JSON(); got["user"] != carol.ID {
		t.Fatalf("carol's link: %v", got)
	}
	confirmLink(carol, pid, code).Expect(http.StatusForbidden)
	// One identity per user at a provider.
	idp.setPerson("00u-carol-again", carol.Email)
	if status, _ := answerLink(t, startLink(t, carol, pid)); status != http.StatusConflict {
		t.Fatalf("a second identity for carol: %d, want 409", status)
	}
	// The link flow needs a token, of an active provider.
	env.Do("POST", "/sso/saml/"+pid+"/link", "", nil).Expect(http.StatusUnauthorized)
	carol.Do("POST", "/sso/saml/nope/link", nil).Expect(http.StatusNotFound)
	confirmLink(carol, "nope", "x").Expect(http.StatusNotFound)

	// A sign-in's session links its own organization's providers only.
	other := env.NewUser("Olga")
	otherOrg := other.NewOrg("Other")
	otherIdP := newTestIdP(t)
	otherID, otherStart := addSAMLProvider(t, other, otherOrg, otherIdP)
	otherIdP.setPerson("00u-dave", "dave@other.example")
	_, dave, _ := signIn(t, otherStart)
	session(env, dave).Do("POST", "/sso/saml/"+pid+"/link", nil).Expect(http.StatusForbidden).ErrorMessage()
	session(env, dave).Do("POST", "/sso/saml/"+otherID+"/link", nil).Expect(http.StatusOK)
}

// A sign-in's token reaches the provider's organization and nothing else,
// over REST and GraphQL, from the database and from the caller cache.
func TestSAMLSessionReachesItsOrganizationOnly(t *testing.T) {
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	idp := newTestIdP(t)
	pid, start := addSAMLProvider(t, alice, org, idp)
	orgSpace := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Handbook"}`).Expect(http.StatusCreated).String("id")

	// Bob is a member of Acme and owns another organization.
	bob := env.NewUser("Bob")
	bob.Join(org, "edit")
	bobOrg := bob.NewOrg("Bob's")
	bobSpace := bob.Do("POST", "/v1/orgs/"+bobOrg+"/spaces", `{"title":"Private"}`).Expect(http.StatusCreated).String("id")
	open := alice.NewOrg("Open to example.com")
	alice.Do("PATCH", "/v1/orgs/"+open, `{"emailDomains":["example.com"]}`).Expect(http.StatusOK)
	invite := alice.Do("POST", "/v1/orgs/"+open+"/link-invites", `{"role":"edit"}`).Expect(http.StatusCreated).String("id")
	idp.setPerson("00u-bob", bob.Email)
	linkIdentity(t, bob, pid)
	status, login, body := signIn(t, start)
	if status != http.StatusOK || login.User != bob.ID {
		t.Fatalf("bob's sign-in: %d %s", status, body)
	}
	s := session(env, login)

	for _, tc := range []struct {
		name         string
		method, path string
		body         any
		want         int
	}{
		{"its organization", "GET", "/v1/orgs/" + org, nil, http.StatusOK},
		{"its organization's spaces", "GET", "/v1/orgs/" + org + "/spaces", nil, http.StatusOK},
		{"a space of its organization", "GET", "/v1/spaces/" + orgSpace, nil, http.StatusOK},
		{"another organization of the user", "GET", "/v1/orgs/" + bobOrg, nil, http.StatusNotFound},
		{"that organization's spaces", "GET", "/v1/orgs/" + bobOrg + "/spaces", nil, http.StatusNotFound},
		{"that organization's members", "GET", "/v1/orgs/" + bobOrg + "/members", nil, http.StatusNotFound},
		{"a space of that organization", "GET", "/v1/spaces/" + bobSpace, nil, http.StatusNotFound},
		{"changing that organization", "PATCH", "/v1/orgs/" + bobOrg, `{"title":"Taken"}`, http.StatusNotFound},
		{"creating an organization", "POST", "/v1/orgs", `{"title":"Elsewhere"}`, http.StatusForbidden},
		{"joining an organization by email domain", "POST", "/v1/orgs/" + open + "/join", nil, http.StatusForbidden},
		{"joining an organization with an invite", "POST", "/v1/orgs/" + open + "/invites/" + invite, nil, http.StatusForbidden},
		{"the organizations of its email domain", "GET", "/v1/email-domains/example.com/orgs", nil, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 2 { // the second answer may come from the caller cache
				s.Do(tc.method, tc.path, tc.body).Expect(tc.want)
			}
		})
	}
	for range 2 {
		if ids := orgIDs(s); !slices.Equal(ids, []string{org}) {
			t.Fatalf("GET /v1/orgs with the session: %v, want only %s", ids, org)
		}
	}
	if orgs := s.Do("GET", "/v1/email-domains/example.com/orgs", nil).Expect(http.StatusOK).JSON()["organizations"].([]any); len(orgs) != 0 {
		t.Fatalf("the session sees organizations of its email domain: %v", orgs)
	}
	// GraphQL likewise.
	out := s.GraphQL(`query($other: ID!) { organizations { items { id } } other: organization(id: $other) { id } }`, map[string]any{"other": bobOrg})
	var data struct {
		Organizations struct{ Items []struct{ ID string } }
		Other         *struct{ ID string }
	}
	if err := json.Unmarshal(out.Data, &data); err != nil || len(data.Organizations.Items) != 1 || data.Organizations.Items[0].ID != org || data.Other != nil ||
		len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "NOT_FOUND" {
		t.Fatalf("GraphQL with the session: %s %v", out.Data, out.Errors)
	}
	if out := s.GraphQL(`mutation { createOrganization(input: {title: "Elsewhere"}) { id } }`, nil); len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "FORBIDDEN" {
		t.Fatalf("createOrganization with the session: %s %v", out.Data, out.Errors)
	}
	// Bob's own token still reaches both, and joins.
	if ids, want := orgIDs(bob), []string{org, bobOrg}; !slices.Equal(ids, sorted(want)) {
		t.Fatalf("GET /v1/orgs with bob's token: %v", ids)
	}
	bob.Do("GET", "/v1/spaces/"+bobSpace, nil).Expect(http.StatusOK)
	bob.Do("POST", "/v1/orgs/"+open+"/join", nil).Expect(http.StatusNoContent)
	// Another server process (its own caller cache) confines the session too.
	other := env.AnotherProcess()
	other.Do("GET", "/v1/orgs/"+bobOrg, login.Token, nil).Expect(http.StatusNotFound)
	other.Do("GET", "/v1/orgs/"+org, login.Token, nil).Expect(http.StatusOK)
}

// transientNameID makes the assertion's NameID transient.
func transientNameID(r *saml.IdpAuthnRequest) {
	if r.Assertion != nil {
		r.Assertion.Subject.NameID.Format = string(saml.TransientNameIDFormat)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
