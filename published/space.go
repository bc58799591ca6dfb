package published

import (
	"net/http"
	"net/url"

	"github.com/docsapi/docsapi/graph"
)

// serveSpace answers a space's published address ({prefix}/s/{spaceId},
// Space.urls.published): a space is read by visitors through the sites
// that publish it, so the address leads to the space in a published site
// that shows it to anyone; with none, a page saying so.
func (rd *Reader) serveSpace(w http.ResponseWriter, r *http.Request, spaceID string) {
	sites, err := rd.res.OpenSitesOfSpace(r.Context(), spaceID)
	if err != nil {
		rd.failed(w, r, err)
		return
	}
	for _, s := range sites {
		a := rd.addressOfSite(s.OrganizationID, s.ID, s.Hostname)
		v, err := rd.res.AdmitVisitor(r.Context(), graph.VisitorRequest{OrganizationID: s.OrganizationID, SiteName: s.ID})
		if err != nil {
			continue
		}
		ctx := graph.WithVisitor(r.Context(), v)
		site, err := rd.loadSite(ctx, v, a)
		if err != nil {
			continue
		}
		if ss := site.siteSpaceOf(spaceID); ss != nil {
			http.Redirect(w, r, site.addressOf(ss)+"/", http.StatusFound)
			return
		}
	}
	rd.writeStatusPage(w, r, http.StatusNotFound, "Not published",
		"This space is not published in a site its readers can open. Its organization publishes spaces through sites.")
}

// addressOfSite is the base of a site's pages from this host: its custom
// hostname, or its place under the published prefix.
func (rd *Reader) addressOfSite(orgID, siteID string, hostname *string) string {
	if hostname != nil {
		return "https://" + *hostname
	}
	return rd.prefix + "/" + url.PathEscape(orgID) + "/" + url.PathEscape(siteID)
}

// siteSpaceOf is the first site space of the site showing space id.
func (s *site) siteSpaceOf(id string) *siteSpace {
	for _, sec := range s.sectionsShown() {
		for _, ss := range sec.siteSpaces {
			if ss.space.ID == id {
				return ss
			}
		}
	}
	return nil
}
