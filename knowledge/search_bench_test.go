package knowledge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	dbpostgres "github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/graph"
	graphpostgres "github.com/cairnkg/cairn/graph/postgres"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
	vembedded "github.com/cairnkg/cairn/vector/embedded"
	"github.com/cairnkg/cairn/vector/pgvector"
)

// searchCorpus writes n entities named "Quill 000000" … like the side-by-side
// benchmark's, with an email, a tax id and a few words each, through the
// graph API (the store pipeline would take minutes), and enqueues them for
// their embeddings.
func searchCorpus(tb testing.TB, g *graph.Store, user string, n int, now time.Time) {
	tb.Helper()
	types := []string{"person", "company", "task"}
	ids := make([]string, 0, n)
	const batch = 2000
	for start := 0; start < n; start += batch {
		err := g.Update(context.Background(), func(tx *graph.Tx) error {
			for i := start; i < min(start+batch, n); i++ {
				name := fmt.Sprintf("Quill %06d", i)
				at := now.Add(-time.Duration(i%365) * time.Hour)
				e := graph.Entity{
					ID: fmt.Sprintf("ent_q%06d", i), UserID: user, Type: types[i%len(types)], CanonicalName: name, SchemaVersion: "1.0",
					Snapshot: map[string]any{
						"name": name, "email": fmt.Sprintf("quill.%06d@example.com", i), "tax_id": fmt.Sprintf("FR-%03d-%04d", i%997, i),
						"notes": fmt.Sprintf("observation %d of project %d; status open", i, i%50), "score": json.Number(fmt.Sprint(i % 100)),
					},
					ObservationCount: 3, LastObservationAt: at, CreatedAt: at, ComputedAt: at,
				}
				if err := tx.PutEntity(context.Background(), e); err != nil {
					return err
				}
				ids = append(ids, e.ID)
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	if err := g.Update(context.Background(), func(tx *graph.Tx) error {
		return tx.EnqueueOutbox(context.Background(), user, ids, now)
	}); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkSearchEntities measures a keyword lookup ("quill 004216", one
// hit) among 10,000 entities, on both backends, by the knowledge call
// behind retrieve_entities: text alone (without, then with entity
// embeddings kept), text fused with meaning (the local embedder, every
// entity's embedding stored), and,
// for comparison, query_graph's pattern contains, which was the only text
// lookup before. It reports p50 and p95 latency besides the mean.
//
//	go test -run '^$' -bench SearchEntities -benchtime 200x ./knowledge/
//
// PostgreSQL runs when CAIRN_TEST_DATABASE_URL is set.
func BenchmarkSearchEntities(b *testing.B) {
	const n = 10_000
	for _, be := range []struct {
		name string
		open func(b *testing.B) (*graph.Store, *vector.EntityStore)
	}{
		{"embedded", func(b *testing.B) (*graph.Store, *vector.EntityStore) {
			db, g := openEmbedded(b)
			return g, vector.NewEntityStore(vembedded.New(db))
		}},
		{"postgres", func(b *testing.B) (*graph.Store, *vector.EntityStore) {
			db, err := dbpostgres.Open(b.Context(), pgtest.URL(b), dbpostgres.Options{})
			if err != nil {
				b.Fatal(err)
			}
			g := graph.NewStore(graphpostgres.New(db.Pool))
			b.Cleanup(func() {
				g.Close()
				db.Close()
			})
			return g, vector.NewEntityStore(pgvector.New(db.Pool, pgvector.Options{}))
		}},
	} {
		b.Run("backend="+be.name, func(b *testing.B) {
			g, vecs := be.open(b)
			now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
			searchCorpus(b, g, alice.UserID, n, now)
			local := embed.NewLocal()
			plain := knowledge.NewService(g, schema.NewRegistry(), knowledge.Options{Now: func() time.Time { return now }})
			fused := knowledge.NewService(g, schema.NewRegistry(), knowledge.Options{
				Now: func() time.Time { return now }, Embedder: local, EntityEmbeddings: vecs,
			})
			if st, err := fused.DrainEntityOutbox(b.Context()); err != nil || st.Embedded != n {
				b.Fatalf("drain: %+v, %v", st, err)
			}
			q := knowledge.EntitySearchQuery{Text: "quill 004216", Page: graph.Page{Limit: 10}}
			for _, bc := range []struct {
				name string
				run  func() (string, error)
			}{
				{"search/text", func() (string, error) {
					hits, _, err := plain.SearchEntities(b.Context(), alice, q)
					return firstHit(hits), err
				}},
				{"search/text-with-embeddings", func() (string, error) {
					hits, _, err := fused.SearchEntities(b.Context(), alice, q)
					return firstHit(hits), err
				}},
				{"search/text+meaning", func() (string, error) {
					q := q
					q.Meaning = knowledge.MeaningAlways
					hits, _, err := fused.SearchEntities(b.Context(), alice, q)
					return firstHit(hits), err
				}},
				{"query_graph-contains", func() (string, error) {
					m, _, err := plain.MatchPattern(b.Context(), alice, knowledge.Pattern{Field: "name", Contains: "quill 004216", Limit: 10})
					if len(m) == 0 {
						return "", err
					}
					return m[0].Entity.ID, err
				}},
			} {
				b.Run(bc.name, func(b *testing.B) {
					var lat []time.Duration
					for b.Loop() {
						start := time.Now()
						id, err := bc.run()
						lat = append(lat, time.Since(start))
						if err != nil || id != "ent_q004216" {
							b.Fatalf("first hit %q, %v; want ent_q004216", id, err)
						}
					}
					slices.Sort(lat)
					pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
					b.ReportMetric(pct(0.50), "p50-ms")
					b.ReportMetric(pct(0.95), "p95-ms")
				})
			}
		})
	}
}

func firstHit(hits []knowledge.EntitySearchHit) string {
	if len(hits) == 0 {
		return ""
	}
	return hits[0].Entity.ID
}
