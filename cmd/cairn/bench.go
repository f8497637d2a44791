package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
	graphneo4j "github.com/cairnkg/cairn/graph/neo4j"
	"github.com/cairnkg/cairn/mcp"
	"github.com/cairnkg/cairn/vector/evalset"
)

func benchCommand() *command {
	return &command{
		name:    "bench",
		summary: "measure this configuration on a seeded workload, in a scratch store",
		usage:   "bench [--entities N] [--memories N] [--queries N] [--seed N] [--json] [flags]",
		help: `
Run a reproducible workload (sizes from the flags, data from --seed) through
the whole service as a client sees it: a cairn server on a loopback port,
with the backend and embedder these flags configure, driven by the Go MCP
SDK client over Streamable HTTP with the owner's key. Each phase prints the
latency of a call at p50, p95 and p99 and its throughput:

  store                 --entities entities, --batch per call
  create_relationships  a random PART_OF tree over them (one parent each), --batch per call
  lookup by identifier  retrieve_entity_by_identifier, --queries calls
  snapshot read         retrieve_entity_snapshot
  traverse 1, 2, 3 hops retrieve_related_entities from random entities
  save_memory           --memories memories, one per call
  search_memory         plain, and filtered by a tag
  get_user_context      without a topic, and with one
  create_relationships, REFERS_TO
                        each entity refers to another at random, --batch
                        per call (a type without a cycle check, created
                        set-based; PART_OF is checked for cycles); last,
                        so that it changes no other phase's graph
  no-op                 an MCP ping, beside the loopback floor: a bare HTTP
                        handler on the same machine, same run; their
                        difference is what the server (and the MCP client
                        library) add to a call

The workload never touches your data. On the embedded store it runs in a
new temporary data directory; with --database-url it creates a scratch
database on that server (the role needs CREATEDB) and drops it at the end;
with --neo4j-uri as well (the split deployment), the Neo4j database must
be empty (a scratch one: Community Edition has one database, so a server of
its own), and is emptied again at the end. --keep keeps them and prints
where.

With --retrieval, the run measures retrieval quality instead: it saves
every turn of the evaluation set (vector/evalset: five multi-session
conversations, 1,158 dated turns) as memories, asks its 315 questions by
BM25 alone, by the vector signal alone and hybrid as search_memory ranks
them (the embedder's default minSimilarity), and prints recall@1, @5 and
@10 and hit@5 per kind of question, ingest throughput, search p50 and p95,
and how many answers the threshold drops. --padding adds that many
memories of small talk to each conversation, to measure at a larger size;
--shared saves them all into one collection (--padding 1800 --shared: one
collection of about 10,000 memories).
The other size flags are ignored.

Rate limits are off for the run; every other setting is serve's default.
--json prints the figures as JSON instead of the table (progress goes to
stderr either way).`,
		env: append(storeEnv[:len(storeEnv):len(storeEnv)], embedEnv...),
		setup: func(fs *flag.FlagSet) runFunc {
			var common commonFlags
			common.register(fs)
			var emb embedFlags
			emb.register(fs)
			var w benchWorkload
			fs.IntVar(&w.Entities, "entities", 10_000, "entities to store")
			fs.IntVar(&w.Memories, "memories", 10_000, "memories to save")
			fs.IntVar(&w.Queries, "queries", 200, "calls of each read phase")
			fs.IntVar(&w.Batch, "batch", 100, "entities or relationships per write call")
			fs.Uint64Var(&w.Seed, "seed", 1, "seed of the generated data and of the query choices")
			asJSON := fs.Bool("json", false, "print the figures as JSON")
			keep := fs.Bool("keep", false, "keep the scratch store and print where it is")
			retrieval := fs.Bool("retrieval", false, "measure retrieval quality on the evaluation set instead (see below)")
			shared := fs.Bool("shared", false, "with --retrieval, save the 5 conversations into one collection and ask every question of it")
			padding := fs.Int("padding", 0, "with --retrieval, memories of small talk added to each of the 5 conversations (1800: about 10,000 in all)")
			cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof reads it)")
			return func(ctx context.Context, env *environment) error {
				if fs.NArg() > 0 {
					return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
				}
				if *cpuProfile != "" {
					stop, err := startCPUProfile(*cpuProfile)
					if err != nil {
						return err
					}
					defer func() {
						if err := stop(); err != nil {
							fmt.Fprintln(env.stderr, err)
						}
					}()
				}
				if w.Entities < 2 || w.Memories < 1 || w.Queries < 1 || w.Batch < 1 {
					return usageError{"--entities must be 2 or more, --memories, --queries and --batch 1 or more"}
				}
				log, err := common.logger(io.Discard)
				if err != nil {
					return err
				}
				embedder, err := emb.open(ctx, env.getenv, log)
				if err != nil {
					return err
				}
				cfg := common.appConfig()
				cfg.embedder = embedder
				cfg.limits = map[consent.RateClass]int{consent.RateClassDefault: 0, consent.RateClassStore: 0, consent.RateClassUpload: 0}
				if cfg.mcp, err = (&toolFlags{callTimeout: mcp.DefaultCallTimeout}).options(); err != nil {
					return err
				}
				scratch, err := openScratch(ctx, &cfg, *keep)
				if err != nil {
					return err
				}
				defer func() {
					if msg := scratch.close(); msg != "" {
						fmt.Fprintln(env.stderr, msg)
					}
				}()
				if *retrieval {
					return runRetrievalBench(ctx, cfg, embedder, scratch.describe, evalset.Options{Padding: *padding, Shared: *shared}, *asJSON, log, env)
				}
				report, err := runBench(ctx, cfg, w, log, env.stderr)
				if err != nil {
					return err
				}
				report.Store = scratch.describe
				report.Embedder = embedder.Name()
				if *asJSON {
					enc := json.NewEncoder(env.stdout)
					enc.SetIndent("", "  ")
					return enc.Encode(report)
				}
				report.print(env.stdout)
				return nil
			}
		},
	}
}

