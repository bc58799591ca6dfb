package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsapi/docsapi/store"
)

// workerMetrics reports the reads on a Citus cluster's workers
// (store.WorkerStats) at each scrape: the reads of one organization that
// its worker answered, those the coordinator did, and whether each worker
// takes reads.
type workerMetrics struct{ db *store.DB }

var workerUpDesc = prometheus.NewDesc("docsapi_db_worker_up",
	"1 while the Citus worker answers its checks (every second) and has failed no read since, so that the reads of the organizations it holds go to it; else 0, and they go through the coordinator.",
	[]string{"worker"}, nil)

func (m workerMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- readsDesc
	ch <- workerUpDesc
}

func (m workerMetrics) Collect(ch chan<- prometheus.Metric) {
	stats, ok := m.db.WorkerStats()
	if !ok {
		return
	}
	ch <- prometheus.MustNewConstMetric(readsDesc, prometheus.CounterValue, float64(stats.CoordinatorReads), "coordinator")
	for _, w := range stats.Workers {
		collectPool(ch, workerUpDesc, w.Name, w.Up, w.Reads)
	}
}
