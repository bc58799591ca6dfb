package graph

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docsapi/docsapi/store"
)

// PublishedChanges tells this process what changed of what visitors read,
// so that what it remembers of published sites (the sites published
// addresses name, the pages the reader rendered) is never older than the
// database: every process LISTENs on store.PublishedChannel, where the
// store announces, at commit, each change to a site (its row, structure,
// customization, share links, visitor key) and to a space (its row, its
// live revision).
//
// It numbers what it hears: a cached value read at number n is fresh while
// nothing it depends on changed after n (Fresh). While the connection is
// down nothing is fresh (changes may go unheard), and once it is back
// nothing remembered from before is.
type PublishedChanges struct {
	db  *store.DB
	log *slog.Logger

	seq  atomic.Uint64
	live atomic.Bool
	// heardTotal counts the changes heard (Heard).
	heardTotal atomic.Uint64

	mu sync.RWMutex
	// liveSince is the number at which the connection last came up: what
	// was read before it may have missed a change.
	liveSince uint64
	// siteChanged is, by site id, the number of its last change;
	// anySite that of the last change to any site.
	siteChanged map[string]uint64
	anySite     uint64
	// showing is, by space id, the sites known to show it (Shows), so
	// that a change to the space is one to them; shown is the reverse;
	// spaceChanged the number of each space's last change, for the sites
	// that come to show it after.
	showing      map[string]map[string]struct{}
	shown        map[string][]string
	spaceChanged map[string]uint64

	// changed are told of each site that changed (OnChange).
	changed []func(siteID string)

	stop context.CancelFunc
	done chan struct{}
	// listening is closed when the connection first listens.
	listening     chan struct{}
	listeningOnce sync.Once
}

// OnChange has fn told of each site that changes, once the change is
// heard (what was kept of it can go).
func (p *PublishedChanges) OnChange(fn func(siteID string)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.changed = append(p.changed, fn)
}

// NewPublishedChanges returns the tracker of db's published changes; it
// hears nothing until Start. It hears this process's own changes as they
// commit (store.DB.OnNotified), before PostgreSQL delivers them: a
// visitor's request that follows a write on the same process sees it.
func NewPublishedChanges(db *store.DB, log *slog.Logger) *PublishedChanges {
	p := &PublishedChanges{db: db, log: log, siteChanged: map[string]uint64{},
		showing: map[string]map[string]struct{}{}, shown: map[string][]string{}, spaceChanged: map[string]uint64{}}
	next := db.OnNotified
	db.OnNotified = func(channel, payload string) {
		if next != nil {
			next(channel, payload)
		}
		if channel == store.PublishedChannel {
			p.heard(payload)
		}
	}
	return p
}

// startWait bounds how long Start waits for the connection to listen.
const startWait = 5 * time.Second

// Start listens until Close, reconnecting with a growing pause when the
// connection drops. It returns once the connection listens (or after
// startWait, when the database is slow to answer): pages are kept from the
// server's first request, not from whenever the listener comes up.
func (p *PublishedChanges) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	p.stop, p.done = cancel, make(chan struct{})
	p.listening = make(chan struct{})
	defer func() {
		select {
		case <-p.listening:
		case <-p.done:
		case <-time.After(startWait):
		}
	}()
	go func() {
		defer close(p.done)
		pause := 100 * time.Millisecond
		for ctx.Err() == nil {
			err := p.db.ListenOnce(ctx, []string{store.PublishedChannel}, p.up, p.delivered)
			p.live.Store(false)
			if ctx.Err() != nil {
				return
			}
			p.log.Warn("published sites: listening for changes failed; pages are made afresh until it is back", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(pause):
			}
			pause = min(2*pause, 10*time.Second)
		}
	}()
}

// Close stops listening.
func (p *PublishedChanges) Close() {
	if p == nil || p.stop == nil {
		return
	}
	p.stop()
	<-p.done
}

// up: the connection listens; what was read before is not to be trusted.
func (p *PublishedChanges) up() {
	p.mu.Lock()
	p.liveSince = p.seq.Add(1)
	p.mu.Unlock()
	p.live.Store(true)
	p.listeningOnce.Do(func() { close(p.listening) })
}

// delivered hears a change PostgreSQL delivered, unless this process's DB
// raised it: OnNotified told it at its commit, before any page could be
// made of it, and hearing it again would drop those pages for nothing.
func (p *PublishedChanges) delivered(_, payload string) {
	if c, ok := store.ParsePublishedPayload(payload); ok && c.Origin != "" && c.Origin == p.db.Origin() {
		return
	}
	p.heard(payload)
}

// heard records a change announced on store.PublishedChannel.
func (p *PublishedChanges) heard(payload string) {
	c, ok := store.ParsePublishedPayload(payload)
	if !ok {
		return
	}
	kind, id := c.Kind, c.ID
	p.heardTotal.Add(1)
	p.mu.Lock()
	n := p.seq.Add(1)
	var sites []string
	switch kind {
	case "site":
		p.siteChanged[id], p.anySite = n, n
		sites = []string{id}
	case "space":
		p.spaceChanged[id] = n
		for site := range p.showing[id] {
			p.siteChanged[site] = n
			sites = append(sites, site)
		}
	}
	tell := p.changed
	p.mu.Unlock()
	for _, site := range sites {
		for _, fn := range tell {
			fn(site)
		}
	}
}

// Heard is the number of changes heard so far, this process's own and
// the others': another process's change is on this one's pages once it
// is heard (PostgreSQL delivers it at its commit, in a millisecond or so
// when the machines are not overloaded).
func (p *PublishedChanges) Heard() uint64 {
	if p == nil {
		return 0
	}
	return p.heardTotal.Load()
}

// Seq is the number of the last change heard: take it before reading what
// is to be remembered.
func (p *PublishedChanges) Seq() uint64 {
	if p == nil {
		return 0
	}
	return p.seq.Load()
}

// Fresh tells whether what was read of site siteID at number seq still
// holds: the connection has listened since before seq, and nothing the site
// shows changed after it.
func (p *PublishedChanges) Fresh(seq uint64, siteID string) bool {
	if p == nil || !p.live.Load() {
		return false
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	return seq >= p.liveSince && p.siteChanged[siteID] <= seq
}

// NoSiteChangedSince tells whether no site changed after seq: what an
// address naming no site answered at seq still holds.
func (p *PublishedChanges) NoSiteChangedSince(seq uint64) bool {
	if p == nil || !p.live.Load() {
		return false
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	return seq >= p.liveSince && p.anySite <= seq
}

// Shows records that site siteID shows spaces (what its pages name of
// them: titles, content): a change to one of them is a change to the site.
func (p *PublishedChanges) Shows(siteID string, spaces []string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, old := range p.shown[siteID] {
		delete(p.showing[old], siteID)
		if len(p.showing[old]) == 0 {
			delete(p.showing, old)
		}
	}
	p.shown[siteID] = spaces
	for _, s := range spaces {
		// A change to the space heard before the site was known to show
		// it (while the site's page was being made) is one to the site.
		p.siteChanged[siteID] = max(p.siteChanged[siteID], p.spaceChanged[s])
		if p.showing[s] == nil {
			p.showing[s] = map[string]struct{}{}
		}
		p.showing[s][siteID] = struct{}{}
	}
}
