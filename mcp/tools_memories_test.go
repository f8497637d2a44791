package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	graphneo4j "github.com/cairnkg/cairn/graph/neo4j"
	"github.com/cairnkg/cairn/graph/neo4j/neo4jtest"
	graphpostgres "github.com/cairnkg/cairn/graph/postgres"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/mcp"
	"github.com/cairnkg/cairn/migrations"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
	vembedded "github.com/cairnkg/cairn/vector/embedded"
	"github.com/cairnkg/cairn/vector/pgvector"
)

// storeBackend is a store the tests run on: the embedded one, PostgreSQL
// with pgvector (which skips, with pgtest's line, where no test server is
// configured), and Neo4j with PostgreSQL (the same, with neo4jtest's).
type storeBackend struct {
	name string
	open func(t testing.TB) backendStores
}

// backendStores are the stores of one backend, as cmd/cairn wires them.
type backendStores struct {
	graph          *graph.Store
	memories       *vector.Store
	control        *controlplane.Store
	contradictions knowledge.ContradictionStore
	// sqlite is the embedded store, pg the PostgreSQL database; one of
	// them is set (the erasure tests search their bytes and tables).
	sqlite *sqlite.DB
	pg     *postgres.DB
}

var (
	embeddedBackend = storeBackend{"Embedded", func(t testing.TB) backendStores {
		db := sqlitetest.Open(t)
		st := backendStores{graph: graph.NewStore(embedded.New(db)), memories: vector.NewStore(vembedded.New(db)), sqlite: db}
		st.control = controlplane.New(db.Write, migrations.SQLite)
		st.contradictions = st.control.WithReader(db.Read)
		t.Cleanup(func() {
			st.memories.Close()
			st.graph.Close()
		})
		return st
	}}
	postgresBackend = storeBackend{"Postgres", func(t testing.TB) backendStores {
		return onPostgres(t, func(pg *postgres.DB) graph.Driver { return graphpostgres.New(pg.Pool) })
	}}
	// neo4jBackend is the split deployment: the graph in Neo4j (a server
	// neo4jtest hands out, emptied; skips without one, as pgtest does),
	// memories and the control plane in PostgreSQL.
	neo4jBackend = storeBackend{"Neo4j", func(t testing.TB) backendStores {
		srv := neo4jtest.Take(t)
		return onPostgres(t, func(*postgres.DB) graph.Driver { return graphneo4j.New(srv.Driver, srv.Config.Database) })
	}}
	storeBackends = []storeBackend{embeddedBackend, postgresBackend, neo4jBackend}
)

// onPostgres wires memories and the control plane on a fresh PostgreSQL
// database, and the graph on the driver graphOn returns.
func onPostgres(t testing.TB, graphOn func(pg *postgres.DB) graph.Driver) backendStores {
	pg, err := postgres.Open(t.Context(), pgtest.URL(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := backendStores{graph: graph.NewStore(graphOn(pg)), memories: vector.NewStore(pgvector.New(pg.Pool, pgvector.Options{})), pg: pg}
	st.control = controlplane.New(pg.SQL, migrations.Postgres)
	st.contradictions = st.control.WithReader(pg.SQL)
	t.Cleanup(func() {
		st.memories.Close()
		st.graph.Close()
		pg.Close()
	})
	return st
}

// forEachBackend runs fn once per backend.
func forEachBackend(t *testing.T, fn func(t *testing.T, b storeBackend)) {
	for _, b := range storeBackends {
		t.Run(b.name, func(t *testing.T) { fn(t, b) })
	}
}

// memoryServers returns servers with memories on one fresh store of the
// backend, one per embedder, all acting for the same principal.
func memoryServers(t *testing.T, b storeBackend, embedders ...embed.Embedder) ([]*mcp.Server, consent.Principal) {
	t.Helper()
	st := b.open(t)
	var out []*mcp.Server
	for _, e := range embedders {
		k := knowledge.NewService(st.graph, schema.NewRegistry(), knowledge.Options{Memories: st.memories, Embedder: e})
		srv, err := mcp.NewServer(mcp.Deps{Knowledge: k}, mcp.Options{Version: "test", Toolsets: mcp.AllToolsets})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, srv)
	}
	return out, consent.Principal{UserID: "user-1", AgentName: "test"}
}

func invoke(t *testing.T, s *mcp.Server, p consent.Principal, tool string, args any) (map[string]any, *mcp.Error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	out, merr := s.Invoke(t.Context(), p, tool, raw)
	if merr != nil {
		return nil, merr
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m, nil
}

func mustInvoke(t *testing.T, s *mcp.Server, p consent.Principal, tool string, args any) map[string]any {
	t.Helper()
	m, merr := invoke(t, s, p, tool, args)
	if merr != nil {
		t.Fatalf("%s: %v", tool, merr)
	}
	return m
}

type downEmbedder struct{}

func (downEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("503 from provider")
}
func (downEmbedder) Dimension() int { return 4 }
func (downEmbedder) Name() string   { return "test:down" }

type tinyEmbedder struct{}

func (tinyEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0, 0, 0}
	}
	return out, nil
}
func (tinyEmbedder) Dimension() int { return 4 }
func (tinyEmbedder) Name() string   { return "test:tiny" }

