package graph

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/docsapi/docsapi/graph/internal/adaptive"
	"github.com/docsapi/docsapi/graph/internal/condition"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Visitors of published sites.
//
// A visitor is the reader of one published site: someone without an API
// token who opens the site at its published address (the reader, package
// published) with what the site's audience asks for: nothing for a public
// or unlisted site, a share link's key for a share-link site, a token
// signed with the site's key for a visitor-auth site. It is a caller kind
// beside users, decided here: the same resolvers answer it, and the read
// rules (visitorRules below, applied by authorize.go's viewer) hand it the
// published, visible parts of its site (the site; its sections, groups and
// site spaces whose conditions hold for it; the spaces those publish, their
// live revisions with their pages and files) and nothing else. Everything
// else is not found, as for any caller. A visitor never holds a member's
// identity: CallerFrom answers ErrUnauthenticated for it, so a resolver
// written for members refuses it, and an API token is never a visitor's
// proof.

// Visitor is an admitted visitor of one published site.
type Visitor struct {
	site *store.Site
	// proof is how the visitor was admitted.
	proof VisitorProof
	// claims are what conditions see as visitor.claims: the signed claims
	// of the visitor's token, with the unsigned ones the site's visitor
	// schema declares under "unsigned".
	claims map[string]any
	// outcomes memoizes conditions' outcomes, by source: a tree asks the
	// same condition of each of its site spaces.
	outcomes sync.Map
	log      func(msg string, args ...any)

	// What admitted the visitor, for a visitor API token to record
	// (visitor_token.go): the share key and its share link ("" for the
	// site's own key), the visitor key the signed claims were verified
	// with, and when the token of those claims expires (zero: none).
	shareKey, shareLink string
	visitorKey          string
	expires             time.Time
	// budgetKey is whose rate budget the visitor draws on: its API
	// token's, when it came with one.
	budgetKey string
}

// VisitorProof is what admitted a visitor.
type VisitorProof string

// The proofs a visitor may come with.
const (
	// ProofAudience: the site is public or unlisted; nothing is needed.
	ProofAudience VisitorProof = "audience"
	// ProofShareKey: a share link's key (or the site's own share key).
	ProofShareKey VisitorProof = "share-key"
	// ProofToken: a token signed with the site's visitor key.
	ProofToken VisitorProof = "token"
)

// Site is the site the visitor reads.
func (v *Visitor) Site() *store.Site { return v.site }

// Proof is what admitted the visitor.
func (v *Visitor) Proof() VisitorProof { return v.proof }

// VisitorRequest is what a request to a published address brings: which
// site it names, and the visitor's proofs and claims, as the reader found
// them in its address, query and cookies. Nothing in it is trusted yet.
type VisitorRequest struct {
	// The site, by its custom hostname (Hostname, lower case without a
	// port), or by its organization and its basename or id.
	Hostname       string
	OrganizationID string
	SiteName       string
	// ShareKey is a share key given with the request.
	ShareKey string
	// Token is a visitor token of a visitor-auth site: given as
	// ?jwt_token= or kept in the visitor's session.
	Token string
	// AdaptiveToken is a token of signed claims for adaptive content on a
	// site of another audience (GitBook's gitbook-visitor-token cookie).
	AdaptiveToken string
	// Unsigned are unsigned claims offered for adaptive content (a cookie's
	// JSON, visitor.<claim> query parameters); only those the site's
	// visitor schema declares under "unsigned" are kept, as it types them.
	Unsigned map[string]any
}

// maxVisitorSecret bounds a share key or token: anything longer is no
// proof (and is not looked up).
const maxVisitorSecret = 8 << 10

// errNoSite is what every address that leads to no published site the
// visitor may read answers: one that never existed, one not published, one
// whose audience the visitor is not.
var errNoSite = NotFound("site")

