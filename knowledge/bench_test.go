package knowledge_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// Size of the synthetic graph of BenchmarkRelatedEntities.
const (
	benchEntities      = 100_000
	benchRelationships = 500_000
)

// syntheticGraph writes into g a graph of benchEntities companies and
// people and about benchRelationships edges: 70% REFERS_TO between random
// entities, 30% PART_OF from a later to an earlier entity (acyclic by
// construction). It writes through the graph API directly, in batches;
// the store pipeline would take minutes for this many entities.
func syntheticGraph(b *testing.B, g *graph.Store) []string {
	b.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	now := graph.Now()
	ids := make([]string, benchEntities)
	for i := range ids {
		ids[i] = fmt.Sprintf("ent_bench%08d", i)
	}
	const batch = 5_000
	for start := 0; start < benchEntities; start += batch {
		var es []graph.Entity
		for i := start; i < min(start+batch, benchEntities); i++ {
			typ := []string{"company", "person"}[i%2]
			es = append(es, graph.Entity{
				ID: ids[i], UserID: alice.UserID, Type: typ, CanonicalName: fmt.Sprintf("%s %d", typ, i), SchemaVersion: "1.0",
				Snapshot: map[string]any{"name": fmt.Sprintf("%s %d", typ, i)}, ObservationCount: 1,
				LastObservationAt: now, CreatedAt: now, ComputedAt: now,
			})
		}
		if err := g.Update(b.Context(), func(tx *graph.Tx) error { return tx.PutEntities(b.Context(), es) }); err != nil {
			b.Fatal(err)
		}
	}
	seen := map[string]bool{}
	var rs []graph.Relationship
	flush := func() {
		if err := g.Update(b.Context(), func(tx *graph.Tx) error { return tx.PutRelationships(b.Context(), rs) }); err != nil {
			b.Fatal(err)
		}
		rs = rs[:0]
	}
	for range benchRelationships {
		src, dst, typ := rng.IntN(benchEntities), rng.IntN(benchEntities), graph.RefersTo
		if rng.IntN(10) < 3 {
			typ = graph.PartOf
			if src < dst {
				src, dst = dst, src
			}
		}
		id := graph.RelationshipID(typ, ids[src], ids[dst])
		if src == dst || seen[id] {
			continue
		}
		seen[id] = true
		rs = append(rs, graph.Relationship{
			ID: id, UserID: alice.UserID, Type: typ, SourceEntityID: ids[src], TargetEntityID: ids[dst],
			CreatedAt: now, LastObservationAt: now,
		})
		if len(rs) == batch {
			flush()
		}
	}
	if len(rs) > 0 {
		flush()
	}
	return ids
}

// BenchmarkRelatedEntities measures retrieve_related_entities (the
// knowledge call behind the tool, snapshots included) at 1, 2 and 3 hops
// at 100,000 entities, from random start entities, on the embedded store,
// PostgreSQL and the split deployment's Neo4j (the two skip without their
// test servers), and reports p50 and p95 latency besides the mean.
//
//	go test -run '^$' -bench RelatedEntities -benchtime 200x ./knowledge/
func BenchmarkRelatedEntities(b *testing.B) {
	for _, be := range contextBenchBackends {
		b.Run("backend="+be.name, func(b *testing.B) {
			st := be.open(b)
			start := time.Now()
			ids := syntheticGraph(b, st.graph)
			if st.settle != nil {
				st.settle(b)
			}
			b.Logf("%s: %d entities and their relationships written in %s", be.name, len(ids), time.Since(start).Round(time.Second))
			benchRelated(b, knowledge.NewService(st.graph, schema.NewRegistry(), knowledge.Options{}), ids)
		})
	}
}

func benchRelated(b *testing.B, svc *knowledge.Service, ids []string) {
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