// benchWorkload is the size and seed of a run.
type benchWorkload struct {
	Entities int    `json:"entities"`
	Memories int    `json:"memories"`
	Queries  int    `json:"queries"`
	Batch    int    `json:"batch"`
	Seed     uint64 `json:"seed"`
}

// benchPhase is the figures of one phase.
type benchPhase struct {
	Name  string `json:"name"`
	Calls int    `json:"calls"`
	// Items is what the calls did in all: entities stored, relationships
	// created, or calls for reads.
	Items       int     `json:"items"`
	P50ms       float64 `json:"p50_ms"`
	P95ms       float64 `json:"p95_ms"`
	P99ms       float64 `json:"p99_ms"`
	ItemsPerSec float64 `json:"items_per_s"`
}

// benchReport is what a run prints.
type benchReport struct {
	Version  string        `json:"version"`
	Store    string        `json:"store"`
	Embedder string        `json:"embedder"`
	Workload benchWorkload `json:"workload"`
	Phases   []benchPhase  `json:"phases"`
	// LoopbackFloorMs is the p50 of a request to a bare HTTP handler;
	// ServerAddedMs is the no-op call's p50 less it.
	LoopbackFloorMs float64 `json:"loopback_floor_p50_ms"`
	ServerAddedMs   float64 `json:"server_added_p50_ms"`
	ElapsedSec      float64 `json:"elapsed_s"`
}

func (r *benchReport) print(w io.Writer) {
	fmt.Fprintf(w, "cairn %s on %s, embedder %s\n", r.Version, r.Store, r.Embedder)
	fmt.Fprintf(w, "%d entities, %d memories, %d queries a read phase, batches of %d, seed %d; %.1f s in all\n\n",
		r.Workload.Entities, r.Workload.Memories, r.Workload.Queries, r.Workload.Batch, r.Workload.Seed, r.ElapsedSec)
	width := len("phase")
	for _, p := range r.Phases {
		width = max(width, len(p.Name))
	}
	fmt.Fprintf(w, "%-*s %7s %8s %8s %8s %8s %9s\n", width, "phase", "calls", "items", "p50 ms", "p95 ms", "p99 ms", "items/s")
	for _, p := range r.Phases {
		fmt.Fprintf(w, "%-*s %7d %8d %8.2f %8.2f %8.2f %9.0f\n", width, p.Name, p.Calls, p.Items, p.P50ms, p.P95ms, p.P99ms, p.ItemsPerSec)
	}
	fmt.Fprintf(w, "\nno-op call p50 %.3f ms = loopback floor %.3f ms + server %.3f ms\n",
		r.LoopbackFloorMs+r.ServerAddedMs, r.LoopbackFloorMs, r.ServerAddedMs)
}

// scratch is the store a run writes to, and how to be rid of it.
type scratch struct {
	describe string
	close    func() string
}

