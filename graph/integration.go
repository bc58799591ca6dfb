package graph

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/blob"
)

// Integrations. An integration has a global name and belongs to
// the organization that published it: public and unlisted ones are seen by
// everyone, private ones by that organization's members; its admins publish
// and unpublish. An installation belongs to the organization it is installed
// on, and only that organization's admins see or change it, its space and
// site installations and its events: another organization's installations
// are never visible, whoever published the integration. Every installation
// change records its event (store.RecordEvent) in the same transaction.

var integrationName = regexp.MustCompile(`^[a-zA-Z0-9-_.]+$`)

// IntegrationAssetPath serves an integration's icon and preview images:
// /integration-assets/{name}/{sha256}. Like a marketplace's images they need
// no token; only the digests of the integration's own images are served.
const IntegrationAssetPath = "/integration-assets/"

const (
	maxPreviewImages   = 3
	maxIntegrationKeys = 20
	maxExternalIDs     = 5
)

// callerOrgs lists the organizations where the caller holds at least min
// (empty: every membership, guests included).
func callerOrgs(ctx context.Context, min store.MemberRole) []string {
	c, err := CallerFrom(ctx)
	if err != nil {
		return nil
	}
	return c.Organizations(min)
}

// canSee tells whether the caller may see integration in.
func canSee(ctx context.Context, in *store.Integration) bool {
	if in.Visibility != store.IntegrationPrivate {
		return true
	}
	_, err := orgRole(ctx, in.OrganizationID, "integration")
	return err == nil
}

// integration reads an integration the caller can see.
func (r *Resolver) integration(ctx context.Context, name string) (*store.Integration, error) {
	in, err := store.GetIntegration(ctx, r.DB, name)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !canSee(ctx, in)) {
		return nil, NotFound("integration")
	}
	return in, err
}

func (r *queryResolver) Integration(ctx context.Context, name string) (*store.Integration, error) {
	return r.integration(ctx, name)
}

func (r *queryResolver) Integrations(ctx context.Context, page *string, limit *int, _ *int, _ *string, search *string, category *store.IntegrationCategory,
	blockDomain *string, blocks *bool, contentSources *bool, owner *string, scope *store.IntegrationScope, target *store.IntegrationTarget) (*model.IntegrationList, error) {
	// SECURITY: public integrations, and those of the caller's organizations.
	f := store.IntegrationFilter{MemberOf: callerOrgs(ctx, ""), Blocks: blocks, ContentSources: contentSources}
	if search != nil {
		if err := checkLength("search", *search, 0, 512); err != nil {
			return nil, err
		}
		f.Search = *search
	}
	if category != nil {
		f.Category = string(*category)
	}
	if blockDomain != nil {
		if len(*blockDomain) > 100 || !integrationName.MatchString(*blockDomain) {
			return nil, Invalid("blockDomain", "must match %s, at most 100 characters", integrationName)
		}
		f.BlockDomain = *blockDomain
	}
	if owner != nil {
		f.Owner = *owner
	}
	if scope != nil {
		f.Scope = string(*scope)
	}
	if target != nil {
		f.Target = string(*target)
	}
	return paginate(page, limit, listQuery[*store.Integration]{
		read: func(p store.Page) ([]*store.Integration, error) { return store.ListIntegrations(ctx, r.DB, f, p) },
		key:  func(i *store.Integration) store.Keyset { return store.Keyset{Time: i.CreatedAt, ID: i.ID} },
	})
}

// publication is a checked PublishIntegrationInput, ready to store.
type publication struct {
	row     store.Integration
	secrets map[string]string
	icon    []byte
	images  [][]byte
}

