package graph

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	gitclient "github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/graph/outbound"
	"github.com/docsapi/docsapi/store"
)

// Git sync with go-git, in memory: import clones a ref and turns GitBook's
// layout into a new revision (gitlayout.go); export renders the current
// revision in that layout and pushes a commit to the ref. Credentials in a
// URL are used for the transfer and never stored, logged or returned (errors
// name the URL without them). file:// URLs are allowed only under the
// configured directory (GitFileRoot); http(s) URLs must not name a loopback
// or private address unless GitAllowPrivate is set.

// gitTimeout bounds one import or export.
const gitTimeout = 2 * time.Minute

// installGitHTTP makes go-git reach http(s) remotes through the outbound
// guard (graph/outbound), which checks the address of every connection as
// it is made, after name resolution: a host name that resolves to a public
// address when gitRemote checks it and to a private one when go-git
// connects (DNS rebinding) is refused, as are redirects to private
// addresses. go-git keeps its transports process-wide, so whether a
// transfer may reach private addresses travels with its context
// (gitContext).
var installGitHTTP = sync.OnceFunc(func() {
	t := githttp.NewClient(outbound.NewPerRequest(outbound.Config{Timeout: gitTimeout}).HTTP)
	gitclient.InstallProtocol("https", t)
	gitclient.InstallProtocol("http", t)
})

// gitContext bounds one import or export in time, and tells the outbound
// guard whether its connections may reach private addresses.
func (r *Resolver) gitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	installGitHTTP()
	return context.WithTimeout(outbound.WithLoopback(ctx, r.GitAllowPrivate), gitTimeout)
}

// gitRemote checks a repository URL; it returns the URL to use and the one
// safe to store and show.
func (r *Resolver) gitRemote(raw string) (string, string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "", "", Invalid("url", "must be a repository URL (https://, ssh:// or file://)")
	}
	shown := *u
	shown.User = nil
	switch u.Scheme {
	case "file":
		if r.GitFileRoot == "" {
			return "", "", Invalid("url", "file:// repositories are not enabled on this server")
		}
		root, _ := filepath.Abs(r.GitFileRoot)
		p := filepath.Clean(u.Path)
		if rel, err := filepath.Rel(root, p); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return "", "", Invalid("url", "file:// repositories must be under the server's git directory")
		}
	case "http", "https", "ssh":
		// The outbound guard's rule (graph/outbound), checked here on the
		// names' addresses for a clear 400 before anything connects; http(s)
		// connections are checked again as they are made (installGitHTTP).
		// go-git's ssh transport has no dialer hook: for ssh this check is
		// the only one. GitAllowPrivate allows loopback and private
		// addresses; link-local, unspecified and multicast ones stay refused.
		ips, err := net.LookupIP(u.Hostname())
		if (err != nil || len(ips) == 0) && !r.GitAllowPrivate {
			return "", "", Invalid("url", "the repository's host %q does not resolve", u.Hostname())
		}
		for _, ip := range ips {
			if addr, ok := netip.AddrFromSlice(ip); !ok || outbound.Blocked(addr, r.GitAllowPrivate) {
				return "", "", Invalid("url", "the repository's host is a private address")
			}
		}
	default:
		return "", "", Invalid("url", "scheme %q is not supported", u.Scheme)
	}
	return raw, shown.String(), nil
}

// gitError is err from go-git, with the URL's credentials taken out.
func gitError(err error, raw, shown string) error {
	return BadRequest("git: %s", strings.ReplaceAll(err.Error(), raw, shown))
}

// cloneTree clones ref of url and reads its files.
func cloneTree(ctx context.Context, rawURL, ref string) (map[string]repoFile, *object.Commit, error) {
	repo, err := git.CloneContext(ctx, memory.NewStorage(), memfs.New(), &git.CloneOptions{
		URL: rawURL, ReferenceName: plumbing.ReferenceName(ref), SingleBranch: true, Depth: 1,
	})
	if err != nil {
		return nil, nil, err
	}
	head, err := repo.Head()
	if err != nil {
		return nil, nil, err
	}
	commit, err := repo.CommitObject(head.Hash())
	if err != nil {
		return nil, nil, err
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, nil, err
	}
	files := map[string]repoFile{}
	err = tree.Files().ForEach(func(f *object.File) error {
		rd, err := f.Reader()
		if err != nil {
			return err
		}
		defer rd.Close()
		data, err := io.ReadAll(io.LimitReader(rd, 64<<20))
		if err != nil {
			return err
		}
		files[f.Name] = repoFile{path: f.Name, data: data, oid: f.Hash.String()}
		return nil
	})
	return files, commit, err
}

