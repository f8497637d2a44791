package knowledge_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/migrations"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
	vembedded "github.com/cairnkg/cairn/vector/embedded"
)

// BenchmarkUserContext measures get_user_context (the knowledge call behind
// the tool) on the embedded store with 10,000 entities and a memory index of
// 10,000 memories, at the default budget, without and with a topic, and
// reports p50 and p95 latency besides the mean. With a topic, it runs once
// with every entity's embedding stored (as the outbox worker keeps them)
// and once without (every candidate embedded on the fly).
//
//	go test -run '^$' -bench UserContext -benchtime 20x ./knowledge/
func BenchmarkUserContext(b *testing.B) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	env := newContextEnv(b, bulkMemories(10_000, now))
	bulkEntities(b, env.graph, alice.UserID, 10_000, now)
	if _, _, err := env.svc.UpdateProfile(b.Context(), alice, map[string]any{"name": "Alice", "city": "Lyon"}, "bench"); err != nil {
		b.Fatal(err)
	}
	// Services like env.svc, with an embedder, keeping entity embeddings
	// or not. "openai" is the OpenAI-compatible client against a loopback
	// server that answers with the local embedder's vectors: it measures
	// what the HTTP and JSON round trips of a provider cost, without the
	// network and the model, so it understates what a real provider costs.
	control := controlplane.New(env.db.Write, migrations.SQLite)
	service := func(e embed.Embedder, keep bool) *knowledge.Service {
		opts := knowledge.Options{
			Now: env.clock.Now, Profiles: control, Contradictions: control.WithReader(env.db.Read),
			MemoryIndex: bulkMemories(10_000, now), Embedder: e,
		}
		if keep {
			opts.EntityEmbeddings = vector.NewEntityStore(vembedded.New(env.db))
		}
		return knowledge.NewService(env.graph, knowledge.NewRegistry(), opts)
	}
	ids := make([]string, 10_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("ent_bulk%06d", i)
	}
	backfill := func(s *knowledge.Service) {
		if err := env.graph.Update(b.Context(), func(tx *graph.Tx) error { return tx.EnqueueOutbox(b.Context(), alice.UserID, ids, now) }); err != nil {
			b.Fatal(err)
		}
		if st, err := s.DrainEntityOutbox(b.Context()); err != nil || st.Embedded != len(ids) {
			b.Fatalf("drain: %+v, %v", st, err)
		}
	}
	local := embed.NewLocal()
	openai := loopbackOpenAI(b, local)
	localStored, openaiStored := service(local, true), service(openai, true)
	backfill(localStored)
	backfill(openaiStored)
	for _, bc := range []struct {
		topic, embedder, embeddings string
		svc                         *knowledge.Service
	}{
		{"", "local", "stored", localStored},
		{"company detail 42", "local", "stored", localStored},
		{"company detail 42", "local", "none", service(local, false)},
		{"company detail 42", "openai", "stored", openaiStored},
		{"company detail 42", "openai", "none", service(openai, false)},
	} {
		b.Run(fmt.Sprintf("topic=%q/embedder=%s/embeddings=%s", bc.topic, bc.embedder, bc.embeddings), func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				out, err := bc.svc.UserContext(b.Context(), alice, knowledge.ContextRequest{Topic: bc.topic})
				lat = append(lat, time.Since(start))
				if err != nil || out.TokensUsed > out.BudgetTokens {
					b.Fatalf("%v (tokens %d)", err, out.TokensUsed)
				}
			}
			slices.Sort(lat)
			pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.95), "p95-ms")
		})
	}
}

// loopbackOpenAI is the OpenAI-compatible embedder against an httptest
// server that embeds with e.
func loopbackOpenAI(b *testing.B, e embed.Embedder) embed.Embedder {
	b.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		vecs, err := e.Embed(r.Context(), req.Input)
		if err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var resp struct {
			Data []item `json:"data"`
		}
		for i, v := range vecs {
			resp.Data = append(resp.Data, item{Index: i, Embedding: v})
		}
		_ = json.NewEncoder(w).Encode(resp)
	}))
	b.Cleanup(srv.Close)
	o, err := embed.NewOpenAI(embed.OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "loopback", Dimensions: e.Dimension()})
	if err != nil {
		b.Fatal(err)
	}
	return o
}