func checkPublication(input model.PublishIntegrationInput) (*publication, error) {
	p := &publication{row: store.Integration{Runtime: "v1", Visibility: store.IntegrationPublic, Target: store.TargetAll,
		Scopes: input.Scopes, Categories: []store.IntegrationCategory{}, Script: input.Script}}
	if rt, _ := input.Runtime.ValueOK(); rt != nil {
		if *rt != "v1" && *rt != "v2" {
			return nil, Invalid("runtime", "must be v1 or v2")
		}
		p.row.Runtime = *rt
	}
	if err := checkLength("title", input.Title, 2, 30); err != nil {
		return nil, err
	}
	p.row.Title = input.Title
	if err := checkLength("description", input.Description, 0, 100); err != nil {
		return nil, err
	}
	p.row.Description = input.Description
	if s, _ := input.Summary.ValueOK(); s != nil {
		if err := checkLength("summary", *s, 0, 2048); err != nil {
			return nil, err
		}
		p.row.Summary = *s
	}
	if v, _ := input.Visibility.ValueOK(); v != nil {
		p.row.Visibility = *v
	}
	if t, _ := input.Target.ValueOK(); t != nil {
		p.row.Target = *t
	}
	if c, _ := input.Categories.ValueOK(); c != nil {
		p.row.Categories = c
	}
	var err error
	if icon, _ := input.Icon.ValueOK(); icon != nil {
		if p.icon, err = decodeImage("icon", *icon); err != nil {
			return nil, err
		}
	}
	images, _ := input.PreviewImages.ValueOK()
	if len(images) > maxPreviewImages {
		return nil, Invalid("previewImages", "at most %d images", maxPreviewImages)
	}
	for i, img := range images {
		b, err := decodeImage("previewImages["+strconv.Itoa(i)+"]", img)
		if err != nil {
			return nil, err
		}
		p.images = append(p.images, b)
	}
	blocks, _ := input.Blocks.ValueOK()
	if p.row.Blocks, err = checkObjects("blocks", blocks, 0, checkBlock); err != nil {
		return nil, err
	}
	sources, _ := input.ContentSources.ValueOK()
	if p.row.ContentSources, err = checkObjects("contentSources", sources, 0, checkContentSource); err != nil {
		return nil, err
	}
	links, _ := input.ExternalLinks.ValueOK()
	if p.row.ExternalLinks, err = checkObjects("externalLinks", links, 5, checkExternalLink); err != nil {
		return nil, err
	}
	configs, _ := input.Configurations.ValueOK()
	for k, v := range configs {
		if _, ok := v.(map[string]any); !ok || (k != "account" && k != "space" && k != "site") {
			return nil, Invalid("configurations."+k, "must be one of account, space and site, each an object")
		}
	}
	if configs == nil {
		configs = map[string]any{}
	}
	p.row.Configurations, _ = json.Marshal(configs)
	if secrets, _ := input.Secrets.ValueOK(); secrets != nil {
		if len(secrets) > maxIntegrationKeys {
			return nil, Invalid("secrets", "at most %d secrets", maxIntegrationKeys)
		}
		p.secrets = map[string]string{}
		for k, v := range secrets {
			s, ok := v.(string)
			if !ok {
				return nil, Invalid("secrets."+k, "must be a string")
			}
			p.secrets[k] = s
		}
	}
	if csp, _ := input.ContentSecurityPolicy.ValueOK(); csp != nil {
		if err := checkCSP(csp); err != nil {
			return nil, err
		}
		p.row.ContentSecurityPolicy, _ = json.Marshal(csp)
	}
	return p, nil
}

// decodeImage reads a base64 image: PNG, JPEG, GIF or WebP.
func decodeImage(field, s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		if b, err = base64.RawStdEncoding.DecodeString(s); err != nil {
			return nil, Invalid(field, "must be base64")
		}
	}
	switch http.DetectContentType(b) {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return b, nil
	}
	return nil, Invalid(field, "must be a PNG, JPEG, GIF or WebP image")
}

// checkObjects checks a list of JSON objects (at most max, 0: any number)
// one by one and returns it as JSON.
func checkObjects(field string, list []map[string]any, max int, check func(string, map[string]any) error) (json.RawMessage, error) {
	if max > 0 && len(list) > max {
		return nil, Invalid(field, "at most %d items", max)
	}
	ids := map[string]bool{}
	for i, o := range list {
		f := field + "[" + strconv.Itoa(i) + "]"
		if err := check(f, o); err != nil {
			return nil, err
		}
		if id, ok := o["id"].(string); ok {
			if ids[id] {
				return nil, Invalid(f+".id", "%q is used twice", id)
			}
			ids[id] = true
		}
	}
	if list == nil {
		list = []map[string]any{}
	}
	out, err := json.Marshal(list)
	return out, err
}

// member describes a member of a JSON object: its kind ("string",
// "strings" or "object"), whether it is required, and for a string with
// max > 0 its length range.
type member struct {
	kind     string
	required bool
	min, max int
}

