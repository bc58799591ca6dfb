package published_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

// What an attacker may send a published address answers 4xx, never 5xx,
// and shows nothing it should not: traversal in page and file paths,
// another organization's file through this site, oversized and malformed
// keys, cookies and claims, other methods, and content written to run
// script.
func TestHostileRequestsToPublishedSites(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	f.page(f.space, map[string]any{"title": "Hostile", "markdown": "<script>alert(1)</script>\n\n" +
		"<img src=x onerror=alert(2)>\n\n[click](javascript:alert(3))\n\n<a href=\"jav&#x09;ascript:alert(4)\">tab</a>\n\n" +
		"<iframe src=\"https://evil.example\"></iframe>\n\n<div style=\"background:url(javascript:alert(5))\">styled</div>\n\n" +
		"![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoNik+)\n\n{% hint style=\"info\\\" onmouseover=\\\"alert(7)\" %}\nhint\n{% endhint %}\n"})
	base := f.publish()
	u, _ := url.Parse(base)

	// Another organization's site with a file: its digest names nothing
	// here.
	mallory := f.env.NewUser("Mallory")
	otherOrg := mallory.NewOrg("Other")
	otherSpace := mallory.Do("POST", "/v1/orgs/"+otherOrg+"/spaces", map[string]any{"title": "Secret"}).Expect(http.StatusCreated).String("id")
	res, err := http.DefaultClient.Do(servertest.UploadRequest(f.env.URL, mallory.Token,
		`mutation($s: ID!, $file: Upload!) { uploadFile(spaceId: $s, file: $file) { sha256 } }`, map[string]any{"s": otherSpace},
		"secret.txt", "text/plain", []byte("the other organization's secret")))
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("upload: %v %v", err, res)
	}
	var uploaded struct {
		Data struct{ UploadFile struct{ SHA256 string } }
	}
	_ = json.NewDecoder(res.Body).Decode(&uploaded)
	res.Body.Close()
	secretDigest := uploaded.Data.UploadFile.SHA256
	if len(secretDigest) != 64 {
		t.Fatalf("upload answered no digest: %+v", uploaded)
	}

	v := newVisitor(t)
	hostile := v.get(base+"/hostile").expect(t, http.StatusOK, "styled")
	body := between(hostile.body, `<div class="content">`, `<footer class="page-footer">`)
	for _, bad := range []*regexp.Regexp{regexp.MustCompile(`(?i)<script`), regexp.MustCompile(`(?i)\son\w+\s*=`),
		regexp.MustCompile(`(?i)javascript:`), regexp.MustCompile(`(?i)<iframe`), regexp.MustCompile(`(?i)style=`),
		regexp.MustCompile(`(?i)data:image`)} {
		if bad.MatchString(body) {
			t.Errorf("the page's content holds %s: %s", bad, bad.FindString(body))
		}
	}

	long := strings.Repeat("a", 8000)
	for _, c := range []struct {
		path   string
		header []string
		want   int
	}{
		{path: u.Path + "/..%2f..%2fv1%2forgs", want: http.StatusNotFound},
		{path: u.Path + "/%2e%2e/%2e%2e/graphql", want: http.StatusNotFound},
		{path: u.Path + "/%00", want: http.StatusNotFound},
		{path: u.Path + "/%ff%fe", want: http.StatusNotFound},
		{path: u.Path + "/" + long, want: http.StatusNotFound},
		{path: u.Path + "/~gitbook/files/" + secretDigest + "/secret.txt", want: http.StatusNotFound},
		{path: u.Path + "/~gitbook/files/not-a-digest/x", want: http.StatusNotFound},
		{path: u.Path + "/~gitbook/files/../../../etc/passwd", want: http.StatusNotFound},
		{path: u.Path + "/~gitbook/static/..%2f..%2fpublished.go", want: http.StatusNotFound},
		{path: u.Path + "/~gitbook/nothing", want: http.StatusNotFound},
		{path: u.Path + "?share=" + long, want: http.StatusOK},
		{path: u.Path + "?jwt_token=" + long, want: http.StatusOK},
		{path: u.Path + "?visitor.beta=" + long + "&visitor.x=%ff", want: http.StatusOK},
		{path: u.Path, header: []string{"Cookie", "gitbook-visitor-public=" + strings.Repeat("%7B", 3000)}, want: http.StatusOK},
		{path: u.Path, header: []string{"Cookie", "docsapi-share=" + long}, want: http.StatusOK},
		{path: u.Path, header: []string{"Authorization", "Bearer " + f.admin.Token}, want: http.StatusOK},
		{path: "/published/" + strings.Repeat("x", 3000) + "/" + long, want: http.StatusNotFound},
	} {
		p := v.get(f.env.URL+c.path, c.header...)
		if p.status != c.want {
			t.Errorf("%.120s: %d, want %d: %.200s", c.path, p.status, c.want, p.body)
		}
	}
	for _, method := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		req, _ := http.NewRequest(method, base, strings.NewReader("{}"))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d, want 405", method, res.StatusCode)
		}
	}
}
