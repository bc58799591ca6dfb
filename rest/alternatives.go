package rest

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// GitBook's API description offers alternatives (oneOf, anyOf) in the
// request bodies of many operations: a comment's body as markdown or a
// document, a position before or after, a source as a URL or a text. The
// server takes each, but for a few it refuses on purpose, with a 400 naming
// the field and saying why. RefusedAlternatives lists those decisions:
// docs/api-coverage.md shows them, and the walk over the description
// (TestReferenceAlternatives) requires that a 400 it meets is one of them.

// RefusedAlternative is an alternative of a request body the server
// refuses, on purpose.
type RefusedAlternative struct {
	// Operation is the reference's operationId.
	Operation string
	// Field is where the alternative is, in the body ("" for the body
	// itself); the 400's message starts with it.
	Field string
	// Alternative names it, as the walk does: its index in the reference's
	// list and its schema's name or kind.
	Alternative string
	// Names is the field the 400's message names (it starts "<Names>:").
	Names string
	// Why is the reason, as the docs give it.
	Why string
}

// The reasons, shared by the operations of a kind.
const (
	emptyCommentBody = "a comment says something: its body is markdown or a document, not the empty document {}"
	nullGrantRole    = "a grant gives a role: `null` would take access away, which `DELETE` of the grant does"
	contentInvite    = "link invites here invite to the organization with a role; invites to one space or collection (`level`) are not implemented"
	templateRefs     = "a template's content references are files of the space (`{\"kind\": \"file\", \"file\": id}`)"
)

// RefusedAlternatives are the alternatives refused on purpose.
var RefusedAlternatives = func() []RefusedAlternative {
	var out []RefusedAlternative
	for _, op := range []string{"postCommentInSpace", "updateCommentInSpace", "postCommentReplyInSpace", "updateCommentReplyInSpace",
		"postCommentInChangeRequest", "updateCommentInChangeRequest", "postCommentReplyInChangeRequest", "updateCommentReplyInChangeRequest"} {
		out = append(out, RefusedAlternative{Operation: op, Field: "body", Alternative: "#2 (object)", Names: "body", Why: emptyCommentBody})
	}
	for _, op := range []string{"updateUserPermissionInSpace", "updateTeamPermissionInSpace", "updateUserPermissionInCollection", "updateTeamPermissionInCollection"} {
		out = append(out, RefusedAlternative{Operation: op, Field: "role", Alternative: "#1 (string)", Names: "role", Why: nullGrantRole})
	}
	out = append(out,
		RefusedAlternative{Operation: "createOrganizationInvite", Alternative: "#1 (CreateInviteToSpace)", Names: "level", Why: contentInvite},
		RefusedAlternative{Operation: "createOrganizationInvite", Alternative: "#2 (CreateInviteToCollection)", Names: "collection", Why: contentInvite},
		RefusedAlternative{Operation: "updateOrganizationInviteById", Alternative: "#1 (object)", Names: "level", Why: contentInvite},
		RefusedAlternative{Operation: "updateSitePublishingAuthById", Alternative: "#1 (VisitorAuthIntegrationBackend)", Names: "backend",
			Why: "this server runs no integration's code, so no visitor-auth integration: the backend is `custom`"},
	)
	for i, kind := range []string{"ContentRefURL", "ContentRefPage", "ContentRefAnchor", "ContentRefUser", "ContentRefCollection",
		"ContentRefSpace", "ContentRefReusableContent", "ContentRefOpenAPI"} {
		out = append(out, RefusedAlternative{Operation: "applyTemplateToSpace", Field: "params.contentRefs.key",
			Alternative: fmt.Sprintf("#%d (%s)", i+1, kind), Names: "params.contentRefs.logo", Why: templateRefs})
	}
	return out
}()

// refusedFields are the members of a body, by operation, that only a
// refused alternative has: present, the 400 says why (rather than that the
// field is unknown).
var refusedFields = map[string]map[string]string{
	"createOrganizationInvite":     {"collection": contentInvite, "level": contentInvite, "space": contentInvite},
	"updateOrganizationInviteById": {"level": contentInvite},
}

// refusedField is the 400 of a body of operation with one of its
// refusedFields (the first by name), nil for none.
func refusedField(operation string, body any) *requestError {
	obj, _ := body.(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(refusedFields[operation])) {
		if _, ok := obj[name]; ok {
			return &requestError{http.StatusBadRequest, name + ": " + refusedFields[operation][name]}
		}
	}
	return nil
}

// RefusedAlternativesMarkdown renders RefusedAlternatives for
// docs/api-coverage.md.
func RefusedAlternativesMarkdown() string {
	var b strings.Builder
	b.WriteString("\n## Alternatives refused\n\n")
	b.WriteString("Where GitBook's description offers alternatives in a request body (`oneOf`, `anyOf`), each is accepted\n")
	b.WriteString("(`TestReferenceAlternatives` sends one body per alternative through `@gitbook/api`) except these,\n")
	b.WriteString("refused with a 400 whose message starts with the field:\n\n")
	b.WriteString("| Operation | Where | Alternative | Why |\n|---|---|---|---|\n")
	for _, r := range RefusedAlternatives {
		field := r.Field
		if field == "" {
			field = "(the body)"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", r.Operation, field, r.Alternative, r.Why)
	}
	return b.String()
}