// AdmitVisitor decides who a request to a published address is: the
// visitor of the site it names, if that site is published and the request
// satisfies its audience. It answers NotFound when the address names no
// published site, or one whose share key the request lacks (as an address
// that never existed), and a *VisitorAuthRequired for a visitor-auth site
// without a valid token.
func (r *Resolver) AdmitVisitor(ctx context.Context, req VisitorRequest) (*Visitor, error) {
	site, err := r.publishedSite(ctx, req)
	if err != nil {
		return nil, err
	}
	return r.admit(ctx, site, requestProofs(req))
}

// visitorProofs are what a visitor brings, checked against its site as the
// site is now: what a request to a published address carries
// (requestProofs), or what a visitor API token recorded of the proofs that
// admitted its visitor (visitor_token.go), so that one admits the same
// visitor, or none once they no longer hold.
type visitorProofs interface {
	// shareKey is the share key that opens share-link site s now, and the
	// share link it is ("" for the site's own key); "" when none does.
	shareKey(ctx context.Context, r *Resolver, s *store.Site) (key, link string, err error)
	// visitorToken is the signed claims of a visitor token valid for the
	// visitor key of auth now, with when that token expires (zero: never),
	// or why there are none.
	visitorToken(r *Resolver, auth *store.SitePublishingAuth) (map[string]any, time.Time, error)
	// offersSignedClaims tells whether there are signed claims for adaptive
	// content to check (adaptiveClaims).
	offersSignedClaims() bool
	// adaptiveClaims is visitorToken on a site of another audience: the
	// signed claims of adaptive content. Claims that do not verify give
	// none to a request (nil, and no error); a token whose claims no
	// longer verify is refused (an error).
	adaptiveClaims(r *Resolver, auth *store.SitePublishingAuth) (map[string]any, time.Time, error)
	// unsigned are the unsigned claims offered.
	unsigned() map[string]any
}

// admit admits the visitor bringing proofs p to site (published), as the
// site's audience allows.
func (r *Resolver) admit(ctx context.Context, site *store.Site, p visitorProofs) (*Visitor, error) {
	v := &Visitor{site: site, claims: map[string]any{},
		log: func(msg string, args ...any) { r.Log.WarnContext(ctx, msg, args...) }}
	switch site.Visibility {
	case store.SiteVisibilityPublic, store.SiteVisibilityUnlisted:
		v.proof = ProofAudience
	case store.SiteVisibilityShareLink:
		// SECURITY: a share-link site opens to its share keys only: its
		// own, and its share links' while they are active.
		key, link, err := p.shareKey(ctx, r, site)
		if err != nil {
			return nil, err
		} else if key == "" {
			return nil, errNoSite
		}
		v.proof, v.shareKey, v.shareLink = ProofShareKey, key, link
	case store.SiteVisibilityVisitorAuth:
		// SECURITY: a visitor-auth site opens to the bearers of a token
		// signed with its key, while it is valid.
		auth, err := r.sitePublishingAuth(ctx, site)
		if err != nil {
			return nil, err
		}
		claims, expires, err := p.visitorToken(r, auth)
		if err != nil {
			return nil, &VisitorAuthRequired{FallbackURL: store.StringOf(auth.FallbackURL), Reason: err}
		}
		v.proof, v.claims, v.visitorKey, v.expires = ProofToken, claims, auth.PrivateKey, expires
	default:
		// SECURITY: an audience this server does not know opens to no one.
		return nil, errNoSite
	}
	if site.AdaptiveContent && v.proof != ProofToken && p.offersSignedClaims() {
		// Signed claims for adaptive content: a token signed with the
		// site's key, as on a visitor-auth site.
		auth, err := r.sitePublishingAuth(ctx, site)
		if err != nil {
			return nil, err
		}
		claims, expires, err := p.adaptiveClaims(r, auth)
		if err != nil {
			return nil, err
		} else if claims != nil {
			v.claims, v.visitorKey, v.expires = claims, auth.PrivateKey, expires
		}
	}
	if u := p.unsigned(); site.AdaptiveContent && len(u) > 0 {
		v.claims["unsigned"] = unsignedClaims(site, u)
	}
	return v, nil
}

// requestProofs are the proofs of a request to a published address.
type requestProofs VisitorRequest

