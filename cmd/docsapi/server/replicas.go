package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsapi/docsapi/graph/engine"
	"github.com/docsapi/docsapi/rest"
	"github.com/docsapi/docsapi/store"
)

// WritePositionHeader carries a client's last write between the instances
// of a service with replicas (DOCSAPI_REPLICA_URLS): the answers of
// /graphql and /v1 carry the position in the primary's write-ahead log
// that the client's reads must see (after its writes), and a client that
// sends the latest one back with its next requests reads its own writes
// on every instance, not only on the one it wrote through (which remembers
// them by user). Why the client carries it rather than the database: a
// position kept in the primary would cost a query on the primary for every
// read, the cost replicas are there to take away (docs/scaling.md).
const WritePositionHeader = "X-Write-Position"

// writePositions gives each request of /graphql and /v1 its client's
// position (store.ClientPosition): what the client sent back, and, with
// replicas, what the request's writes raise it to, written back in the
// answer. A position that is not one (PostgreSQL's text form of an LSN,
// as the server sent it) is a 400 whether or not there are replicas, so a
// client finds its mistake before it matters. REST requests that write
// (anything but GET) read on the primary, their conditional reads
// (If-Match) included.
func writePositions(db *store.DB, restRoutes bool, next http.Handler) http.Handler {
	refuse := func(w http.ResponseWriter, r *http.Request, msg string) {
		if restRoutes {
			rest.WriteError(w, http.StatusBadRequest, msg)
			return
		}
		engine.WriteHTTPError(w, r, http.StatusBadRequest, "BAD_REQUEST", msg)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var sent store.LSN
		if h := r.Header.Get(WritePositionHeader); h != "" {
			var err error
			if sent, err = store.ParseLSN(h); err != nil {
				refuse(w, r, WritePositionHeader+": "+err.Error()+"; send back the value of an earlier answer's "+WritePositionHeader)
				return
			}
		}
		if !db.Replicated() {
			next.ServeHTTP(w, r)
			return
		}
		writes := restRoutes && r.Method != http.MethodGet && r.Method != http.MethodHead
		p := store.NewClientPosition(sent, writes)
		if !engine.IsWebsocket(r) {
			w = &positionHeader{ResponseWriter: w, p: p}
		}
		next.ServeHTTP(w, r.WithContext(store.WithClientPosition(r.Context(), p)))
	})
}

// positionHeader sets the client's position on the answer as it starts,
// once the request's writes are done.
type positionHeader struct {
	http.ResponseWriter
	p    *store.ClientPosition
	done bool
}

func (h *positionHeader) WriteHeader(code int) {
	if !h.done {
		h.done = true
		if at := h.p.Position(); at != 0 {
			h.Header().Set(WritePositionHeader, at.String())
		}
	}
	h.ResponseWriter.WriteHeader(code)
}

func (h *positionHeader) Write(b []byte) (int, error) {
	if !h.done {
		h.WriteHeader(http.StatusOK)
	}
	return h.ResponseWriter.Write(b)
}

func (h *positionHeader) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// replicaMetrics reports the routing of reads (store.ReplicaStats) at
// each scrape.
type replicaMetrics struct{ db *store.DB }

var (
	readsDesc = prometheus.NewDesc("docsapi_db_reads_total",
		"Reads outside transactions, by the pool that answered them: with replicas, the reads of read-only requests (GraphQL queries, REST GETs), on the primary or a replica's host:port; on a Citus cluster, the reads of one organization, on its worker's host:port or the coordinator.",
		[]string{"pool"}, nil)
	fallbacksDesc = prometheus.NewDesc("docsapi_db_replica_fallbacks_total",
		"Reads of read-only requests the primary answered, and why no replica did: down (no replica up), lagging (past DOCSAPI_REPLICA_MAX_LAG), behind_caller (not yet past the caller's last write), request_wrote (the request wrote before), read_failed (a replica failed a read of the request).",
		[]string{"reason"}, nil)
	lagDesc = prometheus.NewDesc("docsapi_db_replica_lag_seconds",
		"How far behind the primary each replica was at its last check (every 100 ms): how long ago the primary was where the replica is.",
		[]string{"replica"}, nil)
	upDesc = prometheus.NewDesc("docsapi_db_replica_up",
		"1 while the replica answers its checks as a standby of the primary and has failed no read since, else 0.",
		[]string{"replica"}, nil)
)

func (m replicaMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- readsDesc
	ch <- fallbacksDesc
	ch <- lagDesc
	ch <- upDesc
}

func (m replicaMetrics) Collect(ch chan<- prometheus.Metric) {
	stats, ok := m.db.ReplicaStats()
	if !ok {
		return
	}
	ch <- prometheus.MustNewConstMetric(readsDesc, prometheus.CounterValue, float64(stats.PrimaryReads), "primary")
	for reason, n := range stats.Fallbacks {
		ch <- prometheus.MustNewConstMetric(fallbacksDesc, prometheus.CounterValue, float64(n), reason)
	}
	for _, r := range stats.Replicas {
		collectPool(ch, upDesc, r.Name, r.Up, r.Reads)
		ch <- prometheus.MustNewConstMetric(lagDesc, prometheus.GaugeValue, r.Lag.Seconds(), r.Name)
	}
}

// collectPool reports the reads a pool that takes reads (a replica, a
// Citus worker) answered, and whether it takes them now (up, a gauge of
// 1 or 0).
func collectPool(ch chan<- prometheus.Metric, up *prometheus.Desc, name string, isUp bool, reads int64) {
	v := 0.0
	if isUp {
		v = 1
	}
	ch <- prometheus.MustNewConstMetric(readsDesc, prometheus.CounterValue, float64(reads), name)
	ch <- prometheus.MustNewConstMetric(up, prometheus.GaugeValue, v, name)
}
