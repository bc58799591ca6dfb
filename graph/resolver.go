// Package graph is the one implementation of the API: the GraphQL resolvers,
// one file per domain, holding every rule (input limits, permissions, state
// transitions). The REST adapter runs these same resolvers.
package graph

//go:generate sh -c "cd .. && go tool gqlgen generate --config gqlgen.yml"
//go:generate go run ./internal/execpatch generated/generated.go

import (
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/docsapi/docsapi/graph/budget"
	"github.com/docsapi/docsapi/graph/engine"
	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/outbound"
	"github.com/docsapi/docsapi/graph/translator"
	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/blob"
)

// Resolver holds what resolvers depend on. It is built once at start-up;
// per-request state (caller, loaders) travels in the context.
type Resolver struct {
	DB   *store.DB
	URLs URLs
	Log  *slog.Logger
	// Clock is the current time; tests replace it to move through time.
	Clock func() time.Time
	// Blobs holds the bytes of uploaded files.
	Blobs blob.Store
	// MaxUpload bounds an uploaded file, in bytes.
	MaxUpload int64
	// GitFileRoot is the directory file:// git URLs may point into (empty:
	// none); GitAllowPrivate lets git URLs name private addresses.
	GitFileRoot     string
	GitAllowPrivate bool
	// GitLimits bounds what a git import (or the clone an export starts
	// from) takes in; zero fields take the defaults.
	GitLimits GitLimits
	// SSOTokenTTL is how long a token issued by a single sign-on works
	// (DefaultSSOTokenTTL when zero).
	SSOTokenTTL time.Duration
	// samlKey is this service's SAML key pair once read (samlKeys).
	samlKeyMu sync.Mutex
	samlKey   *samlKeyPair
	// Translator runs translations (nil: none configured; runs fail saying so).
	Translator translator.Provider
	// Outbound is the guarded HTTP client for addresses users name.
	Outbound *outbound.Client
	// SecretKey is the AES-256 key integration secrets are sealed with
	// (empty: none can be stored).
	SecretKey []byte
	// Delivery configures the delivery of integration events in development
	// mode (graph/delivery.go).
	Delivery DeliveryConfig
	// Live hands changes to this process's subscriptions (package live;
	// NewLiveHub, subscription.go).
	Live *LiveHub
	// PublishedChanges tells what changed of published sites, so that
	// what the reader and admission remember stays fresh (nil: nothing is
	// remembered).
	PublishedChanges *PublishedChanges
	// GenericExecution turns the direct writer (direct.go) off: every field
	// runs through gqlgen. The writer's reference in tests, and a switch
	// for operators (DOCSAPI_GENERIC_EXECUTION=1).
	GenericExecution bool
	// StrictAuthorization fails a request whose resolvers returned an
	// object the caller may not read (authorize.go), rather than only
	// withholding it and logging: tests run strict, so a resolver that
	// forgets a check fails them.
	StrictAuthorization bool
	// TrustedDocuments, when set, are the only GraphQL documents callers
	// other than developers may run (engine/trusted.go).
	TrustedDocuments *engine.TrustedDocuments
	// Budget, when set, is the rate budget every operation draws on
	// (graph/budget).
	Budget *budget.Budget
	// Tracing, when set, gives GraphQL operations spans (the engine's
	// Config.Traced) and traces the jobs enqueued (JobMiddleware); the
	// spans of requests are the server's, and those below them children
	// of theirs (package tracing).
	Tracing trace.TracerProvider

	signingKey signingKey
	// visitorTokenSecret is the key of visitor API tokens (visitor_token.go).
	visitorTokenSecret signingKey
	jobClient          jobClient
	// siteAddresses remembers the site each published address names;
	// siteSecrets its share links and visitor key, for admission.
	siteAddresses siteAddresses
	siteSecrets   siteSecrets
}

func (r *Resolver) now() time.Time { return store.Now(r.Clock) }

func (r *Resolver) Query() generated.QueryResolver               { return &queryResolver{r} }
func (r *Resolver) Mutation() generated.MutationResolver         { return &mutationResolver{r} }
func (r *Resolver) User() generated.UserResolver                 { return &userResolver{r} }
func (r *Resolver) Organization() generated.OrganizationResolver { return &organizationResolver{r} }

type queryResolver struct{ *Resolver }
type mutationResolver struct{ *Resolver }
