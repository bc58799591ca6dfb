package graph

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"image"
	_ "image/gif" // image sizes of uploads
	_ "image/jpeg"
	_ "image/png"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/blob"
)

// Files: uploads are stored in the blob store by their digest and become part
// of a new revision, like pages. They are downloaded from this server at a
// signed address (DownloadPath) that works for an hour without a token, so
// browsers and tools can fetch them; only those who can read the content get
// one.

// DownloadPath is where files are served: /files/{revisionId}/{fileId}.
const DownloadPath = "/files/"

// downloadTTL is how long a download address works, at least.
const downloadTTL = time.Hour

// downloadStep quantizes when download addresses expire: those made within
// one step are the same, and work for downloadTTL to downloadTTL +
// downloadStep. So a read showing one (a file, a revision with its files)
// answers the same body, hence the same ETag (rest/conditional.go), for a
// while, rather than a new one every second.
const downloadStep = 5 * time.Minute

// downloadExpiry is when an address made at now expires, in Unix seconds.
func downloadExpiry(now time.Time) int64 {
	return now.Truncate(downloadStep).Add(downloadTTL + downloadStep).Unix()
}

// signingKey is the server's key for download addresses, read once.
type signingKey struct {
	once sync.Once
	key  []byte
	err  error
}

func (r *Resolver) key(ctx context.Context) ([]byte, error) {
	r.signingKey.once.Do(func() {
		r.signingKey.key, r.signingKey.err = store.ServerSecret(context.WithoutCancel(ctx), r.DB, "download-urls")
	})
	return r.signingKey.key, r.signingKey.err
}

func downloadSignature(key []byte, revisionID, fileID string, expires int64) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(revisionID + "\n" + fileID + "\n" + strconv.FormatInt(expires, 10)))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func (r *revisionFileResolver) DownloadURL(ctx context.Context, f *store.RevisionFile) (string, error) {
	key, err := r.key(ctx)
	if err != nil {
		return "", err
	}
	expires := downloadExpiry(r.now())
	return r.URLs.API(DownloadPath + pathEscape(f.RevisionID) + "/" + pathEscape(f.ID) +
		"?expires=" + strconv.FormatInt(expires, 10) + "&signature=" + downloadSignature(key, f.RevisionID, f.ID, expires)), nil
}

// Download is the file a signed address names (DownloadPath, then
// {revisionId}/{fileId} and the address's query): NotFound for anything
// else, an expired or altered address included.
func (r *Resolver) Download(ctx context.Context, revisionID, fileID string, query url.Values) (*Served, error) {
	if err := r.checkSigned(ctx, query, revisionID, fileID); errors.Is(err, errBadSignature) {
		return nil, NotFound("file")
	} else if err != nil {
		return nil, err
	}
	org, err := store.RevisionOrganization(ctx, r.DB, revisionID)
	if err != nil {
		return nil, orNotFound(err, "file")
	}
	files, err := store.RevisionFiles(ctx, r.DB, org, revisionID)
	i := slices.IndexFunc(files, func(f *store.RevisionFile) bool { return f.ID == fileID })
	if err != nil || i < 0 {
		return nil, NotFound("file")
	}
	f := files[i]
	body, err := r.Blobs.Open(ctx, f.BlobSHA256)
	if err != nil {
		return nil, NotFound("file")
	}
	return &Served{ContentType: f.ContentType, Size: f.Size, Filename: f.Name, Untrusted: true,
		Cache: "private, max-age=3600", Body: body}, nil
}

// checkSigned checks the signature of an address signed for (scope,
// target), and that it has not expired: the query's expires and signature.
func (r *Resolver) checkSigned(ctx context.Context, query url.Values, scope, target string) error {
	expires, err := strconv.ParseInt(query.Get("expires"), 10, 64)
	if err != nil || r.now().Unix() > expires {
		return errBadSignature
	}
	key, err := r.key(ctx)
	if err != nil {
		return err
	}
	if !hmac.Equal([]byte(downloadSignature(key, scope, target, expires)), []byte(query.Get("signature"))) {
		return errBadSignature
	}
	return nil
}

var errBadSignature = errors.New("the address is not signed, or has expired")

type revisionFileResolver struct{ *Resolver }

var _ generated.RevisionFileResolver = (*revisionFileResolver)(nil)

func (r *Resolver) RevisionFile() generated.RevisionFileResolver { return &revisionFileResolver{r} }