func (q requestProofs) shareKey(ctx context.Context, r *Resolver, s *store.Site) (string, string, error) {
	return r.validShareKey(ctx, s, q.ShareKey)
}

func (q requestProofs) visitorToken(r *Resolver, auth *store.SitePublishingAuth) (map[string]any, time.Time, error) {
	return r.verifyVisitorToken(auth, q.Token)
}

func (q requestProofs) offersSignedClaims() bool { return q.AdaptiveToken != "" }

func (q requestProofs) adaptiveClaims(r *Resolver, auth *store.SitePublishingAuth) (map[string]any, time.Time, error) {
	// One that does not verify gives none: the page is the one for no
	// claims.
	claims, expires, err := r.verifyVisitorToken(auth, q.AdaptiveToken)
	if err != nil {
		return nil, time.Time{}, nil
	}
	return claims, expires, nil
}

func (q requestProofs) unsigned() map[string]any { return q.Unsigned }

// publishedSite finds the published site a request names.
func (r *Resolver) publishedSite(ctx context.Context, req VisitorRequest) (*store.Site, error) {
	var key string
	switch {
	case req.Hostname != "":
		key = "host " + req.Hostname
	case req.OrganizationID != "" && req.SiteName != "":
		key = "name " + req.OrganizationID + "/" + req.SiteName
	default:
		return nil, errNoSite
	}
	site, err := r.siteAt(ctx, key, func() (*store.Site, error) {
		if req.Hostname != "" {
			return store.SiteByHostname(ctx, r.DB, req.Hostname)
		}
		return store.SiteByName(ctx, r.DB, req.OrganizationID, req.SiteName)
	})
	if err != nil {
		return nil, err
	}
	// SECURITY: a site not published is not there for visitors.
	if site == nil || !site.Published {
		return nil, errNoSite
	}
	return site, nil
}

// siteAddresses remembers, by address, the site each one named when it was
// last read (nil: none), and when: published addresses are asked on every
// page view, their sites change rarely, and every change to a site is heard
// (PublishedChanges) before the next request trusts what was read.
type siteAddresses struct {
	once    sync.Once
	entries *lru.Cache[string, siteAddress]
}

type siteAddress struct {
	site *store.Site
	seq  uint64
}

// maxSiteAddresses bounds the addresses remembered (a few hundred bytes
// each, unknown ones too: a crawler's guesses must not grow it).
const maxSiteAddresses = 10_000

// siteAt is the site address key names, from memory while nothing changed
// it, else by read (its answer remembered); nil when there is none.
func (r *Resolver) siteAt(ctx context.Context, key string, read func() (*store.Site, error)) (*store.Site, error) {
	a := &r.siteAddresses
	a.once.Do(func() { a.entries, _ = lru.New[string, siteAddress](maxSiteAddresses) })
	changes := r.PublishedChanges
	if e, ok := a.entries.Get(key); ok {
		fresh := e.site == nil && changes.NoSiteChangedSince(e.seq) || e.site != nil && changes.Fresh(e.seq, e.site.ID)
		if fresh {
			return copySite(e.site), nil
		}
	}
	seq := changes.Seq()
	site, err := read()
	if errors.Is(err, store.ErrNotFound) {
		site, err = nil, nil
	} else if err != nil {
		return nil, err
	}
	a.entries.Add(key, siteAddress{site: site, seq: seq})
	return copySite(site), nil
}

// copySite is a copy of s, for one request: what is remembered is shared.
func copySite(s *store.Site) *store.Site {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}

// validShareKey is key when it opens share-link site s, with the share
// link it is ("" for the site's own share key): the site's own key, or an
// active share link's; "" when it opens nothing.
func (r *Resolver) validShareKey(ctx context.Context, s *store.Site, key string) (string, string, error) {
	if key == "" || len(key) > maxVisitorSecret {
		return "", "", nil
	}
	if subtle.ConstantTimeCompare([]byte(key), []byte(s.ShareKey)) == 1 {
		return key, "", nil
	}
	// By key, after the site's id and a NUL (by id: shareLinkByID).
	link, err := remembered(r, &r.siteSecrets.links, s.ID+"\x00"+key, s.ID, func() (*store.SiteShareLink, error) {
		l, err := store.SiteShareLinkByKey(ctx, r.DB, s.OrganizationID, s.ID, key)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		return l, err
	})
	if err != nil || link == nil || !link.Active {
		return "", "", err
	}
	return key, link.ID, nil
}

