package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	graphneo4j "github.com/cairnkg/cairn/graph/neo4j"
	"github.com/cairnkg/cairn/graph/neo4j/neo4jtest"
	"github.com/cairnkg/cairn/mcp"
	"github.com/cairnkg/cairn/migrations"
)

// TestSplitTwoProcesses runs two `cairn serve` processes of the split
// deployment on one Neo4j database and one PostgreSQL schema, with the same
// owner key: they start at the same moment on empty stores (their
// migrations and the owner's creation race), they close cycles from both
// sides at once and the graph stays acyclic, and they share one rate limit.
func TestSplitTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := neo4jtest.Take(t)
	pg := pgtest.URL(t)
	unmigrate(t, srv)
	env := append([]string{"CAIRN_DATABASE_URL=" + pg}, srv.Env()...)

	// No rate limits here: the race below makes many calls.
	procs := startServeTogether(t, 2, append(slices.Clone(env), "CAIRN_RATE_LIMIT=0", "CAIRN_RATE_LIMIT_STORE=0"))
	checkMigrated(t, srv, pg)
	for i, base := range procs {
		if a, err := postTool(t.Context(), base, "retrieve_entities", map[string]any{"limit": 1}); err != nil || !a.Success {
			t.Fatalf("process %d does not serve: %v %+v", i+1, err, a)
		}
	}

	t.Run("CycleRace", func(t *testing.T) { cycleRace(t, procs) })
	t.Run("SharedRateLimit", func(t *testing.T) {
		const limit = 10
		procs := startServeTogether(t, 2, append(slices.Clone(env), fmt.Sprintf("CAIRN_RATE_LIMIT=%d", limit)))
		sharedRateLimit(t, procs, limit)
	})
}

