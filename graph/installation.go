package graph

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/99designs/gqlgen/graphql"
	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Installations of integrations on organizations, and within them on spaces
// and sites (see integration.go for who sees what). Each change records, in
// its transaction, the reference's event: installation_setup (its payload
// carries installationId, status and previous {status, configuration}; a new
// installation comes from "pending" with no configuration),
// installation_deleted, and their space_ and site_ counterparts.

// installation reads installation id of the integration for an admin of
// the organization it is installed on.
func (r *Resolver) installation(ctx context.Context, in *store.Integration, id string) (*store.IntegrationInstallation, error) {
	inst, err := store.GetInstallation(ctx, r.DB, in.ID, id)
	if err != nil {
		return nil, orNotFound(err, "installation")
	}
	// SECURITY: an installation is its organization's admins' business only.
	if err := requireOrgRole(ctx, inst.OrganizationID, store.RoleAdmin, "installation"); err != nil {
		return nil, err
	}
	return inst, nil
}

// installationOf reads the integration by name and one of its installations.
func (r *Resolver) installationOf(ctx context.Context, name, id string) (*store.Integration, *store.IntegrationInstallation, error) {
	in, err := r.integration(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	inst, err := r.installation(ctx, in, id)
	return in, inst, err
}

// setupPayload is the payload of a *_setup event.
func setupPayload(installationID string, status store.InstallationStatus, prevStatus store.InstallationStatus, prevConfig json.RawMessage) map[string]any {
	var prev map[string]any
	_ = json.Unmarshal(prevConfig, &prev)
	if prev == nil {
		prev = map[string]any{}
	}
	return map[string]any{"installationId": installationID, "status": status,
		"previous": map[string]any{"status": prevStatus, "configuration": prev}}
}

func deletedPayload(installationID string, prevConfig json.RawMessage) map[string]any {
	var prev map[string]any
	_ = json.Unmarshal(prevConfig, &prev)
	if prev == nil {
		prev = map[string]any{}
	}
	return map[string]any{"installationId": installationID, "previous": map[string]any{"configuration": prev}}
}

var emptyObject = json.RawMessage(`{}`)

// actorID is the calling user's id, the actor of the events a change records.
func actorID(ctx context.Context) string {
	if c, err := CallerFrom(ctx); err == nil {
		return c.User.ID
	}
	return ""
}

func (r *mutationResolver) InstallIntegration(ctx context.Context, name string, input model.InstallIntegrationInput) (*store.IntegrationInstallation, error) {
	in, err := r.integration(ctx, name)
	if err != nil {
		return nil, err
	}
	// SECURITY: an organization's admins install on it.
	org, err := r.administeredOrganization(ctx, input.Organization)
	if err != nil {
		return nil, err
	}
	var inst *store.IntegrationInstallation
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		existing, err := store.InstallationOn(ctx, tx, in.ID, org.ID)
		if err == nil {
			inst = existing
			return nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		now := r.now()
		inst = &store.IntegrationInstallation{ID: store.NewID(), IntegrationID: in.ID, OrganizationID: org.ID, Status: store.InstallationActive,
			SpaceSelection: store.SelectionSelected, SiteSelection: store.SelectionSelected, Configuration: emptyObject, ExternalIDs: []string{},
			CreatedAt: now, UpdatedAt: now, IntegrationName: in.Name}
		if err := store.InsertRow(ctx, tx, inst); err != nil {
			return err
		}
		_, err = store.RecordEvent(ctx, tx, store.NewEvent{ActorID: actorID(ctx), Type: "installation_setup", OrganizationID: org.ID, InstallationID: inst.ID,
			Payload: setupPayload(inst.ID, inst.Status, store.InstallationPending, nil), At: now})
		return err
	})
	if errors.Is(err, store.ErrConflict) {
		return store.InstallationOn(ctx, r.DB, in.ID, org.ID) // installed at the same time
	}
	return inst, err
}

// checkExternalIDs validates the external ids of an update.
func checkExternalIDs(ids []string) error {
	if len(ids) > maxExternalIDs {
		return Invalid("externalIds", "at most %d", maxExternalIDs)
	}
	for _, id := range ids {
		if err := checkLength("externalIds", id, 1, 255); err != nil {
			return err
		}
	}
	return nil
}