func (r *mutationResolver) ImportGitRepository(ctx context.Context, spaceID string, input model.ImportGitRepositoryInput) (bool, error) {
	if _, err := r.editableSpace(ctx, spaceID); err != nil {
		return false, err
	}
	rawURL, shown, err := r.gitRemote(input.URL)
	if err != nil {
		return false, err
	}
	if err := checkRef(input.Ref); err != nil {
		return false, err
	}
	ctx, cancel := r.gitContext(ctx)
	defer cancel()
	files, commit, err := cloneTree(ctx, rawURL, input.Ref)
	if err != nil {
		return false, gitError(err, rawURL, shown)
	}
	project := ""
	if v, _ := input.RepoProjectDirectory.ValueOK(); v != nil {
		project = *v
	}
	layout := readLayout(files, project)
	standalone := false
	if v, _ := input.Standalone.ValueOK(); v != nil {
		standalone = *v
	}
	// Assets go to the blob store first: content addressed, they are safe
	// to write outside the transaction.
	var assets []*store.RevisionFile
	for _, a := range layout.assets {
		digest, size, err := r.Blobs.Put(ctx, bytes.NewReader(a.data), r.MaxUpload)
		if err != nil {
			return false, Invalid("url", "asset %s: %v", a.path, err)
		}
		gitPath, oid := a.path, a.oid
		assets = append(assets, &store.RevisionFile{ID: store.NewID(), Name: path.Base(a.path), ContentType: contentTypeOf(a.path, a.data),
			Size: size, BlobSHA256: digest, GitPath: &gitPath, GitOID: &oid})
	}
	caller, _ := CallerFrom(ctx)
	now := r.now()
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		s, err := store.LockSpace(ctx, tx, spaceID)
		if err != nil {
			return err
		}
		if s.EditMode == "locked" && !standalone {
			return Conflict("the space is locked: an import cannot change its content")
		}
		current, err := store.LoadContent(ctx, tx, s.RevisionID)
		if err != nil {
			return err
		}
		content, err := r.importedContent(ctx, tx, layout, current, now)
		if err != nil {
			return err
		}
		// A file already there (same git path) keeps its id.
		for _, a := range assets {
			if i := slices.IndexFunc(current.Files, func(f *store.RevisionFile) bool { return str(f.GitPath) == str(a.GitPath) }); i >= 0 {
				a.ID = current.Files[i].ID
			}
		}
		content.Files = assets
		rev := &store.Revision{ID: store.NewID(), SpaceID: s.ID, Parents: []string{s.RevisionID}, Type: "edits",
			CreatedBy: &caller.User.ID, CreatedAt: now,
			Git: &store.GitCommit{OID: commit.Hash.String(), Message: strings.TrimSpace(commit.Message), URL: shown, Ref: input.Ref}}
		if err := store.CreateRevision(ctx, tx, rev, content); err != nil {
			return err
		}
		s.GitInfo = &store.GitInfo{URL: shown, Ref: input.Ref, RepoName: repoName(shown), UpdatedAt: now}
		columns := []string{"git_info"}
		if !standalone {
			s.RevisionID = rev.ID
			columns = append(columns, "revision_id")
			if err := store.RecordSpaceContentUpdated(ctx, tx, s, rev.ID, caller.User.ID, now); err != nil {
				return err
			}
			if err := r.recordLive(ctx, tx, store.LiveEvent{Type: store.LiveContentUpdated, OrganizationID: s.OrganizationID,
				SpaceID: &s.ID, RevisionID: &rev.ID}); err != nil {
				return err
			}
		}
		s.UpdatedAt = now
		return store.UpdateSpace(ctx, tx, s, columns...)
	})
	return err == nil, err
}

