package telemetry_test

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/telemetry"
)

// TestWatchPgxPools registers two pools under their names and checks that
// each series of each is exported once, labelled with its pool; a nil
// pool is left out.
func TestWatchPgxPools(t *testing.T) {
	url := pgtest.URL(t)
	pools := map[string]*pgxpool.Pool{}
	for _, name := range []string{"graph", "vectors"} {
		p, err := pgxpool.New(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		if err := p.Ping(t.Context()); err != nil {
			t.Fatal(err)
		}
		pools[name] = p
	}
	pools["control"] = nil
	m := telemetry.NewMetrics()
	m.WatchPgxPools(pools)
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, series := range []string{"acquired_conns", "idle_conns", "total_conns", "max_conns", "acquires_total",
		"acquire_duration_seconds_total", "empty_acquires_total", "canceled_acquires_total", "new_conns_total"} {
		name := telemetry.Namespace + "_pgxpool_" + series
		got := map[string]int{}
		for _, f := range fams {
			if f.GetName() != name {
				continue
			}
			for _, mt := range f.GetMetric() {
				for _, l := range mt.GetLabel() {
					if l.GetName() == "pool" {
						got[l.GetValue()]++
					}
				}
			}
		}
		if len(got) != 2 || got["graph"] != 1 || got["vectors"] != 1 {
			t.Errorf("%s by pool: %v, want graph and vectors once each", name, got)
		}
	}
}
