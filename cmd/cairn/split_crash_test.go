package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/graph/neo4j/neo4jtest"
	"github.com/cairnkg/cairn/knowledge"
)

// TestSplitCrashBothStores kills `cairn serve` on the split deployment (the
// graph in Neo4j, memories and entity embeddings in PostgreSQL) with
// SIGKILL, twice, and checks that nothing it acknowledged is lost in either
// store and that the outbox repairs what the graph committed without its
// embedding.
//
// The first kill comes under load (entity and memory writers, the
// embedding worker draining the outbox beside them), at a random moment.
// The second is aimed at the window between the stores: the embedder holds
// the worker's request for a batch of entities that Neo4j has committed,
// and the process is killed while it waits, so that the entries stay in
// the outbox under the dead process's lease and PostgreSQL has no vector
// for them. After each restart every acknowledged entity and memory is
// read back through the tools; after the last, once the restarted worker
// has drained the outbox (the dead process's leases must run out first:
// knowledge.EntityEmbedLease, which the test fast-forwards), every
// acknowledged entity has its vector in
// PostgreSQL and no outbox entry is left.
func TestSplitCrashBothStores(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it under load")
	}
	// Most of its time is spent waiting for the killed process's leases
	// to run out: the other tests run meanwhile.
	t.Parallel()
	neo4jtest.SkipUnlessConfigured(t)
	pgURL := pgtest.URL(t)
	srv := neo4jtest.Take(t)
	emb := newHoldingEmbeddings(t)
	env := append([]string{"CAIRN_DATABASE_URL=" + pgURL, "CAIRN_RATE_LIMIT=0", "CAIRN_RATE_LIMIT_STORE=0"}, srv.Env()...)
	env = append(env, emb.env()...)
	// The split deployment keeps nothing in the data directory.
	dataDir := filepath.Join(t.TempDir(), "data")
	pg, err := pgx.Connect(t.Context(), pgURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close(context.WithoutCancel(t.Context())) })
	client := &http.Client{Timeout: 10 * time.Second}

	// Kill -9 under load.
	url, kill := startServeProcess(t, dataDir, env...)
	acked := splitLoadUntilKilled(t, restBase(url), kill)
	if len(acked.entities) == 0 || len(acked.memories) == 0 {
		t.Fatalf("%d entities and %d memories acknowledged before the kill; the test proves nothing", len(acked.entities), len(acked.memories))
	}
	left := outboxEntries(t, srv)
	unembedded := missingEmbeddings(t, pg, emb.name(), slices.Collect(maps.Keys(acked.entities)))
	t.Logf("under load: %d entities and %d memories acknowledged; after kill -9 the outbox holds %d entries (%d leased by the dead process), %d acknowledged entities have no vector",
		len(acked.entities), len(acked.memories), len(left), countLeased(left, time.Now()), len(unembedded))

	url, kill = startServeProcess(t, dataDir, env...)
	checkAcknowledged(t, client, restBase(url), acked)

	// The window between the stores. The restarted worker first drains
	// what it may claim (the dead process's leased entries excepted), so
	// that the batch it claims next is the window's entities alone.
	waitFor(t, time.Minute, "the restarted worker drains the outbox's free entries", func() (bool, string) {
		free := 0
		for _, e := range outboxEntries(t, srv) {
			if !e.leased(time.Now()) {
				free++
			}
		}
		return free == 0, fmt.Sprintf("%d free entries", free)
	})
	const windowMarker = "Window Co"
	emb.holdTextsWith(windowMarker)
	var window []any
	for i := range 8 {
		window = append(window, map[string]any{"entity_type": "company", "name": fmt.Sprintf("%s %d", windowMarker, i),
			"industry": "the window between Neo4j and PostgreSQL", "address": fmt.Sprintf("%d Crash Road", i)})
	}
	res, err := callRESTResult(t.Context(), client, restBase(url), "store", map[string]any{"entities": window})
	if err != nil {
		t.Fatalf("store the window's entities: %v", err)
	}
	windowIDs := map[string]string{}
	for i, id := range storedIDs(res) {
		windowIDs[id] = window[i].(map[string]any)["name"].(string)
	}
	var held []string
	select {
	case held = <-emb.held:
	case <-time.After(time.Minute):
		t.Fatal("the worker did not ask the embedder for the window's entities within a minute")
	}
	kill()
	emb.holdTextsWith("")

	entries := map[string]outboxEntry{}
	for _, e := range outboxEntries(t, srv) {
		entries[e.entityID] = e
	}
	inFlight := 0
	for id, name := range windowIDs {
		e, ok := entries[id]
		if !ok {
			t.Errorf("window entity %s (%s): no outbox entry after the kill, but no vector was written", id, name)
			continue
		}
		if !slices.ContainsFunc(held, func(text string) bool { return strings.HasPrefix(text, "company: "+name+";") }) {
			continue
		}
		inFlight++
		if !e.leased(time.Now()) {
			t.Errorf("window entity %s (%s) was in the killed request, but its outbox entry is not leased: %+v", id, name, e)
		}
	}
	if inFlight == 0 {
		t.Errorf("the held request %q names none of the window's entities", held)
	}
	ids := slices.Collect(maps.Keys(windowIDs))
	if missing := missingEmbeddings(t, pg, emb.name(), ids); len(missing) != len(ids) {
		t.Errorf("%d of the window's %d entities have a vector, though no embedding request for them returned", len(ids)-len(missing), len(ids))
	}
	t.Logf("window: %d entities committed in Neo4j, %d of them in the embedding request in flight at the kill, none with a vector", len(windowIDs), inFlight)
	for id, name := range windowIDs {
		acked.entities[id] = name
	}

	// The dead processes' leases would end EntityEmbedLease (two minutes)
	// after their claims: rather than wait, the test moves them into the
	// past, as time would, so that the restarted worker's next claim takes
	// the entries through the real recovery path.
	expireOutboxLeases(t, srv)

	// The last restart repairs both kills.
	url, _ = startServeProcess(t, dataDir, env...)
	checkAcknowledged(t, client, restBase(url), acked)
	ids = slices.Collect(maps.Keys(acked.entities))
	// The worker looks again every EntityEmbedPoll. An empty outbox also
	// means the entries the first kill left (of calls answered or not)
	// were settled.
	waitFor(t, 2*knowledge.EntityEmbedPoll+time.Minute, "the outbox is drained and every acknowledged entity has its vector", func() (bool, string) {
		entries := outboxEntries(t, srv)
		missing := missingEmbeddings(t, pg, emb.name(), ids)
		return len(entries) == 0 && len(missing) == 0,
			fmt.Sprintf("%d outbox entries left (e.g. %v), %d acknowledged entities without a vector (e.g. %v)",
				len(entries), entries[:min(3, len(entries))], len(missing), missing[:min(3, len(missing))])
	})
	if _, err := os.Stat(dataDir); err == nil {
		t.Errorf("the split deployment wrote to the data directory %s", dataDir)
	}
}