// importedContent turns an imported layout into pages. A page whose git
// path was already in the space keeps its id, so reimporting updates pages
// rather than replacing them.
func (r *Resolver) importedContent(ctx context.Context, tx bun.IDB, layout layoutContent, current store.Content, now time.Time) (store.Content, error) {
	byPath := map[string]*store.RevisionPage{}
	groups := map[string]*store.RevisionPage{} // groups have no file: matched by title
	for _, p := range current.Pages {
		if p.GitPath != nil {
			byPath[*p.GitPath] = p
		}
		if p.Type == store.PageGroup {
			groups[p.Title] = p
		}
	}
	var out store.Content
	var walk func(pages []*layoutPage, parent *string) error
	walk = func(pages []*layoutPage, parent *string) error {
		var taken []string
		for i, lp := range pages {
			p := &store.RevisionPage{ID: store.NewID(), ParentID: parent, Position: i, Type: store.PageDocument, Title: lp.title,
				CreatedAt: now, UpdatedAt: now}
			if lp.group {
				p.Type = store.PageGroup
				if old := groups[lp.title]; old != nil {
					p.ID, p.CreatedAt = old.ID, old.CreatedAt
					delete(groups, lp.title)
				}
			} else {
				gitPath, oid := lp.path, lp.oid
				p.GitPath, p.GitOID = &gitPath, &oid
				if old := byPath[lp.path]; old != nil {
					p.ID, p.CreatedAt = old.ID, old.CreatedAt
				}
				digest, err := store.SaveBody(ctx, tx, lp.markdown)
				if err != nil {
					return err
				}
				p.BodySHA256 = digest
			}
			if p.Title == "" {
				p.Title = "Untitled"
			}
			p.Description = optional(lp.description)
			p.Slug = uniquePath(slugify(p.Title, "page"), taken)
			taken = append(taken, p.Slug)
			out.Pages = append(out.Pages, p)
			if err := walk(lp.pages, &p.ID); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(layout.pages, nil)
}

func (r *mutationResolver) ExportToGitRepository(ctx context.Context, spaceID string, input model.ExportToGitRepositoryInput) (bool, error) {
	space, err := r.editableSpace(ctx, spaceID)
	if err != nil {
		return false, err
	}
	rawURL, shown, err := r.gitRemote(input.URL)
	if err != nil {
		return false, err
	}
	if err := checkRef(input.Ref); err != nil {
		return false, err
	}
	if err := checkLength("commitMessage", input.CommitMessage, 1, 10000); err != nil {
		return false, err
	}
	ctx, cancel := r.gitContext(ctx)
	defer cancel()
	rev, err := store.GetRevision(ctx, r.DB, space.ID, space.RevisionID)
	if err != nil {
		return false, err
	}
	content, err := store.LoadContent(ctx, r.DB, rev.ID)
	if err != nil {
		return false, err
	}
	var digests []string
	for _, p := range content.Pages {
		if p.BodySHA256 != nil {
			digests = append(digests, *p.BodySHA256)
		}
	}
	bodies, err := store.PageBodies(ctx, r.DB, digests)
	if err != nil {
		return false, err
	}
	layout, err := exportLayout(store.NewPageTree(content.Pages), bodies, content.Files, func(f *store.RevisionFile) ([]byte, error) {
		rc, err := r.Blobs.Open(ctx, f.BlobSHA256)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return io.ReadAll(rc)
	})
	if err != nil {
		return false, err
	}
	project := ""
	if v, _ := input.RepoProjectDirectory.ValueOK(); v != nil {
		project = strings.Trim(path.Clean("/"+*v), "/")
	}
	oid, err := pushLayout(ctx, rawURL, input.Ref, project, writeLayout(layout), input.CommitMessage, r.now())
	if err != nil {
		return false, gitError(err, rawURL, shown)
	}
	now := r.now()
	space.GitInfo = &store.GitInfo{URL: shown, Ref: input.Ref, RepoName: repoName(shown), UpdatedAt: now}
	space.UpdatedAt = now
	r.Log.InfoContext(ctx, "git export", "space", space.ID, "repository", shown, "ref", input.Ref, "commit", oid)
	return true, store.UpdateSpace(ctx, r.DB, space, "git_info")
}

// pushLayout commits files (under project) as the whole tree of ref's
// project directory and pushes the commit; it starts the ref when the
// repository does not have it yet.
func pushLayout(ctx context.Context, rawURL, ref, project string, files map[string][]byte, message string, now time.Time) (string, error) {
	fs := memfs.New()
	repo, err := git.CloneContext(ctx, memory.NewStorage(), fs, &git.CloneOptions{
		URL: rawURL, ReferenceName: plumbing.ReferenceName(ref), SingleBranch: true,
	})
	if err != nil {
		// An empty repository, or one without the ref: start it.
		repo, err = git.Init(memory.NewStorage(), fs)
		if err != nil {
			return "", err
		}
		if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{rawURL}}); err != nil {
			return "", err
		}
		if err := repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.ReferenceName(ref))); err != nil {
			return "", err
		}
	}
	wt, err := repo.Worktree()
	if err != nil {
		return "", err
	}
	// The project directory holds exactly the exported files.
	if project == "" {
		project = "."
	}
	if err := removeAll(fs, project); err != nil {
		return "", err
	}
	for p, data := range files {
		full := path.Join(project, p)
		if err := fs.MkdirAll(path.Dir(full), 0o755); err != nil {
			return "", err
		}
		f, err := fs.Create(full)
		if err != nil {
			return "", err
		}
		if _, err := f.Write(data); err != nil {
			return "", err
		}
		if err := f.Close(); err != nil {
			return "", err
		}
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		return "", err
	}
	sig := &object.Signature{Name: "docsapi", Email: "docsapi@localhost", When: now}
	hash, err := wt.Commit(message, &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true})
	if err != nil {
		return "", err
	}
	err = repo.PushContext(ctx, &git.PushOptions{RemoteName: "origin", RefSpecs: []config.RefSpec{config.RefSpec(ref + ":" + ref)}})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return "", err
	}
	return hash.String(), nil
}