// contentChanges applies the externalIds and configuration of an update.
func contentChanges(ids graphql.Omittable[[]string], config graphql.Omittable[map[string]any], dstIDs *[]string, dstConfig *json.RawMessage) ([]string, error) {
	var columns []string
	if v, set := ids.ValueOK(); set {
		if err := checkExternalIDs(v); err != nil {
			return nil, err
		}
		if v == nil {
			v = []string{}
		}
		*dstIDs = v
		columns = append(columns, "external_ids")
	}
	if v, set := config.ValueOK(); set {
		if v == nil {
			v = map[string]any{}
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, Invalid("configuration", "must be a JSON object")
		}
		*dstConfig = raw
		columns = append(columns, "configuration")
	}
	return columns, nil
}

func (r *mutationResolver) UpdateIntegrationInstallation(ctx context.Context, name, id string, input model.UpdateIntegrationInstallationInput) (*store.IntegrationInstallation, error) {
	_, inst, err := r.installationOf(ctx, name, id)
	if err != nil {
		return nil, err
	}
	prevStatus, prevConfig := inst.Status, inst.Configuration
	columns, err := contentChanges(input.ExternalIds, input.Configuration, &inst.ExternalIDs, &inst.Configuration)
	if err != nil {
		return nil, err
	}
	if v, _ := input.SpaceSelection.ValueOK(); v != nil {
		inst.SpaceSelection, columns = *v, append(columns, "space_selection")
	}
	if v, _ := input.SiteSelection.ValueOK(); v != nil {
		inst.SiteSelection, columns = *v, append(columns, "site_selection")
	}
	inst.UpdatedAt = r.now()
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		if err := store.UpdateRow(ctx, tx, inst, append(columns, "updated_at")...); err != nil {
			return err
		}
		_, err := store.RecordEvent(ctx, tx, store.NewEvent{ActorID: actorID(ctx), Type: "installation_setup", OrganizationID: inst.OrganizationID,
			InstallationID: inst.ID, Payload: setupPayload(inst.ID, inst.Status, prevStatus, prevConfig), At: inst.UpdatedAt})
		return err
	})
	return inst, err
}

func (r *mutationResolver) UninstallIntegration(ctx context.Context, name, id string) (bool, error) {
	in, err := r.integration(ctx, name)
	if err != nil {
		return false, err
	}
	if _, err := store.GetInstallation(ctx, r.DB, in.ID, id); errors.Is(err, store.ErrNotFound) {
		return false, nil // there is none: 204
	}
	inst, err := r.installation(ctx, in, id)
	if err != nil {
		return false, err
	}
	var deleted bool
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		if _, err := store.RecordEvent(ctx, tx, store.NewEvent{ActorID: actorID(ctx), Type: "installation_deleted", OrganizationID: inst.OrganizationID,
			InstallationID: inst.ID, Payload: deletedPayload(inst.ID, inst.Configuration), At: r.now()}); err != nil {
			return err
		}
		deleted, err = store.DeleteInstallation(ctx, tx, inst.ID)
		return err
	})
	return deleted, err
}

// targetAllows tells whether an integration may be installed on kind
// ("space" or "site").
func targetAllows(in *store.Integration, kind store.IntegrationTarget) error {
	if in.Target != store.TargetAll && in.Target != kind {
		return Invalid(string(kind), "this integration's target is %s: it cannot be installed on a %s", in.Target, kind)
	}
	return nil
}

func (r *mutationResolver) InstallIntegrationOnSpace(ctx context.Context, name, id string, input model.InstallIntegrationOnSpaceInput) (*store.IntegrationSpaceInstallation, error) {
	in, inst, err := r.installationOf(ctx, name, id)
	if err != nil {
		return nil, err
	}
	s, err := store.GetSpace(ctx, r.DB, input.Space)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (s.DeletedAt != nil || s.OrganizationID != inst.OrganizationID)) {
		return nil, NotFound("space") // SECURITY: spaces of the installation's organization only
	} else if err != nil {
		return nil, err
	}
	if err := targetAllows(in, store.TargetSpace); err != nil {
		return nil, err
	}
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		if _, err := store.GetSpaceInstallation(ctx, tx, inst.ID, s.ID); err == nil {
			return nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		now := r.now()
		row := &store.IntegrationSpaceInstallation{SpaceID: s.ID, ContentInstallation: store.ContentInstallation{InstallationID: inst.ID,
			Status: store.InstallationActive, Configuration: emptyObject, ExternalIDs: []string{}, CreatedAt: now, UpdatedAt: now}}
		if err := store.InsertRow(ctx, tx, row); err != nil {
			return err
		}
		_, err := store.RecordEvent(ctx, tx, store.NewEvent{ActorID: actorID(ctx), Type: "space_installation_setup", OrganizationID: inst.OrganizationID,
			InstallationID: inst.ID, SpaceID: s.ID, Payload: withSpace(setupPayload(inst.ID, store.InstallationActive, store.InstallationPending, nil), s.ID), At: now})
		return err
	})
	if err != nil && !errors.Is(err, store.ErrConflict) {
		return nil, err
	}
	return store.GetSpaceInstallation(ctx, r.DB, inst.ID, s.ID)
}