// openScratch points cfg at a new store: a temporary data directory, or a
// new database on cfg's PostgreSQL server.
func openScratch(ctx context.Context, cfg *appConfig, keep bool) (*scratch, error) {
	if cfg.databaseURL == "" {
		dir, err := os.MkdirTemp("", "cairn-bench-")
		if err != nil {
			return nil, err
		}
		cfg.dataDir = dir
		return &scratch{describe: "embedded store", close: func() string {
			if keep {
				return "cairn bench: kept the store in " + dir
			}
			os.RemoveAll(dir)
			return ""
		}}, nil
	}
	u, err := url.Parse(cfg.databaseURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, usageError{"cairn bench needs --database-url as a postgres:// URL"}
	}
	var graphScratch *scratch
	if cfg.neo4j.enabled() {
		if graphScratch, err = openNeo4jScratch(ctx, cfg, keep); err != nil {
			return nil, err
		}
	}
	conn, err := pgx.Connect(ctx, cfg.databaseURL)
	if err != nil {
		return nil, fmt.Errorf("bench: connect to make a scratch database: %w", err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("cairn_bench_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return nil, fmt.Errorf("bench: create scratch database (the role needs CREATEDB): %w", err)
	}
	admin := cfg.databaseURL
	u.Path = "/" + name
	cfg.databaseURL = u.String()
	describe := "PostgreSQL " + postgresName(cfg.databaseURL)
	if graphScratch != nil {
		describe += " with the graph in " + graphScratch.describe
	}
	return &scratch{describe: describe, close: func() string {
		var msgs []string
		if graphScratch != nil {
			msgs = append(msgs, graphScratch.close())
		}
		msgs = append(msgs, dropScratchDatabase(admin, name, keep))
		return strings.TrimSpace(strings.Join(msgs, "\n"))
	}}, nil
}

// dropScratchDatabase drops the scratch database name (unless keep) and
// returns what to tell the person, or "".
func dropScratchDatabase(admin, name string, keep bool) string {
	if keep {
		return "cairn bench: kept the scratch database " + name
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err == nil {
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	}
	if err != nil {
		return fmt.Sprintf("cairn bench: could not drop the scratch database %s: %v", name, err)
	}
	return ""
}

// openNeo4jScratch checks that the Neo4j database cfg names is empty, and
// returns what clears it at the end. The database is the bench's to fill:
// Community Edition has no second database to create, so the person names
// an empty one, and one that holds data is refused rather than cleared.
func openNeo4jScratch(ctx context.Context, cfg *appConfig, keep bool) (*scratch, error) {
	nc, err := cfg.neo4j.config(cfg.databaseURL)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	d, err := graphneo4j.Connect(ctx, nc)
	if err != nil {
		return nil, err
	}
	defer d.Close(context.WithoutCancel(ctx))
	holds, err := graphneo4j.HoldsData(ctx, d, nc.Database)
	if err != nil {
		return nil, err
	}
	if holds {
		return nil, usageError{fmt.Sprintf("cairn bench clears its Neo4j database when it ends, and %s/%s holds data: name an empty database (on Community Edition, a server of its own)", redactURI(nc.URI), nc.Database)}
	}
	where := fmt.Sprintf("Neo4j %s/%s", redactURI(nc.URI), nc.Database)
	return &scratch{describe: where, close: func() string {
		if keep {
			return "cairn bench: kept the graph in " + where
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		d, err := graphneo4j.Connect(ctx, nc)
		if err == nil {
			defer d.Close(ctx)
			_, err = graphneo4j.ClearDatabase(ctx, d, nc.Database)
		}
		if err != nil {
			return fmt.Sprintf("cairn bench: could not empty the Neo4j database %s: %v", where, err)
		}
		return ""
	}}, nil
}

// runBench serves cfg on a loopback port and drives it through the phases.
func runBench(ctx context.Context, cfg appConfig, w benchWorkload, log *slog.Logger, progress io.Writer) (*benchReport, error) {
	key, err := consent.NewKey()
	if err != nil {
		return nil, err
	}
	a, err := startApp(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	getenv := func(k string) string {
		if k == "CAIRN_OWNER_KEY" {
			return key
		}
		return ""
	}
	if _, err := bootstrapOwner(ctx, a, getenv); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := httpServer(a.mcp.HTTPHandler(mcp.HTTPOptions{Auth: a.auth, Ready: a.ready}))
	go srv.Serve(ln)
	defer srv.Close()
	a.startEntityEmbeddings(ctx)
	a.started()

	floorLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	floor := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	})}
	go floor.Serve(floorLn)
	defer floor.Close()

	httpClient := &http.Client{Transport: bearer{key}}
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "cairn-bench", Version: version()}, nil)
	cs, err := client.Connect(ctx, &mcpsdk.StreamableClientTransport{
		Endpoint: "http://" + ln.Addr().String() + "/mcp", HTTPClient: httpClient,
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("bench: connect: %w", err)
	}
	defer cs.Close()

	b := &benchRun{ctx: ctx, cs: cs, w: w, rng: rand.New(rand.NewPCG(w.Seed, 0x6361697226e)), progress: progress}
	start := time.Now()
	report := &benchReport{Version: version(), Workload: w}
	for _, phase := range b.phases() {
		fmt.Fprintf(progress, "cairn bench: %s…\n", phase.name)
		p, err := phase.run()
		if err != nil {
			return nil, fmt.Errorf("bench: %s: %w", phase.name, err)
		}
		p.Name = phase.name
		report.Phases = append(report.Phases, p)
	}
	fmt.Fprintf(progress, "cairn bench: no-op call and loopback floor…\n")
	floorLat, err := b.measure(w.Queries*5, func() error {
		resp, err := http.Post("http://"+floorLn.Addr().String()+"/", "application/json",
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	})
	if err != nil {
		return nil, fmt.Errorf("bench: loopback floor: %w", err)
	}
	pingLat, err := b.measure(w.Queries*5, func() error { return cs.Ping(ctx, nil) })
	if err != nil {
		return nil, fmt.Errorf("bench: ping: %w", err)
	}
	noop := summarise(pingLat, len(pingLat))
	noop.Name = "no-op (ping)"
	report.Phases = append(report.Phases, noop)
	report.LoopbackFloorMs = percentileMs(floorLat, 50)
	report.ServerAddedMs = noop.P50ms - report.LoopbackFloorMs
	report.ElapsedSec = time.Since(start).Seconds()
	return report, nil
}

// bearer authenticates every request with a key.
type bearer struct{ key string }

func (k bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// benchRun is one run's client, workload and generated data.
type benchRun struct {
	ctx      context.Context
	cs       *mcpsdk.ClientSession
	w        benchWorkload
	rng      *rand.Rand
	progress io.Writer
	ids      []string // entity ids in the order stored
}

type benchStep struct {
	name string
	run  func() (benchPhase, error)
}

var benchWords = strings.Fields(`coffee tea lasagna trattoria invoice payment meeting planning quarterly
garden bicycle holiday flight hotel dentist birthday gift recipe bread market rent insurance
project deadline report budget concert museum running swim book novel train ticket`)

func (b *benchRun) phases() []benchStep {
	w := b.w
	reads := func(name, tool string, args func() map[string]any) benchStep {
		return benchStep{name, func() (benchPhase, error) {
			lat, err := b.measure(w.Queries, func() error { _, err := b.call(tool, args()); return err })
			return summarise(lat, len(lat)), err
		}}
	}
	traverse := func(hops int) benchStep {
		return reads(fmt.Sprintf("traverse %d hop%s", hops, map[bool]string{true: "s"}[hops > 1]), "retrieve_related_entities",
			func() map[string]any {
				return map[string]any{"entity_id": b.randomID(), "max_hops": hops, "direction": "both"}
			})
	}
	// relate creates a relationship of relType from each stored entity
	// from first on to the one target(k) picks, w.Batch a call.
	relate := func(name, relType string, first int, target func(k int) int) benchStep {
		return benchStep{name, func() (benchPhase, error) {
			var lat []time.Duration
			for start := first; start < len(b.ids); start += w.Batch {
				var rels []any
				for k := start; k < min(start+w.Batch, len(b.ids)); k++ {
					rels = append(rels, map[string]any{"relationship_type": relType,
						"source_entity_id": b.ids[k], "target_entity_id": b.ids[target(k)]})
				}
				t0 := time.Now()
				out, err := b.call("create_relationships", map[string]any{"relationships": rels})
				lat = append(lat, time.Since(t0))
				if err != nil {
					return benchPhase{}, err
				}
				if failed, _ := out["failed"].(float64); failed > 0 {
					return benchPhase{}, fmt.Errorf("%v of %d relationships failed", failed, len(rels))
				}
			}
			return summarise(lat, len(b.ids)-first), nil
		}}
	}
	tags := []string{"home", "work", "health", "travel", "food"}
	return []benchStep{
		{"store", func() (benchPhase, error) {
			var lat []time.Duration
			for first := 0; first < w.Entities; first += w.Batch {
				n := min(w.Batch, w.Entities-first)
				ents := make([]any, n)
				for i := range ents {
					k := first + i
					ents[i] = map[string]any{"entity_type": "person", "name": fmt.Sprintf("bench person %07d", k),
						"email": fmt.Sprintf("person%07d@bench.example", k), "company": fmt.Sprintf("company %d", k%500)}
				}
				t0 := time.Now()
				out, err := b.call("store", map[string]any{"entities": ents})
				lat = append(lat, time.Since(t0))
				if err != nil {
					return benchPhase{}, err
				}
				lines, _ := out["entities"].([]any)
				for _, l := range lines {
					if m, ok := l.(map[string]any); ok {
						id, _ := m["entity_id"].(string)
						b.ids = append(b.ids, id)
					}
				}
			}
			if len(b.ids) != w.Entities {
				return benchPhase{}, fmt.Errorf("stored %d entities, the answers named %d", w.Entities, len(b.ids))
			}
			return summarise(lat, w.Entities), nil
		}},
		// A random tree of PART_OF: entity k's parent is one stored before
		// it, so the relationships never close a cycle, but each is
		// checked for one.
		relate("create_relationships", "PART_OF", 1, func(k int) int { return b.rng.IntN(k) }),
		reads("lookup by identifier", "retrieve_entity_by_identifier", func() map[string]any {
			return map[string]any{"identifier": fmt.Sprintf("person%07d@bench.example", b.rng.IntN(len(b.ids)))}
		}),
		reads("snapshot read", "retrieve_entity_snapshot", func() map[string]any {
			return map[string]any{"entity_id": b.randomID()}
		}),
		traverse(1), traverse(2), traverse(3),
		{"save_memory", func() (benchPhase, error) {
			lat, err := b.measure(w.Memories, func() error {
				_, err := b.call("save_memory", map[string]any{"collection": "notes", "text": b.sentence(12),
					"tags": []string{tags[b.rng.IntN(len(tags))]}})
				return err
			})
			return summarise(lat, len(lat)), err
		}},
		reads("search_memory", "search_memory", func() map[string]any {
			return map[string]any{"collection": "notes", "query": b.sentence(3), "limit": 10}
		}),
		reads("search_memory, tag filter", "search_memory", func() map[string]any {
			return map[string]any{"collection": "notes", "query": b.sentence(3), "limit": 10, "tags": []string{tags[b.rng.IntN(len(tags))]}}
		}),
		reads("get_user_context", "get_user_context", func() map[string]any { return map[string]any{} }),
		reads("get_user_context, topic", "get_user_context", func() map[string]any {
			return map[string]any{"topic": b.sentence(2)}
		}),
		// Last, so that every phase before it reads the graph it read
		// before this phase was added: each entity REFERS_TO another, at
		// random, a type without a cycle check.
		relate("create_relationships, REFERS_TO", "REFERS_TO", 0, func(k int) int {
			return (k + 1 + b.rng.IntN(len(b.ids)-1)) % len(b.ids)
		}),
	}
}

func (b *benchRun) randomID() string { return b.ids[b.rng.IntN(len(b.ids))] }

func (b *benchRun) sentence(n int) string {
	words := make([]string, n)
	for i := range words {
		words[i] = benchWords[b.rng.IntN(len(benchWords))]
	}
	return strings.Join(words, " ")
}

// call calls a tool and decodes its structured answer; a tool error is an
// error, since the workload only makes calls that succeed.
func (b *benchRun) call(tool string, args map[string]any) (map[string]any, error) {
	res, err := b.cs.CallTool(b.ctx, &mcpsdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, err
	}
	if res.IsError {
		msg := "tool error"
		if len(res.Content) > 0 {
			if t, ok := res.Content[0].(*mcpsdk.TextContent); ok {
				msg = t.Text
			}
		}
		return nil, fmt.Errorf("%s: %s", tool, msg)
	}
	out, _ := res.StructuredContent.(map[string]any)
	return out, nil
}

// measure runs fn n times and returns each call's latency.
func (b *benchRun) measure(n int, fn func() error) ([]time.Duration, error) {
	lat := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if err := fn(); err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(t0))
	}
	return lat, nil
}

// summarise turns call latencies into a phase's figures; items is what the
// calls did in all.
func summarise(lat []time.Duration, items int) benchPhase {
	var total time.Duration
	for _, d := range lat {
		total += d
	}
	p := benchPhase{Calls: len(lat), Items: items,
		P50ms: percentileMs(lat, 50), P95ms: percentileMs(lat, 95), P99ms: percentileMs(lat, 99)}
	if total > 0 {
		p.ItemsPerSec = float64(items) / total.Seconds()
	}
	return p
}

// percentileMs returns the q-th percentile of lat (nearest rank) in
// milliseconds.
func percentileMs(lat []time.Duration, q int) float64 {
	if len(lat) == 0 {
		return 0
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	i := (q*len(s)+99)/100 - 1
	return float64(s[max(i, 0)].Microseconds()) / 1000
}

// startCPUProfile starts writing a CPU profile of the process to path;
// stop ends it and closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		return nil
	}, nil
}
