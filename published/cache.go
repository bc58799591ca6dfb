package published

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/docsapi/docsapi/graph"
)

// A published page is a function of its site (settings and structure), the
// live revision of the space it shows, the page, where the site is served
// (its base: a custom hostname or the published prefix) and the outcomes
// of the site's conditions for the visitor. The reader keeps what it made,
// keyed by exactly those, in memory bounded by a size in bytes (least
// recently used first out), so a page view after the first is a map lookup
// and a write: as fast as a file server.
//
// It stays fresh through graph.PublishedChanges: each page is kept with
// the number of the last change this process had heard when it started to
// make it, and is used while nothing its site shows changed since (on
// every process: each hears every change from PostgreSQL). While that
// connection is down, nothing is used and nothing kept.
//
// Only what an admitted visitor may read is kept, and every request is
// admitted before the cache is asked: the cache decides nothing about who
// reads what.

// DefaultCacheBytes bounds the reader's pages in memory unless configured
// (DOCSAPI_PUBLISHED_CACHE_BYTES).
const DefaultCacheBytes = 128 << 20

// pageCache holds rendered pages.
type pageCache struct {
	changes *graph.PublishedChanges

	mu     sync.Mutex
	pages  *simplelru.LRU[string, *rendered]
	bytes  int64
	max    int64
	hits   atomic.Int64
	misses atomic.Int64
	// conditions are, by site, the conditions its pages asked of their
	// visitors when last made, and when: a visitor's answers to them are
	// part of a page's key.
	conditions map[string]siteConditions
	// keys are the keys of each site's pages, so that a site's change lets
	// them go at once.
	keys map[string]map[string]struct{}
	// shown are, by site, the spaces it showed to any of its visitors
	// (showing).
	shown map[string]map[string]struct{}
}

type siteConditions struct {
	sources []string
	seq     uint64
}

func newPageCache(changes *graph.PublishedChanges, maxBytes int64) *pageCache {
	if maxBytes <= 0 {
		maxBytes = DefaultCacheBytes
	}
	// The LRU's own bound is a count it never reaches: bytes decide.
	c := &pageCache{changes: changes, max: maxBytes, conditions: map[string]siteConditions{}, keys: map[string]map[string]struct{}{},
		shown: map[string]map[string]struct{}{}}
	c.pages, _ = simplelru.NewLRU[string, *rendered](1<<30, c.evicted)
	if changes != nil {
		changes.OnChange(c.forget)
	}
	return c
}

// showing records that site siteID shows spaceIDs to a visitor, and tells
// graph.PublishedChanges every space the site has shown to any visitor:
// a visitor whose conditions hide a section sees fewer spaces than
// another, and a change to a space must reach the pages kept of it for
// those who see it, whoever asked last. (A space the site no longer shows
// stays in the list: its changes only make the site's pages again.)
func (c *pageCache) showing(siteID string, spaceIDs []string) {
	c.mu.Lock()
	shown := c.shown[siteID]
	if shown == nil {
		shown = map[string]struct{}{}
		c.shown[siteID] = shown
	}
	for _, id := range spaceIDs {
		shown[id] = struct{}{}
	}
	all := make([]string, 0, len(shown))
	for id := range shown {
		all = append(all, id)
	}
	c.mu.Unlock()
	c.changes.Shows(siteID, all)
}

// evicted accounts for page p leaving the cache (c.mu held).
func (c *pageCache) evicted(key string, p *rendered) {
	c.bytes -= p.size()
	if keys := c.keys[p.site]; keys != nil {
		delete(keys, key)
		if len(keys) == 0 {
			delete(c.keys, p.site)
		}
	}
}

// forget lets the pages of site siteID go: it changed.
func (c *pageCache) forget(siteID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key := range c.keys[siteID] {
		c.pages.Remove(key) // evicted updates keys and bytes
	}
	delete(c.conditions, siteID)
}

// rendered is a page made once for any visitor with the same key: its
// status, its headers, its body and that body gzipped, and its ETag.
type rendered struct {
	site    string
	seq     uint64
	status  int
	header  http.Header
	body    []byte
	gzipped []byte
	etag    string
}