func withSpace(p map[string]any, spaceID string) map[string]any { p["spaceId"] = spaceID; return p }
func withSite(p map[string]any, siteID string) map[string]any   { p["siteId"] = siteID; return p }

func (r *mutationResolver) UpdateIntegrationSpaceInstallation(ctx context.Context, name, id, spaceID string, input model.UpdateIntegrationContentInstallationInput) (*store.IntegrationSpaceInstallation, error) {
	return updateContentInstallation(ctx, r.Resolver, onSpaces, name, id, spaceID, input)
}
func (r *mutationResolver) UninstallIntegrationFromSpace(ctx context.Context, name, id, spaceID string) (bool, error) {
	return uninstallContentInstallation(ctx, r.Resolver, onSpaces, name, id, spaceID)
}
func (r *mutationResolver) InstallIntegrationOnSite(ctx context.Context, name, id string, input model.InstallIntegrationOnSiteInput) (*store.IntegrationSiteInstallation, error) {
	in, inst, err := r.installationOf(ctx, name, id)
	if err != nil {
		return nil, err
	}
	// SECURITY: sites of the installation's organization only.
	site, err := store.GetSite(ctx, r.DB, inst.OrganizationID, input.Site)
	if err != nil {
		return nil, orNotFound(err, "site")
	}
	if err := targetAllows(in, store.TargetSite); err != nil {
		return nil, err
	}
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		if _, err := store.GetSiteInstallation(ctx, tx, inst.ID, site.ID); err == nil {
			return nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		now := r.now()
		row := &store.IntegrationSiteInstallation{SiteID: site.ID, ContentInstallation: store.ContentInstallation{InstallationID: inst.ID,
			Status: store.InstallationActive, Configuration: emptyObject, ExternalIDs: []string{}, CreatedAt: now, UpdatedAt: now}}
		if err := store.InsertRow(ctx, tx, row); err != nil {
			return err
		}
		_, err := store.RecordEvent(ctx, tx, store.NewEvent{ActorID: actorID(ctx), Type: "site_installation_setup", OrganizationID: inst.OrganizationID,
			InstallationID: inst.ID, SiteID: site.ID, Payload: withSite(setupPayload(inst.ID, store.InstallationActive, store.InstallationPending, nil), site.ID), At: now})
		return err
	})
	if err != nil && !errors.Is(err, store.ErrConflict) {
		return nil, err
	}
	return store.GetSiteInstallation(ctx, r.DB, inst.ID, site.ID)
}

func (r *mutationResolver) UpdateIntegrationSiteInstallation(ctx context.Context, name, id, siteID string, input model.UpdateIntegrationContentInstallationInput) (*store.IntegrationSiteInstallation, error) {
	return updateContentInstallation(ctx, r.Resolver, onSites, name, id, siteID, input)
}
func (r *mutationResolver) UninstallIntegrationFromSite(ctx context.Context, name, id, siteID string) (bool, error) {
	return uninstallContentInstallation(ctx, r.Resolver, onSites, name, id, siteID)
}

// installTarget is what an installation on content is on, a space or a
// site: what differs between the two, so that updating and uninstalling are
// written once.
type installTarget[T any] struct {
	kind   string // "space" or "site", in event types and errors
	get    func(ctx context.Context, db bun.IDB, installationID, id string) (T, error)
	delete func(ctx context.Context, db bun.IDB, installationID, id string) (bool, error)
	fields func(T) *store.ContentInstallation
	// on points an event (and its payload) at the content.
	on func(e *store.NewEvent, id string)
}

var onSpaces = installTarget[*store.IntegrationSpaceInstallation]{kind: "space",
	get: store.GetSpaceInstallation, delete: store.DeleteSpaceInstallation,
	fields: func(i *store.IntegrationSpaceInstallation) *store.ContentInstallation { return &i.ContentInstallation },
	on:     func(e *store.NewEvent, id string) { e.SpaceID, e.Payload = id, withSpace(e.Payload, id) }}