// checkMembers checks o has only the members described, and the required ones.
func checkMembers(field string, o map[string]any, members map[string]member) error {
	for k, v := range o {
		m, ok := members[k]
		if !ok {
			return Invalid(field+"."+k, "is not a known field")
		}
		switch m.kind {
		case "string":
			s, ok := v.(string)
			if !ok {
				return Invalid(field+"."+k, "must be a string")
			}
			if m.max > 0 {
				if err := checkLength(field+"."+k, s, m.min, m.max); err != nil {
					return err
				}
			}
		case "strings":
			l, ok := v.([]any)
			for _, x := range l {
				if _, isStr := x.(string); !isStr {
					ok = false
				}
			}
			if !ok {
				return Invalid(field+"."+k, "must be an array of strings")
			}
		case "object":
			if _, ok := v.(map[string]any); !ok {
				return Invalid(field+"."+k, "must be an object")
			}
		}
	}
	for k, m := range members {
		if _, ok := o[k]; m.required && !ok {
			return Invalid(field+"."+k, "is required")
		}
	}
	return nil
}

func checkBlock(field string, o map[string]any) error {
	if err := checkMembers(field, o, map[string]member{"id": {kind: "string", required: true, min: 1, max: 100},
		"title": {kind: "string", required: true, min: 2, max: 40}, "description": {kind: "string", max: 150},
		"icon": {kind: "string"}, "urlUnfurl": {kind: "strings"}, "markdown": {kind: "object"}}); err != nil {
		return err
	}
	if md, ok := o["markdown"].(map[string]any); ok {
		return checkMembers(field+".markdown", md, map[string]member{"codeblock": {kind: "string", required: true},
			"body": {kind: "string", required: true}})
	}
	return nil
}

func checkContentSource(field string, o map[string]any) error {
	if err := checkMembers(field, o, map[string]member{"id": {kind: "string", required: true, min: 1, max: 100},
		"title": {kind: "string", required: true, min: 2, max: 40}, "description": {kind: "string", max: 150},
		"icon": {kind: "string"}, "configuration": {kind: "object", required: true}}); err != nil {
		return err
	}
	return checkMembers(field+".configuration", o["configuration"].(map[string]any),
		map[string]member{"componentId": {kind: "string", required: true}})
}

func checkExternalLink(field string, o map[string]any) error {
	if err := checkMembers(field, o, map[string]member{"url": {kind: "string", required: true, min: 1, max: 2048},
		"label": {kind: "string", required: true}}); err != nil {
		return err
	}
	if u := o["url"].(string); !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		return Invalid(field+".url", "must be an http or https URL")
	}
	return nil
}

// checkCSP accepts a policy string, or an object of directive strings.
func checkCSP(v any) error {
	switch csp := v.(type) {
	case string:
		return checkLength("contentSecurityPolicy", csp, 0, 10_000)
	case map[string]any:
		for k, d := range csp {
			if _, ok := d.(string); !ok {
				return Invalid("contentSecurityPolicy."+k, "must be a string")
			}
		}
		return nil
	}
	return Invalid("contentSecurityPolicy", "must be a string or an object of strings")
}

// putAsset stores image bytes in the blob store.
func (r *Resolver) putAsset(ctx context.Context, b []byte) (store.Asset, error) {
	digest, _, err := r.Blobs.Put(ctx, bytes.NewReader(b), r.MaxUpload)
	if errors.Is(err, blob.ErrTooLarge) {
		return store.Asset{}, Invalid("icon", "images must be at most %d bytes", r.MaxUpload)
	}
	return store.Asset{SHA256: digest, ContentType: http.DetectContentType(b)}, err
}

// sealSecrets encrypts an integration's secrets under the server key, bound
// to the integration's id (a sealed value copied to another row does not
// open).
func (r *Resolver) sealSecrets(id string, secrets map[string]string) ([]byte, error) {
	if secrets == nil {
		return nil, nil
	}
	if len(r.SecretKey) == 0 {
		return nil, Invalid("secrets", "this server stores no secrets: it has no DOCSAPI_SECRET_KEY")
	}
	plain, err := json.Marshal(secrets)
	if err != nil {
		return nil, err
	}
	return r.seal(plain, []byte(id))
}

// OpenSecrets decrypts an integration's secrets, for what runs the
// integration (deliveries sign with them).
func (r *Resolver) OpenSecrets(in *store.Integration) (map[string]string, error) {
	if in.Secrets == nil {
		return map[string]string{}, nil
	}
	plain, err := r.unseal(in.Secrets, []byte(in.ID))
	if err != nil {
		return nil, fmt.Errorf("integration secrets: %w", err)
	}
	out := map[string]string{}
	return out, json.Unmarshal(plain, &out)
}