func (p *rendered) size() int64 { return int64(len(p.body) + len(p.gzipped) + 512) }

// newRendered makes a page of body, with its compressed form and ETag.
func newRendered(status int, header http.Header, body []byte) *rendered {
	sum := sha256.Sum256(body)
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	_, _ = w.Write(body)
	_ = w.Close()
	return &rendered{status: status, header: header, body: body, gzipped: z.Bytes(),
		etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`}
}

// key is the key of the page at path of site s served at base, for
// visitor v: "" when the cache cannot be used now (the site's conditions
// are not known as fresh).
func (c *pageCache) key(v *graph.Visitor, base, path string) string {
	siteID := v.Site().ID
	c.mu.Lock()
	conds, ok := c.conditions[siteID]
	c.mu.Unlock()
	if !ok || !c.changes.Fresh(conds.seq, siteID) {
		return ""
	}
	var outcomes strings.Builder
	for _, src := range conds.sources {
		if v.Sees(src) {
			outcomes.WriteByte('1')
		} else {
			outcomes.WriteByte('0')
		}
	}
	return siteID + "\x00" + base + "\x00" + outcomes.String() + "\x00" + path
}

// get is the page kept under key, while fresh.
func (c *pageCache) get(key string) *rendered {
	if key == "" {
		c.misses.Add(1)
		return nil
	}
	c.mu.Lock()
	p, ok := c.pages.Get(key)
	if ok && !c.changes.Fresh(p.seq, p.site) {
		// Outdated: its memory goes now, not when it is the oldest.
		c.pages.Remove(key)
		ok = false
	}
	c.mu.Unlock()
	if !ok {
		c.misses.Add(1)
		return nil
	}
	c.hits.Add(1)
	return p
}

// put keeps page p, made for visitor v at seq (the number of changes heard
// before it was started), under the key it has now that the conditions
// its making asked are known.
func (c *pageCache) put(v *graph.Visitor, seq uint64, base, path string, p *rendered) {
	siteID := v.Site().ID
	if !c.changes.Fresh(seq, siteID) {
		return // something changed while it was made
	}
	outcomes := v.Outcomes()
	sources := make([]string, 0, len(outcomes))
	for src := range outcomes {
		sources = append(sources, src)
	}
	slices.Sort(sources)
	c.mu.Lock()
	if known, ok := c.conditions[siteID]; !ok || known.seq < seq || !slices.Equal(known.sources, sources) {
		c.conditions[siteID] = siteConditions{sources: sources, seq: seq}
	}
	c.mu.Unlock()
	key := c.key(v, base, path)
	if key == "" || p.size() > c.max/8 {
		return
	}
	p.site, p.seq = siteID, seq
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pages.Remove(key) // a page made again replaces the one kept
	c.pages.Add(key, p)
	c.bytes += p.size()
	if c.keys[siteID] == nil {
		c.keys[siteID] = map[string]struct{}{}
	}
	c.keys[siteID][key] = struct{}{}
	for c.bytes > c.max {
		if _, _, ok := c.pages.RemoveOldest(); !ok {
			break
		}
	}
}

// Stats are the cache's size and use, for /metrics.
type Stats struct {
	Bytes, Entries, Hits, Misses int64
}

// CacheStats tells how big the reader's cache is and how it is used.
func (rd *Reader) CacheStats() Stats {
	c := rd.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Bytes: c.bytes, Entries: int64(c.pages.Len()), Hits: c.hits.Load(), Misses: c.misses.Load()}
}

// write answers r with page p: 304 when the client has it, gzipped when
// the client takes it.
func (p *rendered) write(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	for k, v := range p.header {
		h[k] = v
	}
	h.Set("ETag", p.etag)
	h.Add("Vary", "Accept-Encoding")
	if p.status == http.StatusOK && etagMatches(r.Header.Get("If-None-Match"), p.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := p.body
	if acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = p.gzipped
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(p.status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// etagMatches tells whether an If-None-Match header names etag.
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

// acceptsGzip tells whether r's client takes gzip (and has not refused it
// with q=0).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			return !strings.Contains(strings.ReplaceAll(params, " ", ""), "q=0") || strings.Contains(params, "q=0.")
		}
	}
	return false
}
