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
	"github.com/go-git/go-git/v5/plumbing/transport"
	gitclient "github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/internal/gitlayout"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/graph/outbound"
	"github.com/docsapi/docsapi/store"
)

// Git sync with go-git, in memory: import clones the tip of a ref (depth 1,
// that branch only, no tags) and turns GitBook's layout into a new revision
// (package gitlayout); export clones the ref the same way, renders the current
// revision in that layout and pushes a commit to the ref. What a transfer
// brings in is bounded (GitLimits, gitlimits.go) and checked before it is
// read. Credentials in a URL are used for the transfer and never stored,
// logged or returned (errors name the URL without them). file:// URLs are
// allowed only under the configured directory (GitFileRoot); http(s) and
// ssh connections go through the outbound guard, which refuses loopback and
// private addresses unless GitAllowPrivate is set; git:// is refused.

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

// gitContext bounds one import or export in time, tells the outbound guard
// whether its connections may reach private addresses, and bounds what
// each of its http(s) connections may read.
func (r *Resolver) gitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	installGitHTTP()
	ctx = outbound.WithReadLimit(outbound.WithLoopback(ctx, r.GitAllowPrivate), r.gitLimits().connBytes())
	return context.WithTimeout(ctx, gitTimeout)
}

func (r *Resolver) gitLimits() GitLimits { return r.GitLimits.withDefaults() }

// gitRemote is a checked repository URL.
type gitRemote struct {
	// raw is the URL to use, shown the one safe to store and show.
	raw, shown string
	// auth and proxy go with every transfer (for ssh: the URL's
	// credentials, and the outbound guard as the dialer).
	auth  transport.AuthMethod
	proxy transport.ProxyOptions
}

// clone clones the tip of ref (depth 1, that branch only, no tags) into
// fs (nil: none) and storage bounded by limits, checking nothing out.
func (g gitRemote) clone(ctx context.Context, ref string, limits GitLimits, fs billy.Filesystem) (*git.Repository, *boundedStorage, error) {
	st := newBoundedStorage(limits)
	repo, err := git.CloneContext(ctx, st, fs, &git.CloneOptions{
		URL: g.raw, Auth: g.auth, ProxyOptions: g.proxy,
		ReferenceName: plumbing.ReferenceName(ref), SingleBranch: true, Depth: 1, Tags: git.NoTags, NoCheckout: true,
	})
	if err != nil && st.refused != nil {
		err = st.refused
	}
	return repo, st, err
}

// gitRemote checks a repository URL.
func (r *Resolver) gitRemote(raw string) (gitRemote, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return gitRemote{}, Invalid("url", "must be a repository URL (https://, ssh:// or file://)")
	}
	shown := *u
	shown.User = nil
	remote := gitRemote{raw: raw, shown: shown.String()}
	switch u.Scheme {
	case "file":
		if r.GitFileRoot == "" {
			return gitRemote{}, Invalid("url", "file:// repositories are not enabled on this server")
		}
		root, _ := filepath.Abs(r.GitFileRoot)
		p := filepath.Clean(u.Path)
		if rel, err := filepath.Rel(root, p); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return gitRemote{}, Invalid("url", "file:// repositories must be under the server's git directory")
		}
	case "http", "https", "ssh":
		// The outbound guard's rule (graph/outbound), checked here on the
		// names' addresses for a clear 400 before anything connects; every
		// connection is checked again as it is made, on the address it
		// connects to (http(s): installGitHTTP; ssh: the proxy below).
		// GitAllowPrivate allows loopback and private addresses;
		// link-local, multicast and other special-purpose ones stay refused.
		ips, err := net.LookupIP(u.Hostname())
		if (err != nil || len(ips) == 0) && !r.GitAllowPrivate {
			return gitRemote{}, Invalid("url", "the repository's host %q does not resolve", u.Hostname())
		}
		for _, ip := range ips {
			if addr, ok := netip.AddrFromSlice(ip); !ok || outbound.Blocked(addr, r.GitAllowPrivate) {
				return gitRemote{}, Invalid("url", "the repository's host is a private or reserved address")
			}
		}
		if u.Scheme == "ssh" {
			remote.auth, remote.proxy = r.sshTransfer(u)
		}
	case "git":
		// SECURITY: go-git's git:// transport dials with net.Dial and takes
		// neither a dialer nor a proxy: nothing could check where it
		// connects.
		return gitRemote{}, Invalid("url", "git:// repositories are not supported: their transport cannot go through this server's address checks; use https:// or ssh://")
	default:
		return gitRemote{}, Invalid("url", "scheme %q is not supported", u.Scheme)
	}
	return remote, nil
}