var onSites = installTarget[*store.IntegrationSiteInstallation]{kind: "site",
	get: store.GetSiteInstallation, delete: store.DeleteSiteInstallation,
	fields: func(i *store.IntegrationSiteInstallation) *store.ContentInstallation { return &i.ContentInstallation },
	on:     func(e *store.NewEvent, id string) { e.SiteID, e.Payload = id, withSite(e.Payload, id) }}

// updateContentInstallation changes an installation on a space or a site and
// records its <kind>_installation_setup event in the same transaction.
func updateContentInstallation[T any](ctx context.Context, r *Resolver, target installTarget[T], name, id, contentID string, input model.UpdateIntegrationContentInstallationInput) (T, error) {
	var zero T
	_, inst, err := r.installationOf(ctx, name, id)
	if err != nil {
		return zero, err
	}
	row, err := target.get(ctx, r.DB, inst.ID, contentID)
	if err != nil {
		return zero, orNotFound(err, target.kind+" installation")
	}
	f := target.fields(row)
	prevStatus, prevConfig := f.Status, f.Configuration
	columns, err := contentChanges(input.ExternalIds, input.Configuration, &f.ExternalIDs, &f.Configuration)
	if err != nil {
		return zero, err
	}
	f.UpdatedAt = r.now()
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		if err := store.UpdateRow(ctx, tx, row, append(columns, "updated_at")...); err != nil {
			return err
		}
		e := store.NewEvent{ActorID: actorID(ctx), Type: target.kind + "_installation_setup", OrganizationID: inst.OrganizationID,
			InstallationID: inst.ID, Payload: setupPayload(inst.ID, f.Status, prevStatus, prevConfig), At: f.UpdatedAt}
		target.on(&e, contentID)
		_, err := store.RecordEvent(ctx, tx, e)
		return err
	})
	return row, err
}

// uninstallContentInstallation removes an installation from a space or a
// site (false when there was none) and records its
// <kind>_installation_deleted event in the same transaction.
func uninstallContentInstallation[T any](ctx context.Context, r *Resolver, target installTarget[T], name, id, contentID string) (bool, error) {
	_, inst, err := r.installationOf(ctx, name, id)
	if err != nil {
		return false, err
	}
	row, err := target.get(ctx, r.DB, inst.ID, contentID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	var deleted bool
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		e := store.NewEvent{ActorID: actorID(ctx), Type: target.kind + "_installation_deleted", OrganizationID: inst.OrganizationID,
			InstallationID: inst.ID, Payload: deletedPayload(inst.ID, target.fields(row).Configuration), At: r.now()}
		target.on(&e, contentID)
		if _, err := store.RecordEvent(ctx, tx, e); err != nil {
			return err
		}
		deleted, err = target.delete(ctx, tx, inst.ID, contentID)
		return err
	})
	return deleted, err
}

// Lists and fields.

func (r *integrationResolver) Installations(ctx context.Context, in *store.Integration, page *string, limit *int, _ *int, _ *string, externalID *string) (*model.IntegrationInstallationList, error) {
	return paginate(page, limit, listQuery[*store.IntegrationInstallation]{
		// SECURITY: installations on the organizations the caller administers.
		read: func(p store.Page) ([]*store.IntegrationInstallation, error) {
			return store.ListInstallations(ctx, r.DB, in.ID, callerOrgs(ctx, store.RoleAdmin), store.StringOf(externalID), p)
		},
		key: func(i *store.IntegrationInstallation) store.Keyset { return store.Keyset{Time: i.CreatedAt, ID: i.ID} },
	})
}

func (r *integrationResolver) Installation(ctx context.Context, in *store.Integration, id string) (*store.IntegrationInstallation, error) {
	return r.installation(ctx, in, id)
}

func (r *integrationResolver) SpaceInstallations(ctx context.Context, in *store.Integration, page *string, limit *int, _ *int, _ *string, externalID *string) (*model.IntegrationSpaceInstallationList, error) {
	// SECURITY: in the organizations the caller administers.
	return r.spaceInstallations(ctx, store.ContentInstallationFilter{IntegrationID: in.ID, OrgIDs: callerOrgs(ctx, store.RoleAdmin), ExternalID: store.StringOf(externalID)}, page, limit)
}

