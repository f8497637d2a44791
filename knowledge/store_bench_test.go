package knowledge_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/cairnkg/cairn/controlplane"
	dbpostgres "github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/graph"
	graphpostgres "github.com/cairnkg/cairn/graph/postgres"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/migrations"
	"github.com/cairnkg/cairn/vector"
	vembedded "github.com/cairnkg/cairn/vector/embedded"
	"github.com/cairnkg/cairn/vector/pgvector"
)

// storeBatchSize is how many entities one op of BenchmarkStoreBatch stores.
const storeBatchSize = 100

// consented is alice with a consent decision for every read and write, as
// the MCP layer calls the service (a caller without Allowed skips the
// consent filtering that every tool call pays for).
var consented = knowledge.Caller{UserID: alice.UserID, AgentID: alice.AgentID, Allowed: func(knowledge.Action, string) bool { return true }}

// BenchmarkStoreBatch measures Service.Store of a batch of 100 people
// with three fields each (name, email, company), wired as cmd/cairn wires
// it (contradiction store, entity embeddings through the outbox, whose
// worker does not run), by a caller whose consent is asked as the MCP
// layer asks it, on a store that already holds 1,000, 10,000 or 100,000
// such entities, on the embedded store and, when CAIRN_TEST_DATABASE_URL
// is set, on PostgreSQL. "new" stores 100 people the store does not know
// (a bulk load); "known" stores 100 it knows, with another company (their
// snapshots change, each raises a contradiction, and the answer lists
// their relationships). Each op of "new" adds 100 entities to the store,
// so keep -benchtime to a few dozen ops for the sizes to stay what their
// names say:
//
//	go test -run '^$' -bench StoreBatch -benchtime 20x ./knowledge/
//
// It reports the mean, p50 and p95 latency of a batch, entities/s, and
// the CPU time of the process per batch (PostgreSQL's own is not in it).
func BenchmarkStoreBatch(b *testing.B) {
	for _, backend := range []string{"embedded", "postgres"} {
		for _, existing := range []int{1_000, 10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/existing=%d", backend, existing), func(b *testing.B) {
				svc := openStoreBench(b, backend)
				next := 0
				for next < existing {
					n := min(knowledge.MaxEntitiesPerStore, existing-next)
					if _, err := svc.Store(b.Context(), consented, knowledge.StoreRequest{Entities: benchPeople(next, n)}); err != nil {
						b.Fatal(err)
					}
					next += n
				}
				b.Run("new", func(b *testing.B) {
					measureStores(b, svc, func(int) ([]map[string]any, int) {
						batch := benchPeople(next, storeBatchSize)
						next += storeBatchSize
						return batch, storeBatchSize
					})
				})
				b.Run("known", func(b *testing.B) {
					rng := rand.New(rand.NewPCG(uint64(existing), 3))
					measureStores(b, svc, func(op int) ([]map[string]any, int) {
						batch := make([]map[string]any, storeBatchSize)
						for i := range batch {
							batch[i] = benchPeople(rng.IntN(existing), 1)[0]
							batch[i]["company"] = fmt.Sprintf("company %d, op %d", i, op)
						}
						return batch, 0
					})
				})
			})
		}
	}
}

// measureStores stores the batch next gives at each op (with the number
// of entities it must create) and reports the latency and entities/s.
func measureStores(b *testing.B, svc *knowledge.Service, next func(op int) ([]map[string]any, int)) {
	var lat []time.Duration
	cpu0 := processCPU(b)
	for b.Loop() {
		batch, creates := next(len(lat))
		start := time.Now()
		res, err := svc.Store(b.Context(), consented, knowledge.StoreRequest{Entities: batch})
		lat = append(lat, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		if res.EntitiesCreated != creates {
			b.Fatalf("created %d entities, want %d", res.EntitiesCreated, creates)
		}
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
	}
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(float64(storeBatchSize*len(lat))/sum.Seconds(), "entities/s")
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/1000/float64(len(lat)), "cpu-ms/op")
}

// processCPU is the CPU time the process has used, user and system: a
// measure that other load on the machine disturbs less than latency.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// openStoreBench opens an empty store of the backend with a service wired
// like cmd/cairn's.
func openStoreBench(b *testing.B, backend string) *knowledge.Service {
	b.Helper()
	if backend == "embedded" {
		db, g := openEmbedded(b)
		control := controlplane.New(db.Write, migrations.SQLite)
		return knowledge.NewService(g, schema.NewRegistry(), knowledge.Options{
			Profiles: control, Contradictions: control.WithReader(db.Read),
			EntityEmbeddings: vector.NewEntityStore(vembedded.New(db)),
		})
	}
	pg, err := dbpostgres.Open(b.Context(), pgtest.URL(b), dbpostgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	g := graph.NewStore(graphpostgres.New(pg.Pool))
	b.Cleanup(func() {
		g.Close()
		pg.Close()
	})
	control := controlplane.New(pg.SQL, migrations.Postgres)
	return knowledge.NewService(g, schema.NewRegistry(), knowledge.Options{
		Profiles: control, Contradictions: control.WithReader(pg.SQL),
		EntityEmbeddings: vector.NewEntityStore(pgvector.New(pg.Pool, pgvector.Options{})),
	})
}

// benchPeople returns n people numbered from first, each with three fields.
func benchPeople(first, n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		k := first + i
		out[i] = map[string]any{
			"entity_type": "person",
			"name":        fmt.Sprintf("quill %06d", k),
			"email":       fmt.Sprintf("quill%06d@example.com", k),
			"company":     fmt.Sprintf("company %d", k%500),
		}
	}
	return out
}