// sshTransfer is the authentication and the dialer of a transfer over ssh.
func (r *Resolver) sshTransfer(u *url.URL) (transport.AuthMethod, transport.ProxyOptions) {
	user := u.User.Username()
	if user == "" {
		user = "git"
	}
	password, _ := u.User.Password()
	// SECURITY: the URL's credentials and nothing else: left to itself
	// go-git would offer the server's own ssh agent keys to whatever host
	// a user names.
	auth := &gitssh.Password{User: user, Password: password}
	// SECURITY: go-git's ssh transport takes no dialer, but opens the proxy
	// URL it is given with golang.org/x/net/proxy: the outbound guard's URL
	// makes it connect through the guarded dialer, checked on the address it
	// connects to like http(s), its reads bounded, its life no longer than
	// the transfer's.
	proxy := transport.ProxyOptions{URL: outbound.ProxyURL(outbound.ProxyConfig{
		AllowLoopback: r.GitAllowPrivate, MaxRead: r.gitLimits().connBytes(), Lifetime: gitTimeout})}
	return auth, proxy
}

// gitError is err from go-git, with the URL's credentials taken out; the
// limits' own errors are answered as they are.
func gitError(err error, remote gitRemote) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if outbound.IsTooLarge(err) {
		return OverLimit("url", "the repository's server sent more than this server's limits allow")
	}
	return BadRequest("git: %s", strings.ReplaceAll(err.Error(), remote.raw, remote.shown))
}

// fetchTree clones the tip of ref and reads its files, once the fetched
// pack and then the commit's tree are within limits: a repository past
// them is refused before any file is read.
func fetchTree(ctx context.Context, remote gitRemote, ref string, limits GitLimits) (map[string]gitlayout.File, *object.Commit, error) {
	repo, st, err := remote.clone(ctx, ref, limits, nil)
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
	listed, err := checkTree(st, tree, limits)
	if err != nil {
		return nil, nil, err
	}
	files, err := readTreeFiles(st, listed)
	return files, commit, err
}