// sitePublishingAuth is site s's visitor authentication settings.
func (r *Resolver) sitePublishingAuth(ctx context.Context, s *store.Site) (*store.SitePublishingAuth, error) {
	auth, err := remembered(r, &r.siteSecrets.auths, s.ID, s.ID, func() (*store.SitePublishingAuth, error) {
		return store.GetSitePublishingAuth(ctx, r.DB, s.OrganizationID, s.ID)
	})
	if err == nil && auth == nil {
		err = errNoSite
	}
	return auth, orNotFound(err, "site")
}

// siteSecrets remembers what admitting a site's visitors reads beside the
// site: its share links by key (nil: none has it) and its visitor
// authentication settings, while nothing of the site changed (every write
// of them takes the site's lock, which PublishedChanges hears).
type siteSecrets struct {
	once  sync.Once
	links *lru.Cache[string, rememberedValue[*store.SiteShareLink]]
	auths *lru.Cache[string, rememberedValue[*store.SitePublishingAuth]]
}

type rememberedValue[T any] struct {
	value T
	seq   uint64
}

// remembered is what read answers for key, a read about site siteID: from
// memory while nothing of the site changed since it was read, else read
// again and remembered.
func remembered[T any](r *Resolver, cache **lru.Cache[string, rememberedValue[T]], key, siteID string, read func() (T, error)) (T, error) {
	r.siteSecrets.once.Do(func() {
		r.siteSecrets.links, _ = lru.New[string, rememberedValue[*store.SiteShareLink]](maxSiteAddresses)
		r.siteSecrets.auths, _ = lru.New[string, rememberedValue[*store.SitePublishingAuth]](maxSiteAddresses)
	})
	if e, ok := (*cache).Get(key); ok && r.PublishedChanges.Fresh(e.seq, siteID) {
		return e.value, nil
	}
	seq := r.PublishedChanges.Seq()
	v, err := read()
	if err == nil {
		(*cache).Add(key, rememberedValue[T]{value: v, seq: seq})
	}
	return v, err
}

// Visitor tokens are JSON Web Tokens signed with the site's private key
// (GitBook's visitor authentication: the site owner's backend signs them
// with the key getSitePublishingAuthById gives): HS256 only, an expiry
// required, a minute of clock skew allowed, at most maxVisitorSecret long.
const visitorTokenLeeway = time.Minute

// verifyVisitorToken checks token against site settings auth and returns
// its claims, and when it expires.
func (r *Resolver) verifyVisitorToken(auth *store.SitePublishingAuth, token string) (map[string]any, time.Time, error) {
	if token == "" {
		return nil, time.Time{}, errors.New("no visitor token")
	}
	if len(token) > maxVisitorSecret {
		return nil, time.Time{}, errors.New("the visitor token is too long")
	}
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return []byte(auth.PrivateKey), nil },
		// SECURITY: the algorithm is the site's, never the token's say
		// (no "none", no public-key confusion).
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(), jwt.WithLeeway(visitorTokenLeeway), jwt.WithTimeFunc(r.now))
	if err != nil {
		return nil, time.Time{}, err
	}
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil {
		return nil, time.Time{}, errors.New("the visitor token has no expiry")
	}
	return map[string]any(claims), exp.Time, nil
}

// VisitorAuthRequired is the answer to a visitor of a visitor-auth site
// without a valid token: the reader sends them to FallbackURL, the site's
// login page, when it has one. Reason says what was wrong with the token,
// for the logs.
type VisitorAuthRequired struct {
	FallbackURL string
	Reason      error
}

func (e *VisitorAuthRequired) Error() string { return "this site needs a visitor token" }