// unmigrate returns srv's database to the state of a new server, without
// Cairn's constraints, indexes and migration bookkeeping, so that the
// processes the test starts race to migrate it. A cleanup migrates it
// again, whatever the test did, for the tests that take it next.
func unmigrate(t *testing.T, srv *neo4jtest.Server) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	t.Cleanup(func() {
		if _, err := graphneo4j.Migrate(ctx, srv.Driver, srv.Config.Database, graphneo4j.MigrateOptions{}); err != nil {
			t.Errorf("migrate %s again: %v", srv, err)
		}
	})
	names := func(show string) []string {
		t.Helper()
		r, err := neo4j.ExecuteQuery(ctx, srv.Driver, show, nil, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(srv.Config.Database))
		if err != nil {
			t.Fatalf("%s: %v", show, err)
		}
		var out []string
		for _, rec := range r.Records {
			name, _, _ := neo4j.GetRecordValue[string](rec, "name")
			out = append(out, name)
		}
		return out
	}
	var drops []string
	for _, name := range names("SHOW CONSTRAINTS YIELD name RETURN name") {
		drops = append(drops, "DROP CONSTRAINT `"+name+"`")
	}
	drops = append(drops, "MATCH (n) WHERE n:CairnMigration OR n:CairnMigrationLock DETACH DELETE n")
	for _, q := range drops {
		if _, err := neo4j.ExecuteQuery(ctx, srv.Driver, q, nil, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(srv.Config.Database)); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Indexes that backed a constraint went with it; the token lookup
	// indexes are Neo4j's own.
	for _, name := range names("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name") {
		q := "DROP INDEX `" + name + "`"
		if _, err := neo4j.ExecuteQuery(ctx, srv.Driver, q, nil, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(srv.Config.Database)); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if left := append(names("SHOW CONSTRAINTS YIELD name RETURN name"), names("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name")...); len(left) > 0 {
		t.Fatalf("%s still has %v: the processes would not migrate it", srv, left)
	}
}

// checkMigrated checks that every Neo4j and PostgreSQL migration was
// applied, each once.
func checkMigrated(t *testing.T, srv *neo4jtest.Server, pg string) {
	t.Helper()
	ctx := t.Context()
	all, err := migrations.LoadCypher()
	if err != nil {
		t.Fatal(err)
	}
	var want, got []int64
	for _, m := range all {
		want = append(want, int64(m.Version))
	}
	r, err := neo4j.ExecuteQuery(ctx, srv.Driver, "MATCH (m:CairnMigration) RETURN m.version AS v ORDER BY v", nil,
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(srv.Config.Database))
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range r.Records {
		v, _, _ := neo4j.GetRecordValue[int64](rec, "v")
		got = append(got, v)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Neo4j migrations recorded: %v, want %v", got, want)
	}
	status, err := postgres.Status(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range status {
		if !s.Applied {
			t.Errorf("PostgreSQL migration %03d_%s is pending", s.Version, s.Name)
		}
	}
}

// cycleRace creates rings of PART_OF edges (pairs a→b, b→a, and longer
// rings), every edge of every ring at once, alternating between the
// processes. Of each ring exactly one edge must be refused with
// CYCLE_DETECTED, naming a path of edges that were created, and the graph
// read back through either process must be the edges created, without a
// cycle.
func cycleRace(t *testing.T, procs []string) {
	ctx := t.Context()
	var sizes []int
	for range 16 {
		sizes = append(sizes, 2)
	}
	sizes = append(sizes, 3, 4, 5, 6)

	// The entities: one store call per ring, half through each process,
	// all at once.
	rings := make([][]string, len(sizes))
	errs := make([]error, len(sizes))
	var wg sync.WaitGroup
	for k, size := range sizes {
		wg.Go(func() {
			var entities []any
			for j := range size {
				entities = append(entities, map[string]any{"entity_type": "company", "name": fmt.Sprintf("Ring %d member %d", k, j)})
			}
			a, err := postTool(ctx, procs[k%2], "store", map[string]any{"entities": entities})
			if err == nil && !a.Success {
				err = fmt.Errorf("store: %d %s: %s", a.Status, a.Error.Code, a.Error.Message)
			}
			var out struct {
				Entities []struct {
					EntityID string `json:"entity_id"`
				} `json:"entities"`
			}
			if err == nil {
				err = json.Unmarshal(a.Result, &out)
			}
			for _, e := range out.Entities {
				rings[k] = append(rings[k], e.EntityID)
			}
			errs[k] = err
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for k, ids := range rings {
		if errs[k] != nil {
			t.Fatalf("ring %d: %v", k, errs[k])
		}
		if len(ids) != sizes[k] {
			t.Fatalf("ring %d: store made %d entities, want %d", k, len(ids), sizes[k])
		}
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("entity %s was made twice", id)
			}
			seen[id] = true
		}
	}

	// The edges: edge j of a ring goes to process j%2, so that a pair's
	// a→b and b→a reach different processes; all start together.
	type edge struct{ from, to string }
	type outcome struct {
		answer restAnswer
		err    error
	}
	outcomes := make([][]outcome, len(rings))
	start := make(chan struct{})
	for k, ids := range rings {
		outcomes[k] = make([]outcome, len(ids))
		for j := range ids {
			e := edge{ids[j], ids[(j+1)%len(ids)]}
			wg.Go(func() {
				<-start
				a, err := postTool(ctx, procs[j%2], "create_relationship",
					map[string]any{"relationship_type": "PART_OF", "source_entity_id": e.from, "target_entity_id": e.to})
				outcomes[k][j] = outcome{a, err}
			})
		}
	}
	close(start)
	wg.Wait()

	created := map[edge]bool{}
	refused := map[edge][]string{} // the cycle path each refusal named
	for k, ids := range rings {
		for j, o := range outcomes[k] {
			e := edge{ids[j], ids[(j+1)%len(ids)]}
			switch {
			case o.err != nil:
				t.Errorf("ring %d edge %d: %v", k, j, o.err)
			case o.answer.Success:
				created[e] = true
			case o.answer.Error.Code == mcp.CodeCycle:
				var path []string
				raw, _ := json.Marshal(o.answer.Error.Details["path"])
				_ = json.Unmarshal(raw, &path)
				refused[e] = path
			default:
				t.Errorf("ring %d edge %d (process %d): %d %s: %s, want success or %s", k, j, j%2+1,
					o.answer.Status, o.answer.Error.Code, o.answer.Error.Message, mcp.CodeCycle)
			}
		}
	}
	for k, ids := range rings {
		var n int
		for j := range ids {
			if refused[edge{ids[j], ids[(j+1)%len(ids)]}] != nil {
				n++
			}
		}
		if n != 1 {
			t.Errorf("ring %d of %d edges: %d refused with %s, want exactly 1", k, len(ids), n, mcp.CodeCycle)
		}
	}
	for e, path := range refused {
		// The path runs from the refused edge's source over its target
		// and back, along edges that exist.
		ok := len(path) >= 3 && path[0] == e.from && path[1] == e.to && path[len(path)-1] == e.from
		for i := 1; ok && i+1 < len(path); i++ {
			ok = created[edge{path[i], path[i+1]}]
		}
		if !ok {
			t.Errorf("%s PART_OF %s was refused with the path %v, which is not that edge closing a cycle of created edges", e.from, e.to, path)
		}
	}

	// Read the graph back through each process.
	want := map[string][]string{}
	for e := range created {
		want[e.from] = append(want[e.from], e.to)
	}
	for i, base := range procs {
		got := map[string][]string{}
		for id := range seen {
			a, err := postTool(ctx, base, "list_relationships",
				map[string]any{"entity_id": id, "direction": "outbound", "relationship_type": "PART_OF", "limit": 1000})
			if err != nil || !a.Success {
				t.Fatalf("process %d: list_relationships of %s: %v %+v", i+1, id, err, a.Error)
			}
			var out struct {
				Relationships []struct {
					SourceEntityID string `json:"source_entity_id"`
					TargetEntityID string `json:"target_entity_id"`
				} `json:"relationships"`
			}
			if err := json.Unmarshal(a.Result, &out); err != nil {
				t.Fatal(err)
			}
			for _, r := range out.Relationships {
				got[r.SourceEntityID] = append(got[r.SourceEntityID], r.TargetEntityID)
			}
		}
		if cycle := findCycle(got); cycle != nil {
			t.Errorf("process %d reads a PART_OF cycle: %v", i+1, cycle)
		}
		if !sameEdges(got, want) {
			t.Errorf("process %d reads the edges %v, want the %d created: %v", i+1, got, len(created), want)
		}
	}
}

// sameEdges reports whether two adjacency lists hold the same edges.
func sameEdges(a, b map[string][]string) bool {
	norm := func(m map[string][]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			v = slices.Clone(v)
			slices.Sort(v)
			out[k] = strings.Join(v, ",")
		}
		return out
	}
	na, nb := norm(a), norm(b)
	if len(na) != len(nb) {
		return false
	}
	for k, v := range na {
		if nb[k] != v {
			return false
		}
	}
	return true
}

// findCycle returns a cycle of the directed graph as the path of its
// nodes, first and last the same, or nil when there is none.
func findCycle(adj map[string][]string) []string {
	const (
		unvisited = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(n string) []string
	visit = func(n string) []string {
		state[n] = onPath
		path = append(path, n)
		for _, m := range adj[n] {
			switch state[m] {
			case onPath:
				i := slices.Index(path, m)
				return append(slices.Clone(path[i:]), m)
			case unvisited:
				if c := visit(m); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[n] = done
		return nil
	}
	nodes := make([]string, 0, len(adj))
	for n := range adj {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	for _, n := range nodes {
		if state[n] == unvisited {
			if c := visit(n); c != nil {
				return c
			}
		}
	}
	return nil
}

// sharedRateLimit makes calls with the owner key alternately through the
// two processes, limit+2 of them: the first limit pass, the remaining
// count falling by one at each whichever process answers, and the next
// two are refused by both processes, although each has admitted only half
// the limit. Windows are fixed minutes on the wall clock; when one ends
// during the calls (their X-RateLimit-Reset differ), the calls are made
// again in the next.
func sharedRateLimit(t *testing.T, procs []string, limit int) {
	ctx := t.Context()
	for range 3 {
		answers := make([]restAnswer, limit+2)
		for i := range answers {
			a, err := postTool(ctx, procs[i%2], "retrieve_entities", map[string]any{"limit": 1})
			if err != nil {
				t.Fatalf("call %d: %v", i+1, err)
			}
			answers[i] = a
		}
		reset := answers[0].Header.Get("X-RateLimit-Reset")
		if i := slices.IndexFunc(answers, func(a restAnswer) bool { return a.Header.Get("X-RateLimit-Reset") != reset }); i >= 0 {
			end, err := strconv.ParseInt(reset, 10, 64)
			if err != nil {
				t.Fatalf("X-RateLimit-Reset %q: %v", reset, err)
			}
			t.Logf("the rate-limit window ended between calls 1 and %d; trying again in the next one", i+1)
			time.Sleep(time.Until(time.Unix(end, 0)) + time.Minute)
			continue
		}
		for i, a := range answers {
			remaining := a.Header.Get("X-RateLimit-Remaining")
			if i < limit {
				if a.Status != http.StatusOK || !a.Success || remaining != strconv.Itoa(limit-i-1) {
					t.Errorf("call %d (process %d): %d %s, X-RateLimit-Remaining %q; want 200 and %d remaining",
						i+1, i%2+1, a.Status, a.Error.Code, remaining, limit-i-1)
				}
				continue
			}
			if a.Status != http.StatusTooManyRequests || a.Error.Code != mcp.CodeRateLimited || remaining != "0" || a.Header.Get("Retry-After") == "" {
				t.Errorf("call %d (process %d), past the limit of %d: %d %s, X-RateLimit-Remaining %q, Retry-After %q; want 429 %s with 0 remaining and Retry-After",
					i+1, i%2+1, limit, a.Status, a.Error.Code, remaining, a.Header.Get("Retry-After"), mcp.CodeRateLimited)
			}
		}
		return
	}
	t.Fatal("three rate-limit windows in a row ended during the calls")
}

// restAnswer is the REST facade's answer to one call.
type restAnswer struct {
	Status  int             `json:"-"`
	Header  http.Header     `json:"-"`
	Success bool            `json:"success"`
	Result  json.RawMessage `json:"result"`
	Error   mcp.ErrorBody   `json:"error"`
}

// restClient keeps connections to the processes open across calls.
var restClient = &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// postTool calls a tool through the REST facade at base with the owner
// key. It only returns an error when no answer in the facade's shape came
// back, so that goroutines may call it; the caller judges the answer.
func postTool(ctx context.Context, base, tool string, args map[string]any) (restAnswer, error) {
	body, err := json.Marshal(args)
	if err != nil {
		return restAnswer{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp/call/"+tool, bytes.NewReader(body))
	if err != nil {
		return restAnswer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+testOwnerKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := restClient.Do(req)
	if err != nil {
		return restAnswer{}, err
	}
	defer resp.Body.Close()
	var a restAnswer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		return restAnswer{}, fmt.Errorf("%s: %d, not the facade's JSON: %w", tool, resp.StatusCode, err)
	}
	a.Status, a.Header = resp.StatusCode, resp.Header
	return a, nil
}

// serveLog is what a serve process writes to stderr; it reports the MCP
// URL of the line that says the process serves.
type serveLog struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	found bool
	url   chan string
}

var servingURL = regexp.MustCompile(`mcp=(http://\S+/mcp)\s`)

func (l *serveLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if !l.found {
		if m := servingURL.FindSubmatch(l.buf.Bytes()); m != nil {
			l.found = true
			l.url <- string(m[1])
		}
	}
	return len(p), nil
}

func (l *serveLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// startServeTogether starts n `cairn serve` processes with the owner key
// and env at the same moment, so that their starts race, and returns the
// base URL of each once all serve. A process that exits instead fails the
// test with its stderr. The test's end interrupts them (and kills one that
// has not ended 10 s later); a failed test logs their stderr.
func startServeTogether(t *testing.T, n int, env []string) []string {
	t.Helper()
	bin := cairnBinary(t)
	cmds := make([]*exec.Cmd, n)
	logs := make([]*serveLog, n)
	for i := range n {
		cmds[i] = exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(t.TempDir(), "data"))
		cmds[i].Env = append(os.Environ(), append([]string{"CAIRN_OWNER_KEY=" + testOwnerKey}, env...)...)
		logs[i] = &serveLog{url: make(chan string, 1)}
		cmds[i].Stderr = logs[i]
	}
	exited := make([]chan struct{}, n)
	for i, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited[i] = make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited[i]) }()
		t.Cleanup(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			select {
			case <-exited[i]:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-exited[i]
			}
			if t.Failed() {
				t.Logf("serve process %d stderr:\n%s", i+1, logs[i])
			}
		})
	}
	bases := make([]string, n)
	for i := range n {
		select {
		case u := <-logs[i].url:
			bases[i] = strings.TrimSuffix(u, "/mcp")
		case <-exited[i]:
			t.Fatalf("serve process %d exited at start (%v):\n%s", i+1, cmds[i].ProcessState, logs[i])
		case <-time.After(2 * time.Minute):
			t.Fatalf("serve process %d did not serve within 2 minutes:\n%s", i+1, logs[i])
		}
	}
	return bases
}