func (r *mutationResolver) ImportGitRepository(ctx context.Context, spaceID string, input model.ImportGitRepositoryInput) (bool, error) {
	space, err := r.editableSpace(ctx, spaceID)
	if err != nil {
		return false, err
	}
	remote, err := r.gitRemote(input.URL)
	if err != nil {
		return false, err
	}
	shown := remote.shown
	if err := checkRef(input.Ref); err != nil {
		return false, err
	}
	ctx, cancel := r.gitContext(ctx)
	defer cancel()
	// Nothing is written before the repository is read whole and within
	// limits: a refused import leaves no revision, page body or blob.
	files, commit, err := fetchTree(ctx, remote, input.Ref, r.gitLimits())
	if err != nil {
		return false, gitError(err, remote)
	}
	project := ""
	if v, _ := input.RepoProjectDirectory.ValueOK(); v != nil {
		project = *v
	}
	layout := gitlayout.Read(files, project)
	standalone := false
	if v, _ := input.Standalone.ValueOK(); v != nil {
		standalone = *v
	}
	// Assets go to the blob store first: content addressed, they are safe
	// to write outside the transaction.
	var assets []*store.RevisionFile
	for _, a := range layout.Assets {
		digest, size, err := r.Blobs.Put(ctx, bytes.NewReader(a.Data), r.MaxUpload)
		if err != nil {
			return false, Invalid("url", "asset %s: %v", a.Path, err)
		}
		gitPath, oid := a.Path, a.OID
		assets = append(assets, &store.RevisionFile{ID: store.NewID(), Name: path.Base(a.Path), ContentType: contentTypeOf(a.Path, a.Data),
			Size: size, BlobSHA256: digest, GitPath: &gitPath, GitOID: &oid})
	}
	caller, _ := CallerFrom(ctx)
	now := r.now()
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		s, err := store.LockSpace(ctx, tx, space.OrganizationID, spaceID)
		if err != nil {
			return err
		}
		if s.EditMode == store.EditModeLocked && !standalone {
			return Conflict("the space is locked: an import cannot change its content")
		}
		if base, _ := input.BaseRevision.ValueOK(); base != nil && *base != s.RevisionID {
			return StaleBase(*base, s.RevisionID)
		}
		current, err := store.LoadContent(ctx, tx, s.OrganizationID, s.RevisionID)
		if err != nil {
			return err
		}
		content, err := r.importedContent(ctx, tx, s.OrganizationID, layout, current, now)
		if err != nil {
			return err
		}
		// A file already there (same git path) keeps its id.
		for _, a := range assets {
			if i := slices.IndexFunc(current.Files, func(f *store.RevisionFile) bool { return store.StringOf(f.GitPath) == store.StringOf(a.GitPath) }); i >= 0 {
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
			// Pages the import renamed or moved (a page keeps its id when
			// its git path was in the space) leave redirects.
			if err := r.recordPageMoves(ctx, tx, s, current.Pages, store.NewPageTree(content.Pages)); err != nil {
				return err
			}
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
func (r *Resolver) importedContent(ctx context.Context, tx bun.IDB, orgID string, layout gitlayout.Content, current store.Content, now time.Time) (store.Content, error) {
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
	var walk func(pages []*gitlayout.Page, parent *string) error
	walk = func(pages []*gitlayout.Page, parent *string) error {
		var taken []string
		for i, lp := range pages {
			p := &store.RevisionPage{ID: store.NewID(), ParentID: parent, Position: i, Type: store.PageDocument, Title: lp.Title,
				CreatedAt: now, UpdatedAt: now}
			if lp.Group {
				p.Type = store.PageGroup
				if old := groups[lp.Title]; old != nil {
					p.ID, p.CreatedAt = old.ID, old.CreatedAt
					delete(groups, lp.Title)
				}
			} else {
				gitPath, oid := lp.Path, lp.OID
				p.GitPath, p.GitOID = &gitPath, &oid
				if old := byPath[lp.Path]; old != nil {
					p.ID, p.CreatedAt = old.ID, old.CreatedAt
				}
				digest, err := store.SaveBody(ctx, tx, orgID, lp.Markdown)
				if err != nil {
					return err
				}
				p.BodySHA256 = digest
			}
			if p.Title == "" {
				p.Title = "Untitled"
			}
			p.Description, p.Hidden = store.NullString(lp.Description), lp.Hidden
			p.Slug = uniquePath(slugify(p.Title, "page"), taken)
			taken = append(taken, p.Slug)
			out.Pages = append(out.Pages, p)
			if err := walk(lp.Pages, &p.ID); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(layout.Pages, nil)
}

func (r *mutationResolver) ExportToGitRepository(ctx context.Context, spaceID string, input model.ExportToGitRepositoryInput) (bool, error) {
	space, err := r.editableSpace(ctx, spaceID)
	if err != nil {
		return false, err
	}
	remote, err := r.gitRemote(input.URL)
	if err != nil {
		return false, err
	}
	shown := remote.shown
	if err := checkRef(input.Ref); err != nil {
		return false, err
	}
	if err := checkLength("commitMessage", input.CommitMessage, 1, 10000); err != nil {
		return false, err
	}
	ctx, cancel := r.gitContext(ctx)
	defer cancel()
	rev, err := store.GetRevision(ctx, r.DB, space.OrganizationID, space.ID, space.RevisionID)
	if err != nil {
		return false, err
	}
	content, err := store.LoadContent(ctx, r.DB, rev.OrganizationID, rev.ID)
	if err != nil {
		return false, err
	}
	var digests []string
	for _, p := range content.Pages {
		if p.BodySHA256 != nil {
			digests = append(digests, *p.BodySHA256)
		}
	}
	bodies, err := store.PageBodies(ctx, r.DB, rev.OrganizationID, digests)
	if err != nil {
		return false, err
	}
	layout, err := gitlayout.Export(store.NewPageTree(content.Pages), bodies, content.Files, func(f *store.RevisionFile) ([]byte, error) {
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
	oid, err := pushLayout(ctx, remote, input.Ref, project, gitlayout.Write(layout), input.CommitMessage, r.now(), r.gitLimits())
	if err != nil {
		return false, gitError(err, remote)
	}
	now := r.now()
	space.GitInfo = &store.GitInfo{URL: shown, Ref: input.Ref, RepoName: repoName(shown), UpdatedAt: now}
	space.UpdatedAt = now
	r.Log.InfoContext(ctx, "git export", "space", space.ID, "repository", shown, "ref", input.Ref, "commit", oid)
	return true, store.UpdateSpace(ctx, r.DB, space, "git_info")
}

// pushLayout commits files (under project) as the whole tree of ref's
// project directory and pushes the commit; it starts the ref when the
// repository does not have it yet. The commit's parent is the ref's tip,
// cloned alone (no history): the files outside the project directory are
// kept, once the tree is within limits.
func pushLayout(ctx context.Context, remote gitRemote, ref, project string, files map[string][]byte, message string, now time.Time, limits GitLimits) (string, error) {
	fs := memfs.New()
	repo, st, err := remote.clone(ctx, ref, limits, fs)
	var limited *Error
	switch {
	case errors.As(err, &limited) || outbound.IsTooLarge(err):
		return "", err // refused by the limits, not a missing ref
	case err != nil:
		// An empty repository, or one without the ref: start it.
		repo, err = git.Init(memory.NewStorage(), fs)
		if err != nil {
			return "", err
		}
		if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{remote.raw}}); err != nil {
			return "", err
		}
		if err := repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.ReferenceName(ref))); err != nil {
			return "", err
		}
	default:
		head, err := repo.Head()
		if err != nil {
			return "", err
		}
		commit, err := repo.CommitObject(head.Hash())
		if err != nil {
			return "", err
		}
		tree, err := commit.Tree()
		if err != nil {
			return "", err
		}
		// SECURITY: checking out writes every path's bytes to memory:
		// the tree is checked against the limits first.
		if _, err := checkTree(st, tree, limits); err != nil {
			return "", err
		}
		wt, err := repo.Worktree()
		if err != nil {
			return "", err
		}
		if err := wt.Reset(&git.ResetOptions{Commit: head.Hash(), Mode: git.HardReset}); err != nil {
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
	err = repo.PushContext(ctx, &git.PushOptions{RemoteName: "origin", RefSpecs: []config.RefSpec{config.RefSpec(ref + ":" + ref)},
		Auth: remote.auth, ProxyOptions: remote.proxy})
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

func (r *spaceResolver) GitInfo(ctx context.Context, s *store.Space) (*model.GitSyncState, error) {
	// Where a space's content is kept is its members' business.
	if s.GitInfo == nil || VisitorFrom(ctx) != nil {
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