// LoginURL is the site's login page told where the visitor was going (as
// GitBook does: ?location=), to send them back with a token.
func (e *VisitorAuthRequired) LoginURL(location string) string {
	u, err := url.Parse(e.FallbackURL)
	if err != nil {
		return e.FallbackURL
	}
	q := u.Query()
	q.Set("location", location)
	u.RawQuery = q.Encode()
	return u.String()
}

// unsignedClaims keeps of claims those site s's visitor schema declares
// under "unsigned", of the type it declares.
func unsignedClaims(s *store.Site, claims map[string]any) map[string]any {
	var schema map[string]any
	if len(s.AdaptiveSchema) == 0 || json.Unmarshal(s.AdaptiveSchema, &schema) != nil {
		return map[string]any{}
	}
	return adaptive.UnsignedClaims(schema, claims)
}

// sees tells whether the visitor sees what condition guards: with no
// condition, yes; otherwise as the condition evaluates for the visitor's
// claims. A condition that fails to run hides what it guards.
func (v *Visitor) sees(cond *string) bool {
	if cond == nil || strings.TrimSpace(*cond) == "" {
		return true
	}
	if ok, found := v.outcomes.Load(*cond); found {
		return ok.(bool)
	}
	ok, err := condition.Evaluate(*cond, map[string]any{"claims": v.claims})
	if err != nil {
		v.log("a visitor condition failed: what it guards is hidden", "site", v.site.ID, "err", err.Error())
	}
	v.outcomes.Store(*cond, ok)
	return ok
}

// Sees tells whether condition src holds for the visitor (an empty one
// does), as the read rules decide it.
func (v *Visitor) Sees(src string) bool { return v.sees(&src) }

// Outcomes lists the outcomes of the conditions the visitor was asked so
// far, by source: with the site and its content, what a page made for
// this visitor depends on (the reader's cache keys).
func (v *Visitor) Outcomes() map[string]bool {
	out := map[string]bool{}
	v.outcomes.Range(func(k, ok any) bool {
		out[k.(string)] = ok.(bool)
		return true
	})
	return out
}

type visitorKey struct{}

// WithVisitor returns a context whose caller is visitor v, and no user:
// nothing below it reads as a member.
func WithVisitor(ctx context.Context, v *Visitor) context.Context {
	return context.WithValue(WithCaller(ctx, nil), visitorKey{}, v)
}

// VisitorFrom is the visitor of ctx, or nil.
func VisitorFrom(ctx context.Context) *Visitor {
	v, _ := ctx.Value(visitorKey{}).(*Visitor)
	return v
}

// visitorRootFields are the root fields a visitor may ask: the published
// site, and the site and spaces it reads (each resolver decides what the
// visitor may read of them, as for any caller).
var visitorRootFields = map[string]bool{"publishedContentSite": true, "site": true, "space": true}

// visitorRules are what of its site a visitor may read, by Go type, as
// readRules are for users: a guarded type without one is never a
// visitor's.
var visitorRules = map[reflect.Type]readRule{}

func visitorGuard[T any](rule func(v *viewer, obj T) (bool, error)) {
	visitorRules[reflect.TypeFor[T]()] = func(v *viewer, obj any) (bool, error) { return rule(v, obj.(T)) }
}