// removeAll deletes every file under dir (but .git), so the commit holds
// exactly what is written next.
func removeAll(fs billy.Filesystem, dir string) error {
	entries, err := fs.ReadDir(dir)
	if err != nil {
		return nil // no such directory yet
	}
	for _, e := range entries {
		p := path.Join(dir, e.Name())
		if e.Name() == ".git" && dir == "." {
			continue
		}
		if e.IsDir() {
			if err := removeAll(fs, p); err != nil {
				return err
			}
		}
		if err := fs.Remove(p); err != nil {
			return err
		}
	}
	return nil
}

func (r *spaceResolver) GitInfo(_ context.Context, s *store.Space) (*model.GitSyncState, error) {
	if s.GitInfo == nil {
		return &model.GitSyncState{}, nil // never synced
	}
	updated := s.GitInfo.UpdatedAt
	return &model.GitSyncState{RepoName: &s.GitInfo.RepoName, URL: &s.GitInfo.URL, Ref: &s.GitInfo.Ref, UpdatedAt: &updated}, nil
}

func checkRef(ref string) error {
	if !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") || strings.ContainsAny(ref, " ~^:?*[\\") {
		return Invalid("ref", "must be a git ref such as refs/heads/main")
	}
	return nil
}

// repoName is owner/name of a repository URL.
func repoName(shown string) string {
	u, err := url.Parse(shown)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.Trim(u.Path, "/"), ".git")
}

// contentTypeOf guesses an asset's type from its name, else its bytes.
func contentTypeOf(name string, data []byte) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return http.DetectContentType(data)
}

func (r *revisionPageResolver) Git(_ context.Context, p *model.PageNode) (*model.GitSyncBlob, error) {
	return gitBlob(p.GitPath, p.GitOID), nil
}

func (r *revisionFileResolver) Git(_ context.Context, f *store.RevisionFile) (*model.GitSyncBlob, error) {
	return gitBlob(f.GitPath, f.GitOID), nil
}

func gitBlob(path, oid *string) *model.GitSyncBlob {
	if path == nil && oid == nil {
		return nil
	}
	return &model.GitSyncBlob{Path: path, Oid: oid}
}