func (r *mutationResolver) PublishIntegration(ctx context.Context, name string, input model.PublishIntegrationInput) (*store.Integration, error) {
	if len(name) > 100 || !integrationName.MatchString(name) {
		return nil, Invalid("integrationName", "must match %s, at most 100 characters", integrationName)
	}
	// The reference's pattern admits them, but no URL can name "." or
	// "..": clients and servers remove dot segments from a path.
	if name == "." || name == ".." {
		return nil, Invalid("integrationName", "must not be a dot segment (%q)", name)
	}
	pub, err := checkPublication(input)
	if err != nil {
		return nil, err
	}
	// SECURITY: the publishing organization's admins publish.
	org, err := r.administeredOrganization(ctx, input.Organization)
	if err != nil {
		return nil, err
	}
	row := pub.row
	row.Name, row.OrganizationID = name, org.ID
	if pub.icon != nil {
		a, err := r.putAsset(ctx, pub.icon)
		if err != nil {
			return nil, err
		}
		row.Icon = &a
	}
	row.PreviewImages = []store.Asset{}
	for _, img := range pub.images {
		a, err := r.putAsset(ctx, img)
		if err != nil {
			return nil, err
		}
		row.PreviewImages = append(row.PreviewImages, a)
	}
	now := r.now()
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		old, err := store.LockIntegration(ctx, tx, name)
		switch {
		case errors.Is(err, store.ErrNotFound):
			row.ID, row.Version, row.CreatedAt, row.UpdatedAt = store.NewID(), 1, now, now
			if row.Secrets, err = r.sealSecrets(row.ID, pub.secrets); err != nil {
				return err
			}
			return store.InsertRow(ctx, tx, &row)
		case err != nil:
			return err
		case !canSee(ctx, old):
			return NotFound("integration")
		case old.OrganizationID != org.ID:
			// SECURITY: a name belongs to its organization.
			return Forbidden("integration %q is published by another organization", name)
		}
		row.ID, row.Version, row.CreatedAt, row.UpdatedAt = old.ID, old.Version+1, old.CreatedAt, now
		if row.Secrets, err = r.sealSecrets(row.ID, pub.secrets); err != nil {
			return err
		}
		_, err = tx.NewUpdate().Model(&row).WherePK().Exec(ctx)
		return err
	})
	if errors.Is(err, store.ErrConflict) {
		return nil, Conflict("integration %q was published at the same time; try again", name)
	}
	if err != nil {
		return nil, err
	}
	return &row, nil
}

func (r *mutationResolver) UnpublishIntegration(ctx context.Context, name string) (bool, error) {
	in, err := store.GetIntegration(ctx, r.DB, name)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil // there is none: 204
	} else if err != nil {
		return false, err
	}
	if !canSee(ctx, in) {
		// SECURITY: answered as for a name that is no integration's (204),
		// so that unpublishing does not tell which private names exist.
		return false, nil
	}
	// SECURITY: the publishing organization's admins unpublish.
	if err := requireOrgRole(ctx, in.OrganizationID, store.RoleAdmin, "integration"); err != nil {
		return false, err
	}
	return store.DeleteIntegration(ctx, r.DB, name)
}

// IntegrationAsset is an integration's icon or a preview image, by digest
// (IntegrationAssetPath, then {name}/{digest}).
func (r *Resolver) IntegrationAsset(ctx context.Context, name, digest string) (*Served, error) {
	in, err := store.GetIntegration(ctx, r.DB, name)
	if err != nil {
		return nil, errNoDocument
	}
	assets := slices.Clone(in.PreviewImages)
	if in.Icon != nil {
		assets = append(assets, *in.Icon)
	}
	i := slices.IndexFunc(assets, func(a store.Asset) bool { return a.SHA256 == digest })
	if i < 0 {
		return nil, errNoDocument
	}
	body, err := r.Blobs.Open(ctx, digest)
	if err != nil {
		return nil, errNoDocument
	}
	return &Served{ContentType: assets[i].ContentType, Untrusted: true,
		Cache: "public, max-age=31536000, immutable", Body: body}, nil
}

type integrationResolver struct{ *Resolver }

var _ generated.IntegrationResolver = (*integrationResolver)(nil)

func (r *Resolver) Integration() generated.IntegrationResolver { return &integrationResolver{r} }

