package knowledge_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	graphpostgres "github.com/cairnkg/cairn/graph/postgres"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/migrations"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
	vembedded "github.com/cairnkg/cairn/vector/embedded"
	"github.com/cairnkg/cairn/vector/pgvector"
)

// memoryBackend is a store the memory tests run on: the embedded one, and
// PostgreSQL with pgvector (which skips, with pgtest's line, where no test
// server is configured).
type memoryBackend struct {
	name string
	open func(t testing.TB) memoryStores
}

// memoryStores are the stores a memory test needs, on one backend.
type memoryStores struct {
	graph          *graph.Store
	memories       *vector.Store
	control        *controlplane.Store
	contradictions knowledge.ContradictionStore
	// settle, when set, does what a server's background maintenance would
	// have done by the time a bulk-loaded table is queried (PostgreSQL:
	// VACUUM ANALYZE, for the planner's statistics).
	settle func(tb testing.TB)
}

var memoryBackends = []memoryBackend{
	{"Embedded", func(t testing.TB) memoryStores {
		db := sqlitetest.Open(t)
		st := memoryStores{graph: graph.NewStore(embedded.New(db)), memories: vector.NewStore(vembedded.New(db))}
		st.control = controlplane.New(db.Write, migrations.SQLite)
		st.contradictions = st.control.WithReader(db.Read)
		t.Cleanup(func() {
			st.memories.Close()
			st.graph.Close()
		})
		return st
	}},
	{"Postgres", func(t testing.TB) memoryStores {
		pg, err := postgres.Open(t.Context(), pgtest.URL(t), postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		st := memoryStores{graph: graph.NewStore(graphpostgres.New(pg.Pool)), memories: vector.NewStore(pgvector.New(pg.Pool, pgvector.Options{}))}
		st.control = controlplane.New(pg.SQL, migrations.Postgres)
		st.contradictions = st.control.WithReader(pg.SQL)
		st.settle = func(tb testing.TB) {
			if _, err := pg.Pool.Exec(tb.Context(), `VACUUM ANALYZE memories`); err != nil {
				tb.Fatal(err)
			}
		}
		t.Cleanup(func() {
			st.memories.Close()
			st.graph.Close()
			pg.Close()
		})
		return st
	}},
}

// forEachMemoryBackend runs fn once per backend.
func forEachMemoryBackend(t *testing.T, fn func(t *testing.T, b memoryBackend)) {
	for _, b := range memoryBackends {
		t.Run(b.name, func(t *testing.T) { fn(t, b) })
	}
}

// memoryServices returns a service with memories on a fresh store of the
// backend, embedding with e, and a second service on the same store
// embedding with other (nil for none).
func memoryServices(t *testing.T, b memoryBackend, e embed.Embedder, other embed.Embedder) (*knowledge.Service, *knowledge.Service) {
	t.Helper()
	st := b.open(t)
	s := knowledge.NewService(st.graph, schema.NewRegistry(), knowledge.Options{Memories: st.memories, Embedder: e})
	var s2 *knowledge.Service
	if other != nil {
		s2 = knowledge.NewService(st.graph, schema.NewRegistry(), knowledge.Options{Memories: st.memories, Embedder: other})
	}
	return s, s2
}

// claimService returns a service with memories and contradictions on a
// fresh store of the backend, and its clock.
func claimService(t *testing.T, b memoryBackend) (*knowledge.Service, *clock) {
	t.Helper()
	st := b.open(t)
	c := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	return knowledge.NewService(st.graph, schema.NewRegistry(), knowledge.Options{
		Now: c.Now, Memories: st.memories, Profiles: st.control, Contradictions: st.contradictions,
	}), c
}

// failingEmbedder is a provider that is down.
type failingEmbedder struct{}

func (failingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("connection refused")
}
func (failingEmbedder) Dimension() int { return 8 }
func (failingEmbedder) Name() string   { return "test:down" }

// smallEmbedder embeds every text as the same 8-dimensional vector.
type smallEmbedder struct{}

func (smallEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0, 0, 0, 0, 0, 0, 0}
	}
	return out, nil
}
func (smallEmbedder) Dimension() int { return 8 }
func (smallEmbedder) Name() string   { return "test:small" }

