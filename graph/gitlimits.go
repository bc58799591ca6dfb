package graph

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/docsapi/docsapi/graph/internal/gitlayout"
)

// What a git transfer may bring in. A repository is small on the wire and
// huge once read when one blob is referenced by thousands of paths, or when
// a blob of zeros compresses a thousandfold; reading it as it comes would
// exhaust memory. So everything is checked from metadata before contents
// are read: the fetched pack's object headers as it arrives (boundedStorage),
// then the commit's tree entries and blob sizes (checkTree), and only then
// are the files read, each distinct blob once (readTreeFiles).

// GitLimits bounds one git import, and the clone an export starts from.
// They apply to the commit's whole tree, whatever directory is imported:
// the transfer brings the whole tree in.
type GitLimits struct {
	// MaxFiles bounds the paths of the tree: files and directories.
	MaxFiles int
	// MaxBytes bounds the sum of the tree's file sizes, each path counted:
	// a blob at N paths counts N times.
	MaxBytes int64
	// MaxFileBytes bounds one file, and any one blob of the transfer.
	MaxFileBytes int64
}

// Defaults of GitLimits. A documentation repository of a few thousand
// pages (the benchmark imports 2,000) has well under 10,000 paths and a few
// MB of markdown; 25 MiB per file is the upload limit's default
// (DOCSAPI_MAX_UPLOAD_BYTES), so any file the server accepts can make the
// round trip through git; 100 MiB in all leaves room for images while
// bounding what one import holds in memory: about twice that at worst (the
// pack and the objects parsed from it; then the objects and the files
// read from them).
const (
	DefaultGitMaxFiles     = 10_000
	DefaultGitMaxBytes     = 100 << 20
	DefaultGitMaxFileBytes = 25 << 20
)

func (l GitLimits) withDefaults() GitLimits {
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultGitMaxFiles
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultGitMaxBytes
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultGitMaxFileBytes
	}
	return l
}

// maxObjects bounds the objects of a fetched pack: a depth-1 clone holds
// the commit, one tree per directory (the root's too) and at most one blob
// per file, so at most MaxFiles+2 in a tree within the limits.
func (l GitLimits) maxObjects() int64 { return int64(l.MaxFiles) + 16 }

// treeBytes is room for the trees (an entry, under 1 KiB, per path) and
// the commit.
func (l GitLimits) treeBytes() int64 { return int64(l.MaxFiles)<<10 + 1<<20 }

// packBytes bounds the expanded size of a fetched pack's objects: the
// files' bytes (distinct blobs weigh no more than the paths naming them),
// plus the trees and the commit.
func (l GitLimits) packBytes() int64 { return l.MaxBytes + l.treeBytes() }

// objectBytes bounds one object of a fetched pack: a blob is a file; a
// tree, commit or tag is within treeBytes; a delta's type is its base's,
// not known without resolving it, so either (checkTree has the last word
// on blobs).
func (l GitLimits) objectBytes(typ plumbing.ObjectType) int64 {
	switch typ {
	case plumbing.BlobObject:
		return l.MaxFileBytes
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.TagObject:
		return l.treeBytes()
	}
	return max(l.MaxFileBytes, l.treeBytes())
}

// wireBytes bounds the pack as received: its expanded size, plus zlib's
// worst case on incompressible data and each object's header.
func (l GitLimits) wireBytes() int64 {
	return l.packBytes() + l.packBytes()/32 + l.maxObjects()*64
}

// connBytes bounds what one connection of a transfer may read: the pack,
// plus the refs the server advertises (tens of thousands on large hosted
// repositories), sideband framing and progress messages.
func (l GitLimits) connBytes() int64 { return l.wireBytes() + 32<<20 }