func (r *integrationResolver) Summary(_ context.Context, in *store.Integration) (*string, error) {
	if in.Summary == "" {
		return nil, nil
	}
	return &in.Summary, nil
}

func (r *Resolver) assetURL(in *store.Integration, a store.Asset) string {
	return r.URLs.API(IntegrationAssetPath + pathEscape(in.Name) + "/" + a.SHA256)
}

func (r *integrationResolver) PreviewImages(_ context.Context, in *store.Integration) ([]string, error) {
	out := make([]string, len(in.PreviewImages))
	for i, a := range in.PreviewImages {
		out[i] = r.assetURL(in, a)
	}
	return out, nil
}

func (r *integrationResolver) Verified(context.Context, *store.Integration) (bool, error) {
	return false, nil
}

func decodeList[T any](raw json.RawMessage) ([]*T, error) {
	out := []*T{}
	if len(raw) == 0 {
		return out, nil
	}
	return out, json.Unmarshal(raw, &out)
}

func (r *integrationResolver) Blocks(_ context.Context, in *store.Integration) ([]*model.IntegrationBlock, error) {
	return decodeList[model.IntegrationBlock](in.Blocks)
}

func (r *integrationResolver) ContentSources(_ context.Context, in *store.Integration) ([]*model.IntegrationContentSource, error) {
	return decodeList[model.IntegrationContentSource](in.ContentSources)
}

func (r *integrationResolver) ExternalLinks(_ context.Context, in *store.Integration) ([]*model.IntegrationExternalLink, error) {
	return decodeList[model.IntegrationExternalLink](in.ExternalLinks)
}

func (r *integrationResolver) Configurations(_ context.Context, in *store.Integration) (*model.IntegrationConfigurations, error) {
	var c map[string]map[string]any
	if err := json.Unmarshal(in.Configurations, &c); err != nil {
		return nil, err
	}
	return &model.IntegrationConfigurations{Account: c["account"], Space: c["space"], Site: c["site"]}, nil
}

// Owner is the publisher's public card: an integration is seen across
// organizations, its publisher's internals are not.
func (r *integrationResolver) Owner(ctx context.Context, in *store.Integration) (*model.OrganizationSummary, error) {
	o, err := r.loaders(ctx).Organization.Load(ctx, in.OrganizationID)()
	if err != nil {
		return nil, err
	}
	return model.PublicCard(o), nil
}

func (r *integrationResolver) Urls(_ context.Context, in *store.Integration) (*model.IntegrationURLs, error) {
	name := pathEscape(in.Name)
	u := &model.IntegrationURLs{
		Location:       r.URLs.API("/v1/integrations/" + name),
		App:            r.URLs.App("/integrations/" + name),
		Assets:         r.URLs.API(IntegrationAssetPath + name),
		PublicEndpoint: r.URLs.App("/integrations/" + name + "/public"),
	}
	if in.Icon != nil {
		icon := r.assetURL(in, *in.Icon)
		u.Icon = &icon
	}
	return u, nil
}

func (r *integrationResolver) Permissions(ctx context.Context, in *store.Integration) (*model.IntegrationPermissions, error) {
	role, _ := orgRole(ctx, in.OrganizationID, "integration")
	return &model.IntegrationPermissions{Admin: role.AtLeast(store.RoleAdmin)}, nil
}

func (r *integrationResolver) ContentSecurityPolicy(_ context.Context, in *store.Integration) (any, error) {
	if len(in.ContentSecurityPolicy) == 0 {
		return nil, nil
	}
	var v any
	return v, json.Unmarshal(in.ContentSecurityPolicy, &v)
}

// jsonObject decodes a stored JSON object (a configuration).
func jsonObject(raw json.RawMessage) (map[string]any, error) {
	out := map[string]any{}
	if len(raw) == 0 {
		return out, nil
	}
	return out, json.Unmarshal(raw, &out)
}

// administeredOrganization is the organization ref names (an id, or a
// hostname or subdomain) for a caller who administers it: 404 when there is
// none or the caller is not a member, 403 when they are not an admin.
func (r *Resolver) administeredOrganization(ctx context.Context, ref string) (*store.Organization, error) {
	org, err := store.OrganizationByRef(ctx, r.DB, ref)
	if err != nil {
		return nil, orNotFound(err, "organization")
	}
	if err := requireOrgRole(ctx, org.ID, store.RoleAdmin, "organization"); err != nil {
		return nil, err
	}
	return org, nil
}