func TestSaveAndSearchMemories(t *testing.T) {
	forEachMemoryBackend(t, func(t *testing.T, b memoryBackend) {
		s, _ := memoryServices(t, b, nil, nil)
		ctx := t.Context()
		dentist, err := s.SaveMemory(ctx, alice, knowledge.MemoryRequest{
			Collection: "health", Text: "Dentist appointment on Tuesday at 3pm", Tags: []string{"appointment"},
			Metadata: map[string]any{"where": "downtown"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SaveMemory(ctx, alice, knowledge.MemoryRequest{Collection: "travel", Text: "Prefers aisle seats on trains"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SaveMemory(ctx, bob, knowledge.MemoryRequest{Collection: "health", Text: "Dentist appointment for bob"}); err != nil {
			t.Fatal(err)
		}
		res, err := s.SearchMemories(ctx, alice, knowledge.MemoryQuery{Collections: []string{"health"}, Query: "dentist appointment"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != 1 || res.Hits[0].ID != dentist.ID || res.Hits[0].Metadata["where"] != "downtown" {
			t.Fatalf("search returned %+v, want alice's dentist memory only", res.Hits)
		}
		if !slices.Equal(res.Hits[0].Signals, []vector.Signal{vector.SignalVector, vector.SignalText}) {
			t.Errorf("signals %v, want vector and text", res.Hits[0].Signals)
		}

		// Consent: an unreadable collection is skipped, an unwritable one refuses.
		noHealth := alice
		noHealth.Allowed = func(a knowledge.Action, r string) bool { return r != knowledge.MemoryResource("health") }
		res, err = s.SearchMemories(ctx, noHealth, knowledge.MemoryQuery{Collections: []string{"health", "travel"}, Query: "dentist appointment"})
		if err != nil || len(res.Hits) != 0 {
			t.Errorf("search of an unreadable collection: %+v, %v; want nothing", res.Hits, err)
		}
		_, err = s.SaveMemory(ctx, noHealth, knowledge.MemoryRequest{Collection: "health", Text: "x"})
		var fe *knowledge.AccessError
		if !errors.As(err, &fe) || fe.Resource != "memories/health" || !errors.Is(err, knowledge.ErrForbidden) {
			t.Errorf("save without write access: got %v, want an AccessError", err)
		}
		cols, err := s.MemoryCollections(ctx, noHealth)
		if err != nil || len(cols) != 1 || cols[0].Name != "travel" {
			t.Errorf("collections without read access to health: %+v, %v", cols, err)
		}
	})
}

func TestMemoryLinks(t *testing.T) {
	forEachMemoryBackend(t, func(t *testing.T, b memoryBackend) {
		s, _ := memoryServices(t, b, nil, nil)
		ctx := t.Context()
		acme := store(t, s, alice, map[string]any{"entity_type": "company", "name": "Acme"})
		entityID := acme.Entities[0].EntityID
		linked, err := s.SaveMemory(ctx, alice, knowledge.MemoryRequest{
			Collection: "notes", Text: "Acme renews its contract in March", EntityIDs: []string{entityID}, SourceID: acme.Source.ID,
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SaveMemory(ctx, alice, knowledge.MemoryRequest{Collection: "notes", Text: "Another contract renews in May"}); err != nil {
			t.Fatal(err)
		}
		res, err := s.SearchMemories(ctx, alice, knowledge.MemoryQuery{Collections: []string{"notes"}, Query: "contract renews", EntityID: entityID})
		if err != nil || len(res.Hits) != 1 || res.Hits[0].ID != linked.ID || res.Hits[0].SourceID != acme.Source.ID {
			t.Errorf("search by entity: %+v, %v", res.Hits, err)
		}
		// Another user cannot link to alice's entity or source: they do not
		// exist for bob.
		if _, err := s.SaveMemory(ctx, bob, knowledge.MemoryRequest{Collection: "notes", Text: "x", EntityIDs: []string{entityID}}); !errors.Is(err, knowledge.ErrEntityNotFound) {
			t.Errorf("bob linking alice's entity: got %v, want ErrEntityNotFound", err)
		}
		if _, err := s.SaveMemory(ctx, bob, knowledge.MemoryRequest{Collection: "notes", Text: "x", SourceID: acme.Source.ID}); !errors.Is(err, knowledge.ErrSourceNotFound) {
			t.Errorf("bob linking alice's source: got %v, want ErrSourceNotFound", err)
		}
		// An entity of a type the caller may not read is missing too.
		noCompanies := alice
		noCompanies.Allowed = func(a knowledge.Action, r string) bool { return r != knowledge.EntityResource("company") }
		if _, err := s.SaveMemory(ctx, noCompanies, knowledge.MemoryRequest{Collection: "notes", Text: "x", EntityIDs: []string{entityID}}); !errors.Is(err, knowledge.ErrEntityNotFound) {
			t.Errorf("linking an unreadable entity: got %v, want ErrEntityNotFound", err)
		}
	})
}

// TestMemoryLinksOutsideConsent: a memory the caller may read does not
// reveal what it links to beyond the caller's consent, and a link or filter
// naming something the caller may not read behaves as a missing id.
func TestMemoryLinksOutsideConsent(t *testing.T) {
	forEachMemoryBackend(t, func(t *testing.T, b memoryBackend) {
		s, _ := memoryServices(t, b, nil, nil)
		ctx := t.Context()
		acme := store(t, s, alice, map[string]any{"entity_type": "company", "name": "Acme"})
		ada := store(t, s, alice, map[string]any{"entity_type": "person", "name": "Ada"})
		acmeID, adaID := acme.Entities[0].EntityID, ada.Entities[0].EntityID
		if _, err := s.SaveMemory(ctx, alice, knowledge.MemoryRequest{
			Collection: "notes", Text: "Ada negotiates the Acme contract", EntityIDs: []string{acmeID, adaID}, SourceID: acme.Source.ID,
		}); err != nil {
			t.Fatal(err)
		}
		// Memories and people, but neither companies nor sources.
		limited := alice
		limited.Allowed = func(a knowledge.Action, r string) bool {
			return r == knowledge.MemoryResource("notes") || r == knowledge.EntityResource("person")
		}
		res, err := s.SearchMemories(ctx, limited, knowledge.MemoryQuery{Collections: []string{"notes"}, Query: "Acme contract"})
		if err != nil || len(res.Hits) != 1 {
			t.Fatalf("search: %+v, %v; want the one memory", res.Hits, err)
		}
		if h := res.Hits[0]; !slices.Equal(h.EntityIDs, []string{adaID}) || h.SourceID != "" {
			t.Errorf("hit links entities %v and source %q; want only the person %s and no source", h.EntityIDs, h.SourceID, adaID)
		}
		for name, q := range map[string]knowledge.MemoryQuery{
			"entity filter": {Collections: []string{"notes"}, EntityID: acmeID},
			"source filter": {Collections: []string{"notes"}, SourceID: acme.Source.ID},
		} {
			if res, err := s.SearchMemories(ctx, limited, q); err != nil || len(res.Hits) != 0 {
				t.Errorf("%s on an unreadable id: %+v, %v; want nothing, as for a missing id", name, res.Hits, err)
			}
		}
		if _, err := s.SaveMemory(ctx, limited, knowledge.MemoryRequest{Collection: "notes", Text: "x", SourceID: acme.Source.ID}); !errors.Is(err, knowledge.ErrSourceNotFound) {
			t.Errorf("linking a source without sources read: got %v, want ErrSourceNotFound", err)
		}
	})
}

func TestMemoryErrors(t *testing.T) {
	forEachMemoryBackend(t, func(t *testing.T, b memoryBackend) {
		s, small := memoryServices(t, b, nil, smallEmbedder{})
		ctx := t.Context()
		if _, err := s.SaveMemory(ctx, alice, knowledge.MemoryRequest{Collection: "notes", Text: "first"}); err != nil {
			t.Fatal(err)
		}
		_, err := small.SaveMemory(ctx, alice, knowledge.MemoryRequest{Collection: "notes", Text: "second"})
		if !errors.Is(err, vector.ErrDimensionMismatch) {
			t.Errorf("another embedder's dimension: got %v, want ErrDimensionMismatch", err)
		}
		_, err = small.SearchMemories(ctx, alice, knowledge.MemoryQuery{Collections: []string{"notes"}, Query: "first"})
		if !errors.Is(err, vector.ErrDimensionMismatch) {
			t.Errorf("search with another dimension: got %v, want ErrDimensionMismatch", err)
		}

		down, _ := memoryServices(t, b, failingEmbedder{}, nil)
		_, err = down.SaveMemory(ctx, alice, knowledge.MemoryRequest{Collection: "notes", Text: "x"})
		if !errors.Is(err, knowledge.ErrEmbedderUnavailable) {
			t.Errorf("provider down: got %v, want ErrEmbedderUnavailable", err)
		}

		for _, tc := range []struct {
			name string
			req  knowledge.MemoryRequest
			want error
		}{
			{"no text", knowledge.MemoryRequest{Collection: "notes"}, knowledge.ErrValidation},
			{"no collection", knowledge.MemoryRequest{Text: "x"}, knowledge.ErrValidation},
			{"bad confidence", knowledge.MemoryRequest{Collection: "notes", Text: "x", Confidence: new(2.0)}, knowledge.ErrValidation},
			{"unknown source", knowledge.MemoryRequest{Collection: "notes", Text: "x", SourceID: "src_missing"}, knowledge.ErrSourceNotFound},
			{"unknown entity", knowledge.MemoryRequest{Collection: "notes", Text: "x", EntityIDs: []string{"ent_missing"}}, knowledge.ErrEntityNotFound},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if _, err := s.SaveMemory(ctx, alice, tc.req); !errors.Is(err, tc.want) {
					t.Errorf("got %v, want %v", err, tc.want)
				}
			})
		}
		none := knowledge.NewService(nil, schema.NewRegistry(), knowledge.Options{})
		if _, err := none.SaveMemory(ctx, alice, knowledge.MemoryRequest{Collection: "c", Text: "x"}); !errors.Is(err, knowledge.ErrMemoriesUnavailable) {
			t.Errorf("no memory store: got %v", err)
		}
	})
}

func TestInsights(t *testing.T) {
	forEachMemoryBackend(t, func(t *testing.T, b memoryBackend) {
		s, _ := memoryServices(t, b, nil, nil)
		ctx := t.Context()
		src := store(t, s, alice, map[string]any{"entity_type": "company", "name": "Acme"})
		in, err := s.StoreInsight(ctx, alice, knowledge.InsightRequest{
			FileID: src.Source.ID, Title: "Indemnity clause", Content: "The contract caps indemnity at one million",
			SourceLLM: "model-a", Tags: []string{"contract", "risk"}, Citations: []string{"§4.2"}, Confidence: new(0.9),
			PageNumber: new(12.0), CaseID: "case-7", Entities: map[string]any{"parties": []any{"Acme"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.StoreInsight(ctx, alice, knowledge.InsightRequest{
			FileID: src.Source.ID, Title: "Payment terms", Content: "Invoices are due in thirty days", SourceLLM: "model-b", Confidence: new(0.4),
		}); err != nil {
			t.Fatal(err)
		}
		got, res, err := s.QueryInsights(ctx, alice, knowledge.InsightQuery{Keywords: "indemnity", SourceLLM: "model-a", Tags: []string{"risk"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != in.ID || got[0].CaseID != "case-7" || *got[0].PageNumber != 12 ||
			!slices.Equal(got[0].Citations, []string{"§4.2"}) || got[0].FileID != src.Source.ID || res.HasMore {
			t.Errorf("query by keyword: %+v", got)
		}
		got, res, err = s.QueryInsights(ctx, alice, knowledge.InsightQuery{MinConfidence: new(0.5)})
		if err != nil || len(got) != 1 || res.Total != 1 {
			t.Errorf("query by confidence: %+v (total %d), %v", got, res.Total, err)
		}
		got, _, err = s.QueryInsights(ctx, alice, knowledge.InsightQuery{Sort: vector.SortConfidence, Ascending: true})
		if err != nil || len(got) != 2 || got[0].Title != "Payment terms" {
			t.Errorf("sorted by confidence ascending: %+v, %v", got, err)
		}
		if _, err := s.StoreInsight(ctx, alice, knowledge.InsightRequest{FileID: "src_missing", Title: "t", Content: "c", SourceLLM: "m"}); !errors.Is(err, knowledge.ErrSourceNotFound) {
			t.Errorf("unknown file: got %v", err)
		}
	})
}

func TestReembed(t *testing.T) {
	forEachMemoryBackend(t, func(t *testing.T, b memoryBackend) {
		s, small := memoryServices(t, b, nil, smallEmbedder{})
		ctx := t.Context()
		m, err := s.SaveMemory(ctx, alice, knowledge.MemoryRequest{Collection: "notes", Title: "Dentist", Text: "Tuesday at 3pm"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SaveMemory(ctx, bob, knowledge.MemoryRequest{Collection: "other", Text: "bob"}); err != nil {
			t.Fatal(err)
		}
		done, err := small.Reembed(ctx, "notes")
		if err != nil || len(done) != 1 || done[0].Count != 1 || done[0].UserID != alice.UserID || done[0].From.Dimension != embed.LocalDimension {
			t.Fatalf("Reembed = %+v, %v", done, err)
		}
		res, err := small.SearchMemories(ctx, alice, knowledge.MemoryQuery{Collections: []string{"notes"}, Query: "anything"})
		if err != nil || len(res.Hits) != 1 || res.Hits[0].ID != m.ID {
			t.Errorf("search with the new embedder: %+v, %v", res.Hits, err)
		}
		if _, err := s.SearchMemories(ctx, alice, knowledge.MemoryQuery{Collections: []string{"notes"}, Query: "dentist"}); !errors.Is(err, vector.ErrDimensionMismatch) {
			t.Errorf("search with the old embedder: got %v, want ErrDimensionMismatch", err)
		}
		// Everything else, and a second run, which has nothing left to do.
		done, err = small.Reembed(ctx, "")
		if err != nil || len(done) != 2 || done[0].Count+done[1].Count != 1 {
			t.Errorf("Reembed of everything = %+v, %v; want bob's one memory rebuilt", done, err)
		}
	})
}