func TestMemoryTools(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storeBackend) {
		srvs, p := memoryServers(t, b, embed.NewLocal(), tinyEmbedder{}, downEmbedder{})
		local, tiny, down := srvs[0], srvs[1], srvs[2]

		saved := mustInvoke(t, local, p, "save_memory", map[string]any{
			"collection": "health", "text": "Dentist appointment on Tuesday at 3pm", "tags": []string{"appointment"},
			"metadata": map[string]any{"where": "downtown"}, "confidence": 0.9,
		})
		id, _ := saved["id"].(string)
		if id == "" || saved["collection"] != "health" || saved["created_at"] == "" {
			t.Fatalf("save_memory returned %v", saved)
		}
		mustInvoke(t, local, p, "save_memory", map[string]any{"collection": "travel", "text": "Prefers aisle seats on trains"})

		res := mustInvoke(t, local, p, "search_memory", map[string]any{"collection": "health", "query": "dentist"})
		results, _ := res["results"].([]any)
		if len(results) != 1 {
			t.Fatalf("search_memory returned %v", res)
		}
		hit := results[0].(map[string]any)
		if hit["id"] != id || hit["text"] != "Dentist appointment on Tuesday at 3pm" || hit["score"].(float64) <= 0 {
			t.Errorf("hit = %v", hit)
		}
		if matched, _ := hit["matched"].([]any); len(matched) == 0 || matched[len(matched)-1] != "text" {
			t.Errorf("matched = %v, want the text signal", hit["matched"])
		}
		if res["has_more"] != false || res["limit"] != 10.0 {
			t.Errorf("paging = %v", res)
		}
		// Filters: a tag nobody has, then a date range that ends before it.
		res = mustInvoke(t, local, p, "search_memory", map[string]any{"collection": "health", "query": "dentist", "tags": []string{"nope"}})
		if r, _ := res["results"].([]any); len(r) != 0 {
			t.Errorf("tag filter let through %v", r)
		}
		res = mustInvoke(t, local, p, "search_memory", map[string]any{
			"collection": "health", "query": "dentist", "date_range": map[string]any{"end": "2001-01-01T00:00:00Z"},
		})
		if r, _ := res["results"].([]any); len(r) != 0 {
			t.Errorf("date filter let through %v", r)
		}
		if _, merr := invoke(t, local, p, "search_memory", map[string]any{
			"collection": "health", "query": "x", "date_range": map[string]any{"start": "yesterday"},
		}); merr == nil || merr.Body.Code != mcp.CodeValidation {
			t.Errorf("a bad date: got %v, want VALIDATION_ERROR", merr)
		}

		// Another embedder on the same collection is a clear conflict.
		_, merr := invoke(t, tiny, p, "save_memory", map[string]any{"collection": "health", "text": "x"})
		if merr == nil || merr.Body.Code != mcp.CodeDimensionMismatch || merr.Status != http.StatusConflict ||
			merr.Body.Details["recorded_dimension"] != 384 || merr.Body.Details["given_dimension"] != 4 {
			t.Errorf("4 dimensions into a 384-dimensional collection: got %+v", merr)
		}
		_, merr = invoke(t, tiny, p, "search_memory", map[string]any{"collection": "health", "query": "dentist"})
		if merr == nil || merr.Body.Code != mcp.CodeDimensionMismatch {
			t.Errorf("searching with 4 dimensions: got %+v", merr)
		}
		// A provider that is down.
		_, merr = invoke(t, down, p, "save_memory", map[string]any{"collection": "other", "text": "x"})
		if merr == nil || merr.Body.Code != mcp.CodeServiceUnavailable || merr.Status != http.StatusServiceUnavailable {
			t.Errorf("provider down: got %+v", merr)
		}
		// Without a memory store.
		bare, err := mcp.NewServer(mcp.Deps{Knowledge: knowledge.NewService(nil, schema.NewRegistry(), knowledge.Options{})}, mcp.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, merr := invoke(t, bare, p, "save_memory", map[string]any{"collection": "c", "text": "x"}); merr == nil || merr.Body.Code != mcp.CodeServiceUnavailable {
			t.Errorf("no memory store: got %+v", merr)
		}
	})
}

