package graph

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-pdf/fpdf"

	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// PDFs of a change request's content (or of one page): the change request's
// `pdf` field gives a signed address, valid for an hour like file downloads,
// where this server renders the content with go-pdf/fpdf.

// PDFPath is where PDFs are served: /pdf/{revisionId}.
const PDFPath = "/pdf/"

// pdfTarget names what a PDF address prints, for its signature.
func pdfTarget(page string, only bool) string {
	return "pdf:" + page + ":" + strconv.FormatBool(only)
}

func (r *changeRequestResolver) PDF(ctx context.Context, cr *store.ChangeRequest, page *string, only *bool) (*model.ChangeRequestPDF, error) {
	p, o := "", only != nil && *only
	if page != nil {
		rev, err := store.GetRevision(ctx, r.DB, cr.OrganizationID, cr.SpaceID, cr.Revision)
		if err != nil {
			return nil, err
		}
		t, err := r.tree(ctx, rev)
		if err != nil {
			return nil, err
		}
		if t.Page(*page) == nil {
			return nil, NotFound("page")
		}
		p = *page
	}
	key, err := r.key(ctx)
	if err != nil {
		return nil, err
	}
	expires := downloadExpiry(r.now())
	q := "?expires=" + strconv.FormatInt(expires, 10) + "&signature=" + downloadSignature(key, cr.Revision, pdfTarget(p, o), expires)
	if p != "" {
		q += "&page=" + pathEscape(p) + "&only=" + strconv.FormatBool(o)
	}
	return &model.ChangeRequestPDF{URL: r.URLs.API(PDFPath + pathEscape(cr.Revision) + q)}, nil
}

// PDF renders the PDF a signed address names (PDFPath, then the revision
// id and the address's query); NotFound for anything else.
func (r *Resolver) PDF(ctx context.Context, revisionID string, query url.Values) (*Served, error) {
	page, only := query.Get("page"), query.Get("only") == "true"
	if err := r.checkSigned(ctx, query, revisionID, pdfTarget(page, only)); errors.Is(err, errBadSignature) {
		return nil, errNoDocument
	} else if err != nil {
		return nil, err
	}
	org, err := store.RevisionOrganization(ctx, r.DB, revisionID)
	if err != nil {
		return nil, orNotFound(err, "revision")
	}
	content, err := store.LoadContent(ctx, r.DB, org, revisionID)
	if err != nil {
		return nil, errNoDocument
	}
	t := store.NewPageTree(content.Pages)
	var digests []string
	for _, p := range content.Pages {
		if p.BodySHA256 != nil {
			digests = append(digests, *p.BodySHA256)
		}
	}
	bodies, err := store.PageBodies(ctx, r.DB, org, digests)
	if err != nil {
		return nil, err
	}
	roots := t.Children(nil)
	if page != "" {
		p := t.Page(page)
		if p == nil {
			return nil, errNoDocument
		}
		roots = []*store.RevisionPage{p}
	}
	doc, err := renderPDF(t, roots, !only, func(p *store.RevisionPage) string { return bodies[store.StringOf(p.BodySHA256)] })
	if err != nil {
		return nil, err
	}
	return &Served{ContentType: "application/pdf", Filename: "content.pdf", Size: int64(len(doc)),
		Cache: "private, max-age=3600", Body: bytes.NewReader(doc)}, nil
}

// renderPDF prints pages (and, with nested, the pages under them) in tree
// order: each page's title, then its markdown, line by line, with headings,
// list items and code set apart.
func renderPDF(t *store.PageTree, pages []*store.RevisionPage, nested bool, body func(*store.RevisionPage) string) ([]byte, error) {
	pdf := fpdf.New("P", "mm", "A4", "")
	tr := pdf.UnicodeTranslatorFromDescriptor("") // core fonts speak cp1252
	pdf.SetMargins(20, 20, 20)
	pdf.SetAutoPageBreak(true, 20)
	var print func(p *store.RevisionPage, depth int)
	print = func(p *store.RevisionPage, depth int) {
		pdf.AddPage()
		pdf.SetFont("Helvetica", "B", 20-float64(min(depth, 3))*2)
		pdf.MultiCell(0, 9, tr(p.Title), "", "L", false)
		pdf.Ln(3)
		if p.Description != nil {
			pdf.SetFont("Helvetica", "I", 11)
			pdf.MultiCell(0, 6, tr(*p.Description), "", "L", false)
			pdf.Ln(2)
		}
		inCode := false
		for _, line := range strings.Split(body(p), "\n") {
			trimmed := strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
				inCode = !inCode
				continue
			case inCode:
				pdf.SetFont("Courier", "", 9)
				pdf.MultiCell(0, 4.5, tr(line), "", "L", false)
				continue
			case strings.HasPrefix(trimmed, "#"):
				level := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
				pdf.Ln(2)
				pdf.SetFont("Helvetica", "B", 16-float64(min(level, 4)))
				pdf.MultiCell(0, 7, tr(strings.TrimSpace(strings.TrimLeft(trimmed, "#"))), "", "L", false)
				continue
			case strings.HasPrefix(trimmed, "- ") || strings.HasPrefix(trimmed, "* "):
				trimmed = "\u2022 " + trimmed[2:]
			}
			pdf.SetFont("Helvetica", "", 11)
			pdf.MultiCell(0, 5.5, tr(trimmed), "", "L", false)
		}
		if nested {
			for _, child := range t.Children(&p.ID) {
				print(child, depth+1)
			}
		}
	}
	for _, p := range pages {
		print(p, 0)
	}
	if len(pages) == 0 {
		pdf.AddPage()
	}
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