// mib renders a byte count for messages.
func mib(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// boundedStorage is go-git's in-memory storage, taking fetched packs
// through checkPack before go-git's parser expands a single object.
type boundedStorage struct {
	*memory.Storage
	limits GitLimits
	// refused is why a fetched pack was refused: go-git may reword the
	// error on its way out, the clone's caller answers this one.
	refused error
}

func newBoundedStorage(l GitLimits) *boundedStorage {
	return &boundedStorage{Storage: memory.NewStorage(), limits: l}
}

// PackfileWriter makes go-git hand the fetched pack over as it is
// received (storer.PackfileWriter), rather than parse it into memory
// objects directly.
func (s *boundedStorage) PackfileWriter() (io.WriteCloser, error) {
	return &packWriter{s: s}, nil
}

// packWriter buffers a pack, at most wireBytes of it, then checks it and
// only then parses it into the storage.
type packWriter struct {
	s   *boundedStorage
	buf bytes.Buffer
	err error
}

func (w *packWriter) fail(err error) error {
	w.err, w.s.refused = err, err
	w.buf = bytes.Buffer{}
	return err
}

func (w *packWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if max := w.s.limits.wireBytes(); int64(w.buf.Len())+int64(len(p)) > max {
		// SECURITY: the transfer itself is bounded, whatever it holds.
		return 0, w.fail(OverLimit("url", "the repository's commit is more than %s to transfer, over this server's limits", mib(max)))
	}
	return w.buf.Write(p)
}

func (w *packWriter) Close() error {
	if w.err != nil {
		return w.err
	}
	data := w.buf.Bytes()
	if err := checkPack(data, w.s.limits); err != nil {
		return w.fail(err)
	}
	p, err := packfile.NewParserWithStorage(packfile.NewScanner(bytes.NewReader(data)), w.s.Storage)
	if err == nil {
		_, err = p.Parse()
	}
	w.buf = bytes.Buffer{}
	return err
}

// errBadPack is a pack that does not follow the format.
var errBadPack = errors.New("malformed pack")

// checkPack reads a pack's objects as a stream, holding none of them: the
// header of each gives its expanded size (for a delta, the first bytes of
// its data give the size of the object it makes), and each is refused past
// objectBytes, the whole past packBytes, before go-git's parser expands
// anything. Each object's data is inflated only up to the size its header
// claims, to find where the next one starts.
func checkPack(data []byte, l GitLimits) error {
	r := bufio.NewReader(bytes.NewReader(data))
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil || string(hdr[:4]) != "PACK" {
		return BadRequest("git: %v", errBadPack)
	}
	if v := binary.BigEndian.Uint32(hdr[4:8]); v != 2 && v != 3 {
		return BadRequest("git: %v: version %d", errBadPack, v)
	}
	count := int64(binary.BigEndian.Uint32(hdr[8:12]))
	if count > l.maxObjects() {
		return OverLimit("url", "the repository's commit has %d objects, more than this server's limit of %d files and directories allows", count, l.MaxFiles)
	}
	tooLarge := func(typ plumbing.ObjectType, size int64) error {
		if typ == plumbing.BlobObject {
			return OverLimit("url", "the repository holds a file of %s, more than this server's limit of %s per file", mib(size), mib(l.MaxFileBytes))
		}
		return OverLimit("url", "the repository holds an object of %s, more than this server's limits allow", mib(size))
	}
	var total int64
	var zr io.ReadCloser
	for i := int64(0); i < count; i++ {
		c, err := r.ReadByte()
		if err != nil {
			return BadRequest("git: %v", errBadPack)
		}
		typ := plumbing.ObjectType((c >> 4) & 7)
		size := int64(c & 15)
		for shift := 4; c&0x80 != 0; shift += 7 {
			if c, err = r.ReadByte(); err != nil || shift > 56 {
				return BadRequest("git: %v", errBadPack)
			}
			size |= int64(c&0x7f) << shift
		}
		switch typ {
		case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
		case plumbing.OFSDeltaObject:
			for c = 0x80; c&0x80 != 0; {
				if c, err = r.ReadByte(); err != nil {
					return BadRequest("git: %v", errBadPack)
				}
			}
		case plumbing.REFDeltaObject:
			if _, err := r.Discard(20); err != nil {
				return BadRequest("git: %v", errBadPack)
			}
		default:
			return BadRequest("git: %v: object type %d", errBadPack, typ)
		}
		// SECURITY: refused on the header, before inflating anything.
		if size > l.objectBytes(typ) {
			return tooLarge(typ, size)
		}
		if zr == nil {
			zr, err = zlib.NewReader(r)
		} else {
			err = zr.(zlib.Resetter).Reset(r, nil)
		}
		if err != nil {
			return BadRequest("git: %v", errBadPack)
		}
		body := &io.LimitedReader{R: zr, N: size + 1}
		made := size
		if typ.IsDelta() {
			// A delta starts with the sizes of its base and of the
			// object it makes.
			if _, err := deltaSize(body); err != nil {
				return BadRequest("git: %v", errBadPack)
			}
			if made, err = deltaSize(body); err != nil {
				return BadRequest("git: %v", errBadPack)
			}
			if made > l.objectBytes(typ) {
				return tooLarge(typ, made)
			}
		}
		if total += made; total > l.packBytes() {
			return OverLimit("url", "the repository's commit comes to more than %s, over this server's limits", mib(l.packBytes()))
		}
		// Inflate the rest to io.Discard (reading to EOF checks zlib's
		// trailer and leaves r at the next object).
		if _, err := io.Copy(io.Discard, body); err != nil {
			return BadRequest("git: %v: %v", errBadPack, err)
		}
		if body.N == 0 {
			return BadRequest("git: %v: an object is larger than its header says", errBadPack)
		}
	}
	return nil
}

// deltaSize reads one of a delta's leading sizes (little-endian base 128).
func deltaSize(r io.Reader) (int64, error) {
	var size int64
	var b [1]byte
	for shift := 0; ; shift += 7 {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, err
		}
		if shift > 56 {
			return 0, errBadPack
		}
		size |= int64(b[0]&0x7f) << shift
		if b[0]&0x80 == 0 {
			return size, nil
		}
	}
}