func init() {
	// The structure of its site, as far as the conditions on sections and
	// site spaces hold for it.
	visitorGuard(func(v *viewer, s *store.Site) (bool, error) { return v.visitor.reads(s.OrganizationID, s.ID), nil })
	visitorGuard(func(v *viewer, g *store.SiteSectionGroup) (bool, error) {
		return v.visitor.reads(g.OrganizationID, g.SiteID), nil
	})
	visitorGuard(func(v *viewer, s *store.SiteSection) (bool, error) {
		return v.visitor.reads(s.OrganizationID, s.SiteID) && v.visitor.sees(s.Condition), nil
	})
	visitorGuard(func(v *viewer, ss *store.SiteSpace) (bool, error) { return v.visitorSeesSiteSpace(ss) })
	// What the visible site spaces publish: their spaces, and the live
	// revision of each, with its pages.
	visitorGuard(func(v *viewer, s *store.Space) (bool, error) { return v.visitorReadsSpace(s.ID) })
	visitorGuard(func(v *viewer, x *store.Revision) (bool, error) { return v.visitorReadsRevision(x.SpaceID, x.ID) })
	visitorGuard(func(v *viewer, p *model.PageNode) (bool, error) {
		return v.visitorReadsRevision(p.Revision.SpaceID, p.Revision.ID)
	})
	// A site search's hits, in those spaces' live content.
	visitorGuard(func(v *viewer, s *model.SearchSpaceResult) (bool, error) { return v.visitorReadsSpace(s.ID) })
	// The redirects its site serves: the site's own, when the visitor
	// sees where they lead, and the automatic ones of the spaces it reads.
	visitorGuard(func(v *viewer, rd *store.SiteRedirect) (bool, error) { return v.visitorSeesRedirect(rd) })
	visitorGuard(func(v *viewer, rd *store.PageRedirect) (bool, error) { return v.visitorReadsSpace(rd.SpaceID) })

}

// visitorReads tells whether the caller of ctx is a visitor of site siteID
// of orgID.
func visitorReads(ctx context.Context, orgID, siteID string) bool {
	v := VisitorFrom(ctx)
	return v != nil && v.reads(orgID, siteID)
}

// notForVisitors is what a list of what visitors never read (a space's
// change requests and comments) answers one: empty, as any list answers
// what its caller may not read.
func notForVisitors[T any]() *model.List[T] {
	return &model.List[T]{Items: []T{}, PageInfo: &model.PageInfo{}, Total: func(context.Context) (int, error) { return 0, nil }}
}

// reads tells whether the visitor's site is site siteID of orgID.
func (v *Visitor) reads(orgID, siteID string) bool {
	return v.site.ID == siteID && v.site.OrganizationID == orgID
}

// visitorSeesSiteSpace: a site space of the visitor's site whose condition,
// and its section's, hold for the visitor, publishing a space that is not
// deleted.
func (v *viewer) visitorSeesSiteSpace(ss *store.SiteSpace) (bool, error) {
	if !v.visitor.reads(ss.OrganizationID, ss.SiteID) || !v.visitor.sees(ss.Condition) {
		return false, nil
	}
	if ss.SectionID != nil {
		// The visitor's tree holds the sections it sees (assembleTree).
		t, err := v.r.treeOf(v.ctx, ss.SiteID, false)
		if err != nil {
			return false, err
		}
		if t.section(*ss.SectionID) == nil {
			return false, nil
		}
	}
	s, err := v.r.spaceOfSiteSpace(v.ctx, ss)
	if isNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return s.DeletedAt == nil, nil
}

// visitorSeesRedirect: a redirect of the visitor's site leading where the
// visitor may go: a URL, or a section or a site space (of a page) the
// visitor sees. A redirect to what its conditions hide from the visitor is
// none of theirs: the address answers as any other that leads nowhere.
func (v *viewer) visitorSeesRedirect(rd *store.SiteRedirect) (bool, error) {
	if !v.visitor.reads(rd.OrganizationID, rd.SiteID) {
		return false, nil
	}
	to := rd.Destination
	switch to.Kind {
	case store.RedirectToURL:
		return true, nil
	case store.RedirectToSiteSection:
		// The visitor's tree holds the sections it sees (assembleTree).
		t, err := v.r.treeOf(v.ctx, rd.SiteID, false)
		if err != nil {
			return false, err
		}
		return t.section(store.StringOf(to.SiteSectionID)) != nil, nil
	case store.RedirectToSiteSpace, store.RedirectToSitePage:
		ss, err := v.r.visibleSiteSpace(v.ctx, rd.SiteID, store.StringOf(to.SiteSpaceID))
		return ss != nil, err
	}
	return false, nil
}