func (r *integrationResolver) SiteInstallations(ctx context.Context, in *store.Integration, page *string, limit *int, _ *int, _ *string, externalID *string) (*model.IntegrationSiteInstallationList, error) {
	// SECURITY: in the organizations the caller administers.
	return r.siteInstallations(ctx, store.ContentInstallationFilter{IntegrationID: in.ID, OrgIDs: callerOrgs(ctx, store.RoleAdmin), ExternalID: store.StringOf(externalID)}, page, limit)
}

func (r *Resolver) spaceInstallations(ctx context.Context, f store.ContentInstallationFilter, page *string, limit *int) (*model.IntegrationSpaceInstallationList, error) {
	return paginate(page, limit, listQuery[*store.IntegrationSpaceInstallation]{
		read: func(p store.Page) ([]*store.IntegrationSpaceInstallation, error) {
			return store.ListSpaceInstallations(ctx, r.DB, f, p)
		},
		key: func(i *store.IntegrationSpaceInstallation) store.Keyset {
			return store.Keyset{Time: i.CreatedAt, ID: i.SpaceID}
		},
	})
}

func (r *Resolver) siteInstallations(ctx context.Context, f store.ContentInstallationFilter, page *string, limit *int) (*model.IntegrationSiteInstallationList, error) {
	return paginate(page, limit, listQuery[*store.IntegrationSiteInstallation]{
		read: func(p store.Page) ([]*store.IntegrationSiteInstallation, error) {
			return store.ListSiteInstallations(ctx, r.DB, f, p)
		},
		key: func(i *store.IntegrationSiteInstallation) store.Keyset {
			return store.Keyset{Time: i.CreatedAt, ID: i.SiteID}
		},
	})
}

type installationResolver struct{ *Resolver }

var _ generated.IntegrationInstallationResolver = (*installationResolver)(nil)

func (r *Resolver) IntegrationInstallation() generated.IntegrationInstallationResolver {
	return &installationResolver{r}
}

func (r *installationResolver) Spaces(_ context.Context, inst *store.IntegrationInstallation) (int, error) {
	return inst.SpaceCount, nil
}

func (r *installationResolver) Configuration(_ context.Context, inst *store.IntegrationInstallation) (map[string]any, error) {
	return jsonObject(inst.Configuration)
}

func (r *Resolver) installationPath(name, id string) string {
	return "/v1/integrations/" + pathEscape(name) + "/installations/" + pathEscape(id)
}

func (r *installationResolver) Urls(_ context.Context, inst *store.IntegrationInstallation) (*model.IntegrationInstallationURLs, error) {
	name := inst.IntegrationName
	path := r.installationPath(name, inst.ID)
	return &model.IntegrationInstallationURLs{Location: r.URLs.API(path), App: r.URLs.App("/o/" + pathEscape(inst.OrganizationID) + "/integrations/" + pathEscape(name)),
		PublicEndpoint: r.URLs.App(path + "/public")}, nil
}

func (r *installationResolver) Target(_ context.Context, inst *store.IntegrationInstallation) (*model.IntegrationInstallationTarget, error) {
	return &model.IntegrationInstallationTarget{Organization: inst.OrganizationID}, nil
}

func (r *installationResolver) SpaceInstallations(ctx context.Context, inst *store.IntegrationInstallation, page *string, limit *int, _ *int, _ *string) (*model.IntegrationSpaceInstallationList, error) {
	return r.spaceInstallations(ctx, store.ContentInstallationFilter{InstallationID: inst.ID}, page, limit)
}

func (r *installationResolver) SpaceInstallation(ctx context.Context, inst *store.IntegrationInstallation, spaceID string) (*store.IntegrationSpaceInstallation, error) {
	row, err := store.GetSpaceInstallation(ctx, r.DB, inst.ID, spaceID)
	return row, orNotFound(err, "space installation")
}

func (r *installationResolver) SiteInstallations(ctx context.Context, inst *store.IntegrationInstallation, page *string, limit *int, _ *int, _ *string) (*model.IntegrationSiteInstallationList, error) {
	return r.siteInstallations(ctx, store.ContentInstallationFilter{InstallationID: inst.ID}, page, limit)
}

func (r *installationResolver) SiteInstallation(ctx context.Context, inst *store.IntegrationInstallation, siteID string) (*store.IntegrationSiteInstallation, error) {
	row, err := store.GetSiteInstallation(ctx, r.DB, inst.ID, siteID)
	return row, orNotFound(err, "site installation")
}

type spaceInstallationResolver struct{ *Resolver }
type siteInstallationResolver struct{ *Resolver }

func (r *Resolver) IntegrationSpaceInstallation() generated.IntegrationSpaceInstallationResolver {
	return &spaceInstallationResolver{r}
}