// treeFile is a file of a commit's tree, checked against the limits.
type treeFile struct {
	path string
	hash plumbing.Hash
	size int64
}

// checkTree walks tree's entries and its blobs' sizes, reading no file,
// and refuses it past the limits: every path counts, so a blob referenced
// by thousands of paths weighs thousands of times its size, and a tree
// referenced by thousands of directories is walked no further than
// MaxFiles paths.
func checkTree(s storer.EncodedObjectStorer, tree *object.Tree, l GitLimits) ([]treeFile, error) {
	var files []treeFile
	var paths int
	var total int64
	sizes := map[plumbing.Hash]int64{}
	var walk func(t *object.Tree, dir string) error
	walk = func(t *object.Tree, dir string) error {
		for _, e := range t.Entries {
			// SECURITY: directories count too, so nested trees of no
			// files cannot make the walk endless.
			if paths++; paths > l.MaxFiles {
				return OverLimit("url", "the repository has more than %d files and directories, this server's limit", l.MaxFiles)
			}
			p := path.Join(dir, e.Name)
			switch e.Mode {
			case filemode.Dir:
				sub, err := object.GetTree(s, e.Hash)
				if err != nil {
					return err
				}
				if err := walk(sub, p); err != nil {
					return err
				}
				continue
			case filemode.Submodule:
				continue // a commit of another repository: nothing here to read
			}
			size, ok := sizes[e.Hash]
			if !ok {
				obj, err := s.EncodedObject(plumbing.BlobObject, e.Hash)
				if err != nil {
					return err
				}
				size = obj.Size()
				sizes[e.Hash] = size
			}
			if size > l.MaxFileBytes {
				return OverLimit("url", "%s is %s, more than this server's limit of %s per file", p, mib(size), mib(l.MaxFileBytes))
			}
			if total += size; total > l.MaxBytes {
				return OverLimit("url", "the repository's files come to more than %s (each path counted), this server's limit", mib(l.MaxBytes))
			}
			files = append(files, treeFile{path: p, hash: e.Hash, size: size})
		}
		return nil
	}
	return files, walk(tree, "")
}

// readTreeFiles reads the files checkTree listed, each distinct blob once
// (paths naming the same blob share its bytes).
func readTreeFiles(s storer.EncodedObjectStorer, files []treeFile) (map[string]gitlayout.File, error) {
	blobs := map[plumbing.Hash][]byte{}
	out := make(map[string]gitlayout.File, len(files))
	for _, f := range files {
		data, ok := blobs[f.hash]
		if !ok {
			obj, err := s.EncodedObject(plumbing.BlobObject, f.hash)
			if err != nil {
				return nil, err
			}
			rd, err := obj.Reader()
			if err != nil {
				return nil, err
			}
			data, err = io.ReadAll(io.LimitReader(rd, f.size))
			_ = rd.Close()
			if err != nil {
				return nil, err
			}
			blobs[f.hash] = data
		}
		out[f.path] = gitlayout.File{Path: f.path, Data: data, OID: f.hash.String()}
	}
	return out, nil
}