// visitorReadsSpace: a space a site space the visitor sees publishes.
func (v *viewer) visitorReadsSpace(id string) (bool, error) {
	spaces, err := memoized(v.l, memoKey{"visitorSpaces", v.visitor.site.ID}, func() (map[string]bool, error) {
		set, err := v.r.visibleSiteSpaces(v.ctx, v.visitor.site.ID)
		out := map[string]bool{}
		for _, ss := range set.list() {
			out[ss.SpaceID] = true
		}
		return out, err
	})
	return spaces[id], err
}

// visitorReadsRevision: the live revision of a space the visitor reads;
// its past revisions, and its change requests' revisions, are not
// published.
func (v *viewer) visitorReadsRevision(spaceID, id string) (bool, error) {
	if ok, err := v.visitorReadsSpace(spaceID); !ok || err != nil {
		return false, err
	}
	s, err := v.l.Space.Load(v.ctx, spaceID)()
	if isNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return s.RevisionID == id, nil
}

// SiteHostname tells whether host (lower case, no port) is a site's custom
// hostname: the reader then answers every request to it.
func (r *Resolver) SiteHostname(ctx context.Context, host string) bool {
	if !isHostname(host) {
		return false
	}
	site, err := r.siteAt(ctx, "host "+host, func() (*store.Site, error) { return store.SiteByHostname(ctx, r.DB, host) })
	return err == nil && site != nil
}

// isHostname: a name a site's hostname could be (siteHostname's pattern),
// so that other hosts (an address, localhost) are not looked up.
func isHostname(host string) bool { return len(host) <= 512 && siteHostname.MatchString(host) }

// PublishedFile is the file whose bytes have digest sha256 in a revision
// the visitor of ctx reads (the live revision of a space its site shows
// it): NotFound for anything else. Files are served by their content, so
// the answer may be kept for good.
func (r *Resolver) PublishedFile(ctx context.Context, sha256 string) (*Served, error) {
	v := VisitorFrom(ctx)
	if v == nil || len(sha256) != 64 {
		return nil, NotFound("file")
	}
	// SECURITY: the revisions of the site spaces the visitor sees only.
	set, err := r.visibleSiteSpaces(ctx, v.site.ID)
	if err != nil {
		return nil, err
	}
	var revisions []string
	for _, ss := range set.list() {
		s, err := r.spaceOfSiteSpace(ctx, ss)
		if err != nil && !isNotFound(err) {
			return nil, err
		}
		if err == nil && s.DeletedAt == nil {
			revisions = append(revisions, s.RevisionID)
		}
	}
	f, err := store.FileByDigest(ctx, r.DB, v.site.OrganizationID, revisions, sha256)
	if err != nil {
		return nil, orNotFound(err, "file")
	}
	body, err := r.Blobs.Open(ctx, f.BlobSHA256)
	if err != nil {
		return nil, NotFound("file")
	}
	cache := "private, max-age=31536000, immutable"
	if v.site.Visibility == store.SiteVisibilityPublic || v.site.Visibility == store.SiteVisibilityUnlisted {
		cache = "public, max-age=31536000, immutable"
	}
	return &Served{ContentType: f.ContentType, Size: f.Size, Untrusted: true, Cache: cache, ETag: `"` + f.BlobSHA256 + `"`, Body: body}, nil
}

// OpenSitesOfSpace are the published sites that may show space id to
// anyone (public or unlisted ones), newest first: where the space's own
// published address leads. Whether one shows it to a visitor is for that
// visitor's read rules to say.
func (r *Resolver) OpenSitesOfSpace(ctx context.Context, id string) ([]*store.Site, error) {
	s, err := store.GetSpace(ctx, r.DB, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	published := true
	sites, err := store.ListSites(ctx, r.DB, s.OrganizationID, store.SiteFilter{SpaceID: &id, Published: &published},
		store.Page{Limit: 100})
	var open []*store.Site
	for _, site := range sites {
		if site.Visibility == store.SiteVisibilityPublic || site.Visibility == store.SiteVisibilityUnlisted {
			open = append(open, site)
		}
	}
	return open, err
}
