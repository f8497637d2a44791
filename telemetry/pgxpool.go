package telemetry

import (
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// WatchPgxPools exports the statistics (pgxpool.Stat) of pgx pools, by
// name, as cairn_pgxpool_* series with a pool label, read at each scrape.
// Nil pools are left out.
func (m *Metrics) WatchPgxPools(pools map[string]*pgxpool.Pool) {
	if m == nil {
		return
	}
	c := &pgxPoolCollector{pools: map[string]*pgxpool.Pool{}}
	for name, p := range pools {
		if p != nil {
			c.pools[name] = p
		}
	}
	if len(c.pools) > 0 {
		m.Registry.MustRegister(c)
	}
}

type pgxPoolCollector struct{ pools map[string]*pgxpool.Pool }

func poolDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(Namespace+"_pgxpool_"+name, help, []string{"pool"}, nil)
}

var (
	pgxAcquired     = poolDesc("acquired_conns", "Connections currently acquired from the PostgreSQL pool.")
	pgxIdle         = poolDesc("idle_conns", "Idle connections in the PostgreSQL pool.")
	pgxTotal        = poolDesc("total_conns", "Connections in the PostgreSQL pool, acquired, idle or being opened.")
	pgxMax          = poolDesc("max_conns", "Most connections the PostgreSQL pool opens.")
	pgxAcquires     = poolDesc("acquires_total", "Connections acquired from the PostgreSQL pool.")
	pgxAcquireWait  = poolDesc("acquire_duration_seconds_total", "Time spent acquiring connections from the PostgreSQL pool.")
	pgxEmptyAcquire = poolDesc("empty_acquires_total", "Acquires that waited because the PostgreSQL pool had no idle connection.")
	pgxCanceled     = poolDesc("canceled_acquires_total", "Acquires cancelled by their context before they got a connection.")
	pgxNew          = poolDesc("new_conns_total", "Connections the PostgreSQL pool opened.")
)

func (c *pgxPoolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{pgxAcquired, pgxIdle, pgxTotal, pgxMax, pgxAcquires, pgxAcquireWait, pgxEmptyAcquire, pgxCanceled, pgxNew} {
		ch <- d
	}
}

func (c *pgxPoolCollector) Collect(ch chan<- prometheus.Metric) {
	for name, pool := range c.pools {
		s := pool.Stat()
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, name)
		}
		counter := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, name)
		}
		gauge(pgxAcquired, float64(s.AcquiredConns()))
		gauge(pgxIdle, float64(s.IdleConns()))
		gauge(pgxTotal, float64(s.TotalConns()))
		gauge(pgxMax, float64(s.MaxConns()))
		counter(pgxAcquires, float64(s.AcquireCount()))
		counter(pgxAcquireWait, s.AcquireDuration().Seconds())
		counter(pgxEmptyAcquire, float64(s.EmptyAcquireCount()))
		counter(pgxCanceled, float64(s.CanceledAcquireCount()))
		counter(pgxNew, float64(s.NewConnsCount()))
	}
}