func TestInsightTools(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storeBackend) {
		srvs, p := memoryServers(t, b, embed.NewLocal())
		s := srvs[0]
		stored := mustInvoke(t, s, p, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "company", "name": "Acme"}}})
		fileID, _ := stored["source_id"].(string)
		if fileID == "" {
			t.Fatalf("store returned no source_id: %v", stored)
		}
		out := mustInvoke(t, s, p, "store_insight", map[string]any{"fileId": fileID, "insight": map[string]any{
			"title": "Indemnity cap", "content": "The contract caps indemnity at one million", "sourceLLM": "model-a",
			"tags": []string{"risk"}, "confidence": 0.8, "citations": []string{"§4.2"}, "caseId": "case-7", "pageNumber": 3,
			"entities": map[string]any{"parties": []string{"Acme"}},
		}})
		if out["success"] != true || out["insightId"] == "" || out["message"] != "Insight stored successfully" {
			t.Fatalf("store_insight returned %v", out)
		}
		mustInvoke(t, s, p, "store_insight", map[string]any{"fileId": fileID, "insight": map[string]any{
			"title": "Payment terms", "content": "Invoices are due in thirty days", "sourceLLM": "model-b", "confidence": 0.3,
		}})
		if _, merr := invoke(t, s, p, "store_insight", map[string]any{"fileId": "src_nope", "insight": map[string]any{
			"title": "t", "content": "c", "sourceLLM": "m",
		}}); merr == nil || merr.Body.Code != mcp.CodeSourceNotFound {
			t.Errorf("unknown file: got %+v", merr)
		}

		// Through a real client, so that the output is checked against its schema.
		cs := connectServer(t, s, p)
		res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "query_insights", Arguments: map[string]any{
			"filters":    map[string]any{"keywords": "indemnity", "tags": []string{"risk"}, "caseId": "case-7", "minConfidence": 0.5},
			"pagination": map[string]any{"limit": 5},
		}})
		if err != nil || res.IsError {
			t.Fatalf("query_insights: %v %+v", err, res)
		}
		var q struct {
			Insights []struct {
				InsightID, FileID, Title, SourceLLM, CaseID string
				PageNumber                                  float64
				Citations                                   []string
				Matched                                     []string
			}
			Total      int
			Pagination struct {
				Limit   int
				HasMore bool
			}
		}
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &q); err != nil {
			t.Fatal(err)
		}
		if len(q.Insights) != 1 || q.Insights[0].InsightID != out["insightId"] || q.Insights[0].FileID != fileID ||
			q.Insights[0].SourceLLM != "model-a" || q.Insights[0].PageNumber != 3 || q.Pagination.Limit != 5 || q.Pagination.HasMore {
			t.Errorf("query_insights = %s", raw)
		}
		list := mustInvoke(t, s, p, "query_insights", map[string]any{"sort": map[string]any{"field": "confidence", "order": "asc"}})
		insights, _ := list["insights"].([]any)
		if len(insights) != 2 || insights[0].(map[string]any)["title"] != "Payment terms" || list["total"] != 2.0 {
			t.Errorf("listing by confidence ascending = %v", list)
		}
	})
}

// connectServer returns a client session on s over in-memory transports.
func connectServer(t testing.TB, s *mcp.Server, p consent.Principal) *mcpsdk.ClientSession {
	t.Helper()
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), serveInMemory(t, s, p), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// serveInMemory serves s to p over in-memory transports and returns the
// client's end.
func serveInMemory(t testing.TB, s *mcp.Server, p consent.Principal) mcpsdk.Transport {
	t.Helper()
	ct, st := mcpsdk.NewInMemoryTransports()
	ss, err := s.MCPServer(mcp.FixedPrincipal(p)).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	return ct
}
