package rest_test

import (
	"net/http"
	"testing"
)

func TestLinks(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	file := uploadedFile(t, e.alice, e.space, "", "diagram.txt", []byte("diagram"))
	_ = file
	// Page A links to B (by its file), to the file, outside, into the app,
	// and to a page that does not exist.
	md := "See [B](b.md), [the diagram](.gitbook/assets/diagram.txt), [Go](https://go.dev), " +
		"[app](" + e.env.URL + "/app/s/x), [gone](missing.md) and [again](b.md)."
	e.mustEdit("", e.pageA, md)

	type location struct {
		Kind string
		URL  string
		Page struct{ ID string }
		File struct{ ID string }
	}
	var links struct {
		Count int
		Stats struct {
			Total  int
			Broken struct{ Total int }
		}
		Items []struct {
			Status             string
			Relation           string
			TargetReference    location
			LocationReferences []location
		}
	}
	e.alice.Do("GET", e.spaceBase+"/links", nil).Expect(http.StatusOK).Decode(&links)
	if links.Stats.Total != 6 || links.Stats.Broken.Total != 1 || links.Count != 5 {
		t.Fatalf("links: %+v", links)
	}
	byStatus := map[string][]location{}
	for _, it := range links.Items {
		byStatus[it.Status] = append(byStatus[it.Status], it.TargetReference)
		if it.Relation != "reference" || len(it.LocationReferences) != 1 || it.LocationReferences[0].Page.ID != e.pageA {
			t.Errorf("item: %+v", it)
		}
	}
	if len(byStatus["ok"]) != 3 || len(byStatus["in-app"]) != 1 || len(byStatus["broken"]) != 1 || byStatus["broken"][0].URL != "missing.md" {
		t.Errorf("by status: %+v", byStatus)
	}
	e.alice.Do("GET", e.spaceBase+"/links?status=broken", nil).Expect(http.StatusOK).Decode(&links)
	if links.Count != 1 || links.Stats.Total != 6 {
		t.Errorf("broken only: %+v", links)
	}
	e.alice.Do("GET", e.spaceBase+"/links?status=fine", nil).Expect(http.StatusBadRequest)
	e.alice.Do("GET", e.spaceBase+"/content/page/"+e.pageA+"/links?status=in-app", nil).Expect(http.StatusOK).Decode(&links)
	if links.Count != 1 {
		t.Errorf("page links in-app: %+v", links)
	}

	var back struct{ Items []location }
	e.alice.Do("GET", e.spaceBase+"/content/page/"+e.pageB+"/backlinks", nil).Expect(http.StatusOK).Decode(&back)
	if len(back.Items) != 1 || back.Items[0].Kind != "page" || back.Items[0].Page.ID != e.pageA {
		t.Errorf("backlinks of B: %+v", back)
	}
	e.alice.Do("GET", e.spaceBase+"/content/files/"+file+"/backlinks", nil).Expect(http.StatusOK).Decode(&back)
	if len(back.Items) != 1 || back.Items[0].Page.ID != e.pageA {
		t.Errorf("backlinks of the file: %+v", back)
	}

	// A fixed link is ok in the next revision.
	e.mustEdit("", e.pageA, "See [B](b.md).")
	e.alice.Do("GET", e.spaceBase+"/links?status=broken", nil).Expect(http.StatusOK).Decode(&links)
	if links.Count != 0 || links.Stats.Broken.Total != 0 {
		t.Errorf("after the fix: %+v", links)
	}
}