func (r *Resolver) IntegrationSiteInstallation() generated.IntegrationSiteInstallationResolver {
	return &siteInstallationResolver{r}
}

func (r *spaceInstallationResolver) Integration(_ context.Context, row *store.IntegrationSpaceInstallation) (string, error) {
	return row.IntegrationName, nil
}

func (r *spaceInstallationResolver) Configuration(_ context.Context, row *store.IntegrationSpaceInstallation) (map[string]any, error) {
	return jsonObject(row.Configuration)
}

func (r *spaceInstallationResolver) Urls(_ context.Context, row *store.IntegrationSpaceInstallation) (*model.IntegrationContentInstallationURLs, error) {
	path := r.installationPath(row.IntegrationName, row.InstallationID) + "/spaces/" + pathEscape(row.SpaceID)
	return &model.IntegrationContentInstallationURLs{Location: r.URLs.API(path), PublicEndpoint: r.URLs.App(path + "/public")}, nil
}

func (r *spaceInstallationResolver) Space(ctx context.Context, row *store.IntegrationSpaceInstallation) (*store.Space, error) {
	return r.space(ctx, row.SpaceID)
}

func (r *siteInstallationResolver) Integration(_ context.Context, row *store.IntegrationSiteInstallation) (string, error) {
	return row.IntegrationName, nil
}

func (r *siteInstallationResolver) Configuration(_ context.Context, row *store.IntegrationSiteInstallation) (map[string]any, error) {
	return jsonObject(row.Configuration)
}

func (r *siteInstallationResolver) Urls(_ context.Context, row *store.IntegrationSiteInstallation) (*model.IntegrationContentInstallationURLs, error) {
	path := r.installationPath(row.IntegrationName, row.InstallationID) + "/sites/" + pathEscape(row.SiteID)
	return &model.IntegrationContentInstallationURLs{Location: r.URLs.API(path), PublicEndpoint: r.URLs.App(path + "/public")}, nil
}

func (r *siteInstallationResolver) Site(ctx context.Context, row *store.IntegrationSiteInstallation) (*store.Site, error) {
	// The installation's organization is its site's.
	return r.site(ctx, row.OrganizationID, row.SiteID)
}

// Events.

func (r *integrationResolver) Events(ctx context.Context, in *store.Integration, page *string, limit *int, _ *int, _ *string) (*model.IntegrationEventList, error) {
	return paginate(page, limit, listQuery[*store.IntegrationEvent]{
		// SECURITY: events of installations on the organizations the caller administers.
		read: func(p store.Page) ([]*store.IntegrationEvent, error) {
			return store.ListIntegrationEvents(ctx, r.DB, in.ID, callerOrgs(ctx, store.RoleAdmin), p)
		},
		key: func(e *store.IntegrationEvent) store.Keyset { return store.Keyset{Pos: int(e.Seq), ID: e.ID} },
	})
}

func (r *integrationResolver) Event(ctx context.Context, in *store.Integration, id string) (*model.IntegrationEventDetail, error) {
	e, err := store.GetIntegrationEvent(ctx, r.DB, in.ID, id)
	if err != nil {
		return nil, orNotFound(err, "event")
	}
	// SECURITY: the admins of the organization the event happened in.
	if err := requireOrgRole(ctx, e.OrganizationID, store.RoleAdmin, "event"); err != nil {
		return nil, err
	}
	logs, err := store.IntegrationEventLogs(ctx, r.DB, e.ID)
	if logs == nil {
		logs = []*store.IntegrationEventLog{}
	}
	return &model.IntegrationEventDetail{Event: e, Trace: &model.IntegrationEventTrace{Logs: logs}}, err
}

type integrationEventResolver struct{ *Resolver }

func (r *Resolver) IntegrationEvent() generated.IntegrationEventResolver {
	return &integrationEventResolver{r}
}

// Status is the reference's two-valued outcome: an event has failed only when
// its delivery was given up; one not delivered (yet) has not.
func (r *integrationEventResolver) Status(_ context.Context, e *store.IntegrationEvent) (model.IntegrationEventStatus, error) {
	if e.Status == store.EventFailed {
		return model.IntegrationEventStatusFailed, nil
	}
	return model.IntegrationEventStatusSuccess, nil
}

func (r *integrationEventResolver) Payload(_ context.Context, e *store.IntegrationEvent) (map[string]any, error) {
	return e.Payload(), nil
}