var outboxExpire = cypher.Must("test_outbox_expire")

// expireOutboxLeases moves the ends of every outbox lease into the past.
// Only for entries whose claimer is dead: a live one would lose its claim.
func expireOutboxLeases(t *testing.T, srv *neo4jtest.Server) {
	t.Helper()
	q, err := outboxExpire.Cypher()
	if err != nil {
		t.Fatal(err)
	}
	res, err := neo4j.ExecuteQuery(t.Context(), srv.Driver, q, map[string]any{"past": time.Now().Add(-time.Hour).UTC()},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(srv.Config.Database))
	if err != nil {
		t.Fatalf("expire the outbox's leases: %v", err)
	}
	if len(res.Records) == 1 {
		n, _, _ := neo4j.GetRecordValue[int64](res.Records[0], "expired")
		t.Logf("moved %d outbox leases of the killed process into the past", n)
	}
}

// restBase is the REST facade's root for the MCP URL startServe reports.
func restBase(mcpURL string) string { return strings.TrimSuffix(mcpURL, "/mcp") }

// acknowledged is what a server answered with a success: entity ids (with
// their names) and memory ids.
type acknowledged struct {
	entities map[string]string
	memories map[string]bool
}

// splitLoadUntilKilled runs entity writers (store, two companies a call)
// and memory writers (save_memory) against the REST facade at base, kills
// the server 300–800 ms after minEntities entities and a memory have been
// acknowledged (or after two minutes without), and returns what was.
func splitLoadUntilKilled(t *testing.T, base string, kill func()) acknowledged {
	t.Helper()
	const entityWriters, memoryWriters = 4, 2
	// Entities are slower to store than memories: the kill waits for a
	// few dozen, so that it finds the worker with work to do.
	const minEntities = 40
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	acked := acknowledged{entities: map[string]string{}, memories: map[string]bool{}}
	var mu sync.Mutex
	stop := make(chan struct{})
	var entityOK, memoryOK sync.Once
	entityAnswered, memoryAnswered := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	// worker calls tool until stop, recording each success; a call that
	// fails (the server is starting, or was killed) is not acknowledged.
	worker := func(tool string, args func(i int) map[string]any, record func(args, res map[string]any)) {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			a := args(i)
			res, err := callRESTResult(t.Context(), client, base, tool, a)
			if err != nil {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				continue
			}
			mu.Lock()
			record(a, res)
			mu.Unlock()
		}
	}
	for w := range entityWriters {
		wg.Go(func() {
			worker("store", func(i int) map[string]any {
				var ents []any
				for k := range 2 {
					ents = append(ents, map[string]any{"entity_type": "company", "name": fmt.Sprintf("Crash Co %d-%d-%d", w, i, k),
						"industry": "anvils, rockets and other things that fall", "address": fmt.Sprintf("%d Mesa Road, Arizona", i), "employees": i + k})
				}
				return map[string]any{"entities": ents}
			}, func(args, res map[string]any) {
				for k, id := range storedIDs(res) {
					acked.entities[id] = args["entities"].([]any)[k].(map[string]any)["name"].(string)
				}
				if len(acked.entities) >= minEntities {
					entityOK.Do(func() { close(entityAnswered) })
				}
			})
		})
	}
	for w := range memoryWriters {
		wg.Go(func() {
			worker("save_memory", func(i int) map[string]any {
				return map[string]any{"collection": "crash", "text": fmt.Sprintf("Crash memory %d-%d: the coyote ordered another rocket", w, i)}
			}, func(_, res map[string]any) {
				acked.memories[res["id"].(string)] = true
				memoryOK.Do(func() { close(memoryAnswered) })
			})
		})
	}
	timeout := time.After(2 * time.Minute)
	for _, ch := range []chan struct{}{entityAnswered, memoryAnswered} {
		select {
		case <-ch:
		case <-timeout:
		}
	}
	time.Sleep(time.Duration(300+rand.IntN(500)) * time.Millisecond)
	kill()
	close(stop)
	wg.Wait()
	return acked
}

