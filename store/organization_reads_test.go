package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// On a Citus cluster a read of one organization's rows goes straight to
// the worker holding them when its store function says whose rows they
// are (inOrganization, citus_reads.go); one that does not is read through
// the coordinator, a hop that costs its rows twice. So every exported
// store function that takes an organization (a parameter orgID string)
// says so, or is named here as one whose statements the coordinator must
// run anyway: writes, and what runs in the writing transaction.
var writesOfAnOrganization = map[string]bool{
	"AccessChanged": true, "AddContributor": true, "AddMember": true, "AddOrganizationToken": true,
	"DeleteCollection": true, "DeleteComment": true, "DeleteEmptyIssuesClusters": true, "DeleteGrantsOn": true,
	"DeleteInvite": true, "DeleteOpenAPISpec": true, "DeleteReply": true, "DeleteSAMLProvider": true,
	"DeleteSite": true, "DeleteSiteRedirect": true, "DeleteSiteShareLink": true, "DeleteSiteSpaceCustomization": true, "DeleteTeam": true, "DeleteTranslation": true,
	"EnsureBodies": true, "LockConversationInsights": true, "LockOpenAPISpec": true, "LockOrganization": true,
	"LockSite": true, "LockSpace": true, "MoveToOrganization": true, "NextChangeRequestNumber": true,
	"PlaceNew": true, "React": true, "RemoveMember": true, "RemoveRequestedReviewer": true,
	"RecordPageMoves": true, "ReplaceConversationIssues": true, "SaveBody": true, "SetPlace": true, "ShareLockSpace": true,
	"TouchMember": true,
}

func TestReadsOfAnOrganizationSayWhose(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var missing, stale []string
	seen := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !fn.Name.IsExported() || !takesOrgID(fn) {
				continue
			}
			seen[fn.Name.Name] = true
			if writesOfAnOrganization[fn.Name.Name] {
				continue
			}
			if !callsInOrganization(fn) {
				missing = append(missing, name+": "+fn.Name.Name)
			}
		}
	}
	for name := range writesOfAnOrganization {
		if !seen[name] {
			stale = append(stale, name)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	for _, m := range missing {
		t.Errorf("%s takes an organization and does not say its reads are of it: ctx = inOrganization(ctx, orgID), or name it in writesOfAnOrganization", m)
	}
	for _, s := range stale {
		t.Errorf("writesOfAnOrganization names %s, which is no longer a store function taking orgID", s)
	}
}

func takesOrgID(fn *ast.FuncDecl) bool {
	for _, field := range fn.Type.Params.List {
		if id, ok := field.Type.(*ast.Ident); !ok || id.Name != "string" {
			continue
		}
		for _, n := range field.Names {
			if n.Name == "orgID" {
				return true
			}
		}
	}
	return false
}

func callsInOrganization(fn *ast.FuncDecl) bool {
	found := false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "inOrganization" {
				found = true
			}
		}
		return !found
	})
	return found
}