func (r *revisionFileResolver) Dimensions(_ context.Context, f *store.RevisionFile) (*model.FileDimensions, error) {
	if f.Width == nil || f.Height == nil {
		return nil, nil
	}
	return &model.FileDimensions{Width: *f.Width, Height: *f.Height}, nil
}

func (r *revisionResolver) Files(ctx context.Context, rev *store.Revision) ([]*store.RevisionFile, error) {
	files, err := store.RevisionFiles(ctx, r.DB, rev.OrganizationID, rev.ID)
	if files == nil {
		files = []*store.RevisionFile{}
	}
	return files, err
}

func (r *revisionResolver) File(ctx context.Context, rev *store.Revision, id string) (*store.RevisionFile, error) {
	files, err := store.RevisionFiles(ctx, r.DB, rev.OrganizationID, rev.ID)
	if err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(files, func(f *store.RevisionFile) bool { return f.ID == id }); i >= 0 {
		return files[i], nil
	}
	return nil, NotFound("file")
}

func (r *revisionResolver) FileList(ctx context.Context, rev *store.Revision, page *string, limit *int, _ *int, _ *string) (*model.RevisionFileList, error) {
	files, err := store.RevisionFiles(ctx, r.DB, rev.OrganizationID, rev.ID)
	if err != nil {
		return nil, err
	}
	return paginateOrdered(files, page, limit, func(f *store.RevisionFile) string { return f.ID })
}

func (r *mutationResolver) UploadFile(ctx context.Context, spaceID string, crID *string, upload graphql.Upload, name, base *string) (*store.RevisionFile, error) {
	// SECURITY: the space is checked (editors) before any byte is stored.
	if _, err := r.editableSpace(ctx, spaceID); err != nil {
		return nil, err
	}
	fileName := upload.Filename
	if name != nil {
		fileName = *name
	}
	fileName = path.Base(strings.ReplaceAll(fileName, "\\", "/"))
	if fileName == "." || fileName == "/" {
		fileName = ""
	}
	if err := checkLength("name", fileName, 1, 255); err != nil {
		return nil, err
	}
	// The first bytes tell an image's size and, when the client did not say,
	// the content type.
	head := make([]byte, 512)
	n, _ := io.ReadFull(upload.File, head)
	head = head[:n]
	contentType := upload.ContentType
	if _, _, err := mime.ParseMediaType(contentType); err != nil || contentType == "" || contentType == "application/octet-stream" {
		contentType = http.DetectContentType(head)
	}
	digest, size, err := r.Blobs.Put(ctx, io.MultiReader(bytes.NewReader(head), upload.File), r.MaxUpload)
	if errors.Is(err, blob.ErrTooLarge) {
		return nil, Invalid("file", "must be at most %d bytes", r.MaxUpload)
	} else if err != nil {
		return nil, err
	}
	f := &store.RevisionFile{ID: store.NewID(), Name: fileName, ContentType: contentType, Size: size, BlobSHA256: digest}
	if strings.HasPrefix(contentType, "image/") {
		if rc, err := r.Blobs.Open(ctx, digest); err == nil {
			if cfg, _, err := image.DecodeConfig(rc); err == nil {
				f.Width, f.Height = &cfg.Width, &cfg.Height
			}
			rc.Close()
		}
	}
	rev, _, err := r.editContent(ctx, spaceID, crID, base, func(_ *store.PageTree, c *store.Content) error {
		c.Files = append(c.Files, f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	f.RevisionID = rev.ID
	return f, nil
}

func (r *mutationResolver) DeleteFile(ctx context.Context, spaceID string, crID *string, fileID string, base *string) (bool, error) {
	_, _, err := r.editContent(ctx, spaceID, crID, base, func(_ *store.PageTree, c *store.Content) error {
		i := slices.IndexFunc(c.Files, func(f *store.RevisionFile) bool { return f.ID == fileID })
		if i < 0 {
			return errNoFile
		}
		c.Files = slices.Delete(c.Files, i, i+1)
		return nil
	})
	if errors.Is(err, errNoFile) {
		return false, nil
	}
	return err == nil, err
}

var errNoFile = errors.New("no such file")

// Size is the file's size in bytes (GraphQL Int).
func (r *revisionFileResolver) Size(_ context.Context, f *store.RevisionFile) (int, error) {
	return int(f.Size), nil
}