// storedIDs are the entity ids of a store answer, in the order sent.
func storedIDs(res map[string]any) []string {
	var ids []string
	for _, e := range res["entities"].([]any) {
		ids = append(ids, e.(map[string]any)["entity_id"].(string))
	}
	return ids
}

// callRESTResult posts one call to the REST facade and returns its result;
// anything but a complete successful answer is an error.
func callRESTResult(ctx context.Context, client *http.Client, base, tool string, args map[string]any) (map[string]any, error) {
	body, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/mcp/call/"+tool, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+testOwnerKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return nil, err
	}
	var answer struct {
		Success bool           `json:"success"`
		Result  map[string]any `json:"result"`
	}
	if err := json.Unmarshal(buf.Bytes(), &answer); err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || !answer.Success || answer.Result == nil {
		return nil, fmt.Errorf("%s: %d %s", tool, resp.StatusCode, buf.String())
	}
	return answer.Result, nil
}

// checkAcknowledged reads every acknowledged entity (its snapshot) and
// memory (listing the collection) back through the tools.
func checkAcknowledged(t *testing.T, client *http.Client, base string, acked acknowledged) {
	t.Helper()
	lost := 0
	for id, name := range acked.entities {
		snap, err := callRESTResult(t.Context(), client, base, "retrieve_entity_snapshot", map[string]any{"entity_id": id})
		if err != nil || snap["canonical_name"] != name {
			lost++
			if lost <= 3 {
				t.Errorf("acknowledged entity %s (%s): %v %v", id, name, snap["canonical_name"], err)
			}
		}
	}
	found := map[string]bool{}
	for offset := 0; ; offset += 100 {
		args := map[string]any{"collection": "crash", "query": "", "limit": 100, "offset": offset}
		var page map[string]any
		// A page larger than the response budget comes in parts:
		// meta.next_cursor continues it.
		for {
			var err error
			if page, err = callRESTResult(t.Context(), client, base, "search_memory", args); err != nil {
				t.Fatal(err)
			}
			for _, r := range page["results"].([]any) {
				found[r.(map[string]any)["id"].(string)] = true
			}
			cursor, _ := page["meta"].(map[string]any)["next_cursor"].(string)
			if cursor == "" {
				break
			}
			args["cursor"] = cursor
		}
		if page["has_more"] != true {
			break
		}
	}
	var missing []string
	for id := range acked.memories {
		if !found[id] {
			missing = append(missing, id)
		}
	}
	if lost > 0 || len(missing) > 0 {
		t.Errorf("after restart: %d of %d acknowledged entities and %d of %d acknowledged memories cannot be read (memories e.g. %v)",
			lost, len(acked.entities), len(missing), len(acked.memories), missing[:min(3, len(missing))])
	}
}

// outboxEntry is an :OutboxEntry node as the test reads it.
type outboxEntry struct {
	entityID     string
	claimedUntil time.Time // zero when never claimed or released
}

// leased reports whether a claim holds the entry at now.
func (e outboxEntry) leased(now time.Time) bool { return e.claimedUntil.After(now) }

func countLeased(es []outboxEntry, now time.Time) int {
	n := 0
	for _, e := range es {
		if e.leased(now) {
			n++
		}
	}
	return n
}

