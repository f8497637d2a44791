package knowledge_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	"github.com/cairnkg/cairn/knowledge"
)

// Size of the synthetic graph of BenchmarkRelatedEntities.
const (
	benchEntities      = 100_000
	benchRelationships = 500_000
)

var benchGraph struct {
	sync.Once
	dir string
	db  *sqlite.DB
	svc *knowledge.Service
	ids []string
	err error
}

// TestMain removes the benchmark's store, which outlives any one benchmark.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchGraph.db != nil {
		benchGraph.db.Close()
	}
	if benchGraph.dir != "" {
		os.RemoveAll(benchGraph.dir)
	}
	os.Exit(code)
}

// syntheticGraph builds, once per process, a graph of benchEntities
// companies and people and benchRelationships edges: 70% REFERS_TO between
// random entities, 30% PART_OF from a later to an earlier entity (acyclic by
// construction). It writes through the graph API directly; the store
// pipeline would take minutes for this many entities.
func syntheticGraph(b *testing.B) (*knowledge.Service, []string) {
	b.Helper()
	benchGraph.Do(func() {
		dir, err := os.MkdirTemp("", "cairn-bench")
		if err != nil {
			benchGraph.err = err
			return
		}
		benchGraph.dir = dir
		db, err := sqlite.OpenFile(context.Background(), filepath.Join(dir, "cairn.db"))
		if err != nil {
			benchGraph.err = err
			return
		}
		benchGraph.db = db
		g := graph.NewStore(embedded.New(db))
		rng := rand.New(rand.NewPCG(7, 7))
		now := graph.Now()
		ids := make([]string, benchEntities)
		for i := range ids {
			ids[i] = fmt.Sprintf("ent_bench%08d", i)
		}
		const batch = 20_000
		for start := 0; start < benchEntities; start += batch {
			err := g.Update(b.Context(), func(tx *graph.Tx) error {
				for i := start; i < min(start+batch, benchEntities); i++ {
					typ := []string{"company", "person"}[i%2]
					if err := tx.PutEntity(b.Context(), graph.Entity{
						ID: ids[i], UserID: alice.UserID, Type: typ, CanonicalName: fmt.Sprintf("%s %d", typ, i), SchemaVersion: "1.0",
						Snapshot: map[string]any{"name": fmt.Sprintf("%s %d", typ, i)}, ObservationCount: 1,
						LastObservationAt: now, CreatedAt: now, ComputedAt: now,
					}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				benchGraph.err = err
				return
			}
		}
		for start := 0; start < benchRelationships; start += batch {
			err := g.Update(b.Context(), func(tx *graph.Tx) error {
				for i := start; i < min(start+batch, benchRelationships); i++ {
					src, dst, typ := rng.IntN(benchEntities), rng.IntN(benchEntities), graph.RefersTo
					if rng.IntN(10) < 3 {
						typ = graph.PartOf
						if src < dst {
							src, dst = dst, src
						}
					}
					if src == dst {
						continue
					}
					id := graph.RelationshipID(typ, ids[src], ids[dst])
					if err := tx.PutRelationship(b.Context(), graph.Relationship{
						ID: id, UserID: alice.UserID, Type: typ, SourceEntityID: ids[src], TargetEntityID: ids[dst],
						CreatedAt: now, LastObservationAt: now,
					}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				benchGraph.err = err
				return
			}
		}
		benchGraph.svc = knowledge.NewService(g, knowledge.NewRegistry(), knowledge.Options{})
		benchGraph.ids = ids
	})
	if benchGraph.err != nil {
		b.Fatal(benchGraph.err)
	}
	return benchGraph.svc, benchGraph.ids
}

// BenchmarkRelatedEntities measures retrieve_related_entities (the
// knowledge call behind the tool, snapshots included) at 1, 2 and 3 hops on
// the embedded driver, from random start entities, and reports p50 and p95
// latency besides the mean.
//
//	go test -run '^$' -bench RelatedEntities -benchtime 200x ./knowledge/
func BenchmarkRelatedEntities(b *testing.B) {
	svc, ids := syntheticGraph(b)
	for _, hops := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("hops=%d", hops), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(uint64(hops), 1))
			var lat []time.Duration
			reached := 0
			for b.Loop() {
				start := time.Now()
				res, err := svc.RelatedEntities(b.Context(), alice, knowledge.RelatedQuery{EntityID: ids[rng.IntN(len(ids))], MaxHops: hops})
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				reached += len(res.Reached)
			}
			slices.Sort(lat)
			pct := func(p float64) float64 {
				return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.95), "p95-ms")
			b.ReportMetric(float64(reached)/float64(len(lat)), "entities/op")
		})
	}
}