// outboxEntries reads every entry of the outbox straight from Neo4j. The
// test holds the server alone, so every entry is this test's. Just after a
// kill -9 the server may still be committing the dead process's last
// transaction, an acknowledgement that deletes entries: read committed,
// the read can meet such a node with its properties already gone (CI91
// failed so, on a nil entity_id). It counts as deleted, as it is a moment
// later.
func outboxEntries(t *testing.T, srv *neo4jtest.Server) []outboxEntry {
	t.Helper()
	res, err := neo4j.ExecuteQuery(t.Context(), srv.Driver,
		"MATCH (o:OutboxEntry) WHERE o.entity_id IS NOT NULL RETURN o.entity_id AS entity_id, o.claimed_until AS claimed_until ORDER BY entity_id", nil,
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(srv.Config.Database), neo4j.ExecuteQueryWithReadersRouting())
	if err != nil {
		t.Fatalf("read the outbox: %v", err)
	}
	var out []outboxEntry
	for _, r := range res.Records {
		m := r.AsMap()
		e := outboxEntry{entityID: m["entity_id"].(string)}
		if until, ok := m["claimed_until"].(time.Time); ok {
			e.claimedUntil = until
		}
		out = append(out, e)
	}
	return out
}

// missingEmbeddings returns the ids among ids that have no vector of
// embedder in PostgreSQL's entity_embeddings.
func missingEmbeddings(t *testing.T, pg *pgx.Conn, embedder string, ids []string) []string {
	t.Helper()
	rows, err := pg.Query(t.Context(), `SELECT entity_id FROM entity_embeddings WHERE embedder = $1 AND entity_id = ANY($2)`, embedder, ids)
	if err != nil {
		t.Fatalf("read entity embeddings: %v", err)
	}
	have, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("read entity embeddings: %v", err)
	}
	var missing []string
	for _, id := range ids {
		if !slices.Contains(have, id) {
			missing = append(missing, id)
		}
	}
	slices.Sort(missing)
	return missing
}

// waitFor polls cond until it holds, and fails the test with cond's last
// word on the state if it does not within limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %s", what, limit, state)
		}
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// holdingEmbeddings is an OpenAI-compatible /embeddings endpoint that
// gives each text a fixed vector made from its SHA-256. While a marker is
// set, a request with a text that holds the marker is not answered: its
// texts are sent on held and the handler waits for its client to go away,
// as an embedding call in flight does when the process that made it is
// killed.
type holdingEmbeddings struct {
	srv     *httptest.Server
	marker  atomic.Pointer[string]
	held    chan []string
	release chan struct{}
}

const (
	holdingEmbedKey   = "split-crash-embed-key"
	holdingEmbedModel = "fake-embed"
	holdingEmbedDim   = 8
)

func newHoldingEmbeddings(t *testing.T) *holdingEmbeddings {
	t.Helper()
	h := &holdingEmbeddings{held: make(chan []string, 1), release: make(chan struct{})}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	// Cleanups run last first: this one frees a held handler before
	// Close waits for it.
	t.Cleanup(func() { close(h.release) })
	return h
}

// env is the environment that makes cairn embed with h.
func (h *holdingEmbeddings) env() []string {
	return []string{"CAIRN_EMBED_PROVIDER=openai", "CAIRN_EMBED_BASE_URL=" + h.srv.URL + "/v1",
		"CAIRN_EMBED_MODEL=" + holdingEmbedModel, "CAIRN_EMBED_API_KEY=" + holdingEmbedKey}
}

// name is the embedder's name as cairn records it with each vector.
func (h *holdingEmbeddings) name() string { return "openai:" + holdingEmbedModel }

// holdTextsWith holds the requests with a text that contains marker from
// now on; "" answers every request again.
func (h *holdingEmbeddings) holdTextsWith(marker string) { h.marker.Store(&marker) }

func (h *holdingEmbeddings) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+holdingEmbedKey {
		http.Error(w, `{"error": {"message": "bad key"}}`, http.StatusUnauthorized)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != holdingEmbedModel {
		http.Error(w, `{"error": {"message": "bad request"}}`, http.StatusBadRequest)
		return
	}
	if m := h.marker.Load(); m != nil && *m != "" && slices.ContainsFunc(req.Input, func(s string) bool { return strings.Contains(s, *m) }) {
		select {
		case h.held <- req.Input:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-h.release:
		}
		return
	}
	type item struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var resp struct {
		Data []item `json:"data"`
	}
	for i, text := range req.Input {
		sum := sha256.Sum256([]byte(text))
		v := make([]float32, holdingEmbedDim)
		for j := range v {
			v[j] = float32(sum[j]) + 1
		}
		resp.Data = append(resp.Data, item{Index: i, Embedding: v})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}
