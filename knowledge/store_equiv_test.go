package knowledge

// The store pipeline used to write entity by entity: a resolve, an insert
// of the observation, a contradiction check reading the current value's
// observation, the raw fragments one by one, then for every touched entity
// a read of all its observations, a read of its row and the writes of its
// snapshot, identifiers, timeline events and outbox entry, each a
// statement. It now does each of those once for the whole call (see
// Store and rewrite). The old pipeline lives on here, verbatim but for its
// names, so that TestStoreMatchesEntityByEntity can prove on random calls
// that both leave the same rows in every table and answer the same.

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/vector"
	vembedded "github.com/cairnkg/cairn/vector/embedded"
)

// oldStore is Store as it was: entity by entity.
func (s *Service) oldStore(ctx context.Context, c Caller, req StoreRequest) (StoreResult, error) {
	prepared, unknownCount, _, err := s.prepareCreating(ctx, c, req)
	if err != nil {
		return StoreResult{}, err
	}
	priority := DefaultSourcePriority
	if req.SourcePriority != nil {
		priority = *req.SourcePriority
	}
	now := s.clock()
	observedAt := now
	if v, ok := req.Provenance["extracted_at"]; ok {
		str, _ := v.(string)
		t, err := ParseTime("provenance.extracted_at", str)
		if err != nil {
			return StoreResult{}, err
		}
		observedAt = t.UTC().Truncate(time.Microsecond)
	}
	content, err := canonicalJSON(map[string]any{
		"entities": req.Entities, "source_priority": req.SourcePriority, "provenance": req.Provenance,
	})
	if err != nil {
		return StoreResult{}, err
	}
	hash := sha256Hex(content)
	src := graph.Source{
		ID: SourceID(c.UserID, hash), UserID: c.UserID, ContentHash: hash, Kind: graph.SourceStructured,
		MimeType: "application/json", Size: int64(len(content)), Provenance: sourceProvenance(req.Provenance, c.AgentID),
		CreatedAt: now,
	}

	var res StoreResult
	var found []Contradiction
	write := func(tx *graph.Tx) error {
		res = StoreResult{Source: src, RunID: hashID("run_", src.ID), UnknownFieldsCount: unknownCount}
		found = nil
		existing, err := tx.SourceByHash(ctx, c.UserID, hash)
		if err == nil {
			return s.deduplicated(ctx, tx, c, prepared, existing, &res)
		}
		if !errors.Is(err, graph.ErrNotFound) {
			return err
		}
		if err := tx.InsertSource(ctx, src); err != nil {
			return err
		}
		var touched []string
		created := map[string]bool{}
		for i, pe := range prepared {
			target := pe.entityID
			ent, err := tx.ResolveEntity(ctx, c.UserID, pe.entityID)
			switch {
			case err == nil:
				target = ent.ID
			case errors.Is(err, graph.ErrNotFound):
				created[target] = true
			default:
				return err
			}
			obs := graph.Observation{
				ID: hashID("obs_", src.ID, strconv.Itoa(i)), UserID: c.UserID, EntityID: target,
				EntityType: pe.schema.EntityType, SchemaVersion: pe.schema.Version, SourceID: src.ID,
				ObservedAt: observedAt, CreatedAt: now, SpecificityScore: specificity(pe.schema, pe.fields),
				SourcePriority: priority, Fields: pe.fields, OriginalEntityID: pe.entityID,
			}
			if err := tx.InsertObservation(ctx, obs); err != nil {
				return err
			}
			if !created[target] && s.contradictions != nil {
				cs, err := oldContradictionsIn(ctx, tx, pe.schema, ent, obs, now)
				if err != nil {
					return err
				}
				found = append(found, cs...)
			}
			for _, name := range sortedKeys(pe.unknown) {
				if err := tx.InsertRawFragment(ctx, graph.RawFragment{
					ID: hashID("frag_", obs.ID, name), UserID: c.UserID, SourceID: src.ID, EntityID: target,
					EntityType: pe.schema.EntityType, Field: name, Value: pe.unknown[name], CreatedAt: now,
				}); err != nil {
					return err
				}
			}
			res.Entities = append(res.Entities, storedLine(c, pe, target, obs.ID, created[target]))
			res.ObservationsCreated++
			if !slices.Contains(touched, target) {
				touched = append(touched, target)
			}
		}
		var visible []string
		for _, id := range touched {
			e, err := s.oldRecompute(ctx, tx, c.UserID, id)
			if err != nil {
				return err
			}
			if !c.readable(e.Type) {
				continue
			}
			visible = append(visible, id)
			if created[id] {
				res.EntitiesCreated++
			}
		}
		return s.related(ctx, tx, c, visible, &res)
	}
	err = s.graph.Update(ctx, write)
	if errors.Is(err, graph.ErrConflict) {
		// Another writer stored the same content between our read and our
		// insert (possible on backends with concurrent writers): this time
		// the read finds it.
		err = s.graph.Update(ctx, write)
	}
	if err != nil {
		return StoreResult{}, fmt.Errorf("knowledge: store: %w", err)
	}
	s.recordDetected(ctx, found)
	return res, nil
}

// oldRecompute is recompute as it was.
func (s *Service) oldRecompute(ctx context.Context, tx *graph.Tx, userID, entityID string) (graph.Entity, error) {
	obs, err := tx.AllObservations(ctx, userID, entityID)
	if err != nil {
		return graph.Entity{}, err
	}
	if obs, err = s.counted(ctx, userID, obs); err != nil {
		return graph.Entity{}, err
	}
	prev, err := tx.Entity(ctx, userID, entityID)
	exists := err == nil
	if err != nil && !errors.Is(err, graph.ErrNotFound) {
		return graph.Entity{}, err
	}
	if len(obs) == 0 {
		return prev, nil
	}
	sc, err := s.schemaFor(ctx, userID, obs[0].EntityType)
	if err != nil {
		return graph.Entity{}, err
	}
	red := Reduce(sc, obs)
	now := s.clock()
	e := graph.Entity{
		ID: entityID, UserID: userID, Type: sc.EntityType, SchemaVersion: sc.Version,
		CanonicalName: canonicalName(sc, red.Snapshot, entityID),
		Snapshot:      red.Snapshot, Provenance: red.Provenance, ObservationCount: red.ObservationCount,
		LastObservationAt: red.LastObservationAt, CreatedAt: now, ComputedAt: now,
	}
	if exists {
		e.CreatedAt, e.MergedInto, e.MergedAt = prev.CreatedAt, prev.MergedInto, prev.MergedAt
	}
	if err := tx.PutEntity(ctx, e); err != nil {
		return graph.Entity{}, err
	}
	if err := tx.SetIdentifiers(ctx, userID, entityID, identifiers(sc, e)); err != nil {
		return graph.Entity{}, err
	}
	sourceOf := make(map[string]string, len(obs))
	for _, o := range obs {
		sourceOf[o.ID] = o.SourceID
	}
	if err := tx.ReplaceTimelineEvents(ctx, userID, entityID, timelineEvents(sc, e, sourceOf)); err != nil {
		return graph.Entity{}, err
	}
	if err := s.enqueueEmbedding(ctx, tx, userID, entityID); err != nil {
		return graph.Entity{}, err
	}
	return e, nil
}

// oldContradictionsIn is contradictionsIn as it was.
func oldContradictionsIn(ctx context.Context, tx *graph.Tx, sc *schema.Schema, current graph.Entity, o graph.Observation, now time.Time) ([]Contradiction, error) {
	var out []Contradiction
	for _, name := range sortedKeys(o.Fields) {
		f, ok := sc.Fields[name]
		nv := o.Fields[name]
		if !ok || nv == nil || f.EffectivePolicy() == schema.MergeArray {
			continue
		}
		cv, ok := current.Snapshot[name]
		if !ok || cv == nil || equivalent(cv, nv) {
			continue
		}
		curObs, ok := current.Provenance[name]
		if !ok {
			continue
		}
		prev, err := tx.Observation(ctx, o.UserID, curObs)
		if err != nil {
			return nil, err
		}
		if prev.SourceID == o.SourceID {
			continue
		}
		out = append(out, Contradiction{
			ID: hashID("ctr_", o.UserID, o.ID, name), UserID: o.UserID, EntityID: current.ID, EntityType: current.Type, Field: name,
			CurrentValue: cv, CurrentObservationID: prev.ID, CurrentSourceID: prev.SourceID,
			NewValue: nv, NewObservationID: o.ID, NewSourceID: o.SourceID, DetectedAt: now, Status: ContradictionOpen,
		})
	}
	return out, nil
}

// TestStoreMatchesEntityByEntity runs the same random sequence of calls on
// two stores, one storing through Store and the other through oldStore,
// and checks that every call answers the same and that, at the end, every
// table holds the same rows and the same contradictions were recorded.
// The calls mix new and known entities (so that snapshots, contradictions
// and timelines change), the same entity twice in a call, unknown fields,
// priorities and observation times, repeated calls (deduplication),
// callers who may not read some types, merges, corrections, relationships
// and resolved contradictions (rejected observations no longer count).
func TestStoreMatchesEntityByEntity(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			bulk, single := openEquivEnv(t), openEquivEnv(t)
			rnd := rand.New(rand.NewPCG(seed, 11))
			script := newStoreScript(rnd)
			for step := range 120 {
				op := script.next(rnd)
				got := op(t.Context(), bulk, false)
				want := op(t.Context(), single, true)
				if os.Getenv("EQUIV_DEBUG") != "" {
					t.Logf("step %d: %.150v", step, want)
				}
				if d := gocmp.Diff(want, got); d != "" {
					t.Fatalf("step %d: the answers differ (-entity by entity +bulk):\n%s", step, d)
				}
				bulk.clock.advance(time.Second)
				single.clock.advance(time.Second)
			}
			wantRows, gotRows := dumpTables(t, single.db), dumpTables(t, bulk.db)
			if d := gocmp.Diff(wantRows, gotRows); d != "" {
				t.Errorf("the stores differ (-entity by entity +bulk):\n%s", d)
			}
			if d := gocmp.Diff(single.contradictions.all(), bulk.contradictions.all()); d != "" {
				t.Errorf("the contradictions differ (-entity by entity +bulk):\n%s", d)
			}
			if len(wantRows["entity_search (terms)"]) == 0 {
				t.Error("the search index holds no terms: comparing it proves nothing")
			}
			if n := len(gotRows["observations"]); n < 300 {
				t.Errorf("only %d observations: the script exercises too little", n)
			}
			if n := len(bulk.contradictions.all()); n < 10 {
				t.Errorf("only %d contradictions: the script exercises too little", n)
			}
		})
	}
}

// equivEnv is one store of TestStoreMatchesEntityByEntity.
type equivEnv struct {
	db             *sqlite.DB
	svc            *Service
	clock          *stepClock
	contradictions *memContradictions
}

func openEquivEnv(t *testing.T) *equivEnv {
	t.Helper()
	db := sqlitetest.Open(t)
	g := graph.NewStore(embedded.New(db))
	t.Cleanup(func() {
		g.Close()
	})
	env := &equivEnv{db: db, clock: &stepClock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}, contradictions: &memContradictions{}}
	env.svc = NewService(g, schema.NewRegistry(), Options{
		Now: env.clock.now, Contradictions: env.contradictions,
		EntityEmbeddings: vector.NewEntityStore(vembedded.New(db)),
	})
	return env
}

// stepClock is a clock that moves only when told.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *stepClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// storeOp is one call of the script, run on env; single selects oldStore
// for store calls. It returns what the call answered, errors as text.
type storeOp func(ctx context.Context, env *equivEnv, single bool) any

// storeScript draws random calls over a small pool of identities, so that
// calls keep meeting entities stored before.
type storeScript struct {
	past [][]map[string]any
	// ids are the entities stored so far, in the order first stored, and
	// types their types.
	ids   []string
	types map[string]string
}

func newStoreScript(*rand.Rand) *storeScript { return &storeScript{types: map[string]string{}} }

var (
	scriptAlice = Caller{UserID: "user-alice", AgentID: "agent"}
	scriptBob   = Caller{UserID: "user-bob", AgentID: "agent"}
	// scriptNoCompanies may do anything but read companies.
	scriptNoCompanies = Caller{UserID: "user-alice", AgentID: "agent", Allowed: func(a Action, r string) bool {
		return !(a == Read && r == EntityResource("company"))
	}}
)

func pick[T any](rnd *rand.Rand, xs ...T) T { return xs[rnd.IntN(len(xs))] }

// entity returns a random entity of the pool.
func (sc *storeScript) entity(rnd *rand.Rand) map[string]any {
	n := rnd.IntN(12)
	var e map[string]any
	switch rnd.IntN(4) {
	case 0:
		e = map[string]any{"entity_type": "person", "name": fmt.Sprintf("Person %d", n),
			"company": pick(rnd, "Acme", "Globex", "Initech"), "email": fmt.Sprintf("p%d@example.com", n)}
		if rnd.IntN(3) == 0 {
			e["birth_date"] = pick(rnd, "1980-01-02", "1990-05-06")
		}
	case 1:
		e = map[string]any{"entity_type": "company", "name": fmt.Sprintf("Company %d", n),
			"industry": pick(rnd, "rockets", "anvils", "ROCKETS "), "aliases": []any{pick(rnd, "A", "B", "C")}}
		if rnd.IntN(3) == 0 {
			e["employees"] = pick[any](rnd, json.Number("10"), 12.5, 10.0)
		}
	case 2:
		e = map[string]any{"entity_type": "note", "title": fmt.Sprintf("Note %d", n),
			"content": pick(rnd, "short", "a longer text", "other"), "created_date": pick(rnd, "2025-01-01", "2025-02-03T10:00:00Z")}
	default:
		e = map[string]any{"entity_type": "task", "title": fmt.Sprintf("Task %d", n),
			"status": pick(rnd, "todo", "done"), "due_date": pick(rnd, "2026-04-01", "2026-05-01")}
	}
	if rnd.IntN(4) == 0 {
		e["mood"] = pick[any](rnd, "happy", 3, []any{"x"})
	}
	return e
}

// next draws the next call.
func (sc *storeScript) next(rnd *rand.Rand) storeOp {
	switch r := rnd.IntN(100); {
	case r < 8 && len(sc.ids) > 2:
		from := pick(rnd, sc.ids...)
		var same []string
		for _, id := range sc.ids {
			if sc.types[id] == sc.types[from] && id != from {
				same = append(same, id)
			}
		}
		to := from
		if len(same) > 0 {
			to = pick(rnd, same...)
		}
		return func(ctx context.Context, env *equivEnv, _ bool) any {
			res, err := env.svc.MergeEntities(ctx, scriptAlice, from, to, "same")
			return answer(res, err)
		}
	case r < 14 && len(sc.ids) > 2:
		from, to := pick(rnd, sc.ids...), pick(rnd, sc.ids...)
		typ := pick(rnd, graph.RefersTo, graph.PartOf)
		return func(ctx context.Context, env *equivEnv, _ bool) any {
			rel, created, err := env.svc.CreateRelationship(ctx, scriptAlice, RelationshipRequest{Type: typ, SourceEntityID: from, TargetEntityID: to})
			return answer([]any{rel, created}, err)
		}
	case r < 20:
		resolution := pick(rnd, Reject, Reject, Confirm, KeepBoth)
		k := rnd.IntN(5)
		return func(ctx context.Context, env *equivEnv, _ bool) any {
			open, err := env.svc.OpenContradictions(ctx, scriptAlice)
			if err != nil || len(open) == 0 {
				return answer(open, err)
			}
			res, err := env.svc.ResolveContradiction(ctx, scriptAlice, open[k%len(open)].ID, resolution)
			return answer(res, err)
		}
	case r < 24 && len(sc.ids) > 0:
		id := pick(rnd, sc.ids...)
		typ := sc.types[id]
		field := map[string]string{"person": "company", "company": "industry", "note": "content", "task": "status"}[typ]
		return func(ctx context.Context, env *equivEnv, _ bool) any {
			res, err := env.svc.Correct(ctx, scriptAlice, CorrectRequest{EntityID: id, EntityType: typ, Field: field, Value: "Fixed"})
			return answer(res, err)
		}
	}
	var entities []map[string]any
	if len(sc.past) > 0 && rnd.IntN(8) == 0 {
		entities = pick(rnd, sc.past...)
	} else {
		for range 1 + rnd.IntN(12) {
			entities = append(entities, sc.entity(rnd))
		}
		if rnd.IntN(5) == 0 {
			entities = append(entities, entities[0])
		}
		sc.past = append(sc.past, entities)
	}
	req := StoreRequest{Entities: entities}
	if rnd.IntN(4) == 0 {
		p := rnd.IntN(200)
		req.SourcePriority = &p
	}
	if rnd.IntN(4) == 0 {
		req.Provenance = map[string]any{"extracted_at": pick(rnd, "2025-06-01T00:00:00Z", "2027-01-01T00:00:00Z")}
	}
	caller := pick(rnd, scriptAlice, scriptAlice, scriptAlice, scriptNoCompanies, scriptBob)
	return func(ctx context.Context, env *equivEnv, single bool) any {
		store := env.svc.Store
		if single {
			store = env.svc.oldStore
		}
		res, err := store(ctx, caller, req)
		if err == nil && caller.UserID == scriptAlice.UserID && single {
			for _, e := range res.Entities {
				if !slices.Contains(sc.ids, e.EntityID) {
					sc.ids = append(sc.ids, e.EntityID)
					sc.types[e.EntityID] = e.EntityType
				}
			}
		}
		return answer(res, err)
	}
}

// answer is what a call answered, comparable with go-cmp: its JSON, so
// that pointers (StoredEntity.Created) compare by what they point to.
func answer(v any, err error) any {
	if err != nil {
		return "error: " + err.Error()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("unencodable %T: %v", v, err)
	}
	return string(b)
}

// dumpTables returns every row of every table of db but the migrations'
// bookkeeping and the FTS5 index's own storage (entity_search_data, _idx
// and _docsize: how the index happens to be laid out after a different
// sequence of writes; what it indexes is compared instead as its
// fts5vocab instances: each term with the document, column and offset),
// each row as text, sorted.
func dumpTables(t *testing.T, db *sqlite.DB) map[string][]string {
	t.Helper()
	ctx := t.Context()
	rows, err := db.Read.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'
		AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%_fts%' AND name NOT IN ('cairn_schema_migrations', 'cairn_write_probe', 'entity_search_data', 'entity_search_idx', 'entity_search_docsize', 'graph_changes')`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, table := range tables {
		out[table] = dumpTable(t, db.Read, table)
	}
	out["entity_search (terms)"] = dumpSearchTerms(t, db.Write)
	out["graph_changes (distinct)"] = dumpChanges(t, db.Read)
	return out
}

// dumpChanges lists what the change log says changed, once each: the two
// ways of storing make different transactions (so the log's order, times
// and repetitions differ) but must change the same things.
func dumpChanges(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), `SELECT DISTINCT user_id, entity_id, entity_type, kind, related_id, period FROM graph_changes
		ORDER BY user_id, entity_id, entity_type, kind, related_id, period`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c [6]string
		if err := rows.Scan(&c[0], &c[1], &c[2], &c[3], &c[4], &c[5]); err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Join(c[:], " | "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// dumpSearchTerms returns what the entity search index holds, whatever its
// layout: every term with its document, column and offset.
func dumpSearchTerms(t *testing.T, db *sql.DB) []string {
	t.Helper()
	ctx := t.Context()
	conn, err := db.Conn(ctx) // a temp table lives on one connection
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_terms USING fts5vocab(main, entity_search, instance)`); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.QueryContext(ctx, `SELECT term, doc, col, offset FROM temp.search_terms`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var term, col string
		var doc, offset int64
		if err := rows.Scan(&term, &doc, &col, &offset); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d %s %d", term, doc, col, offset))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func dumpTable(t *testing.T, db *sql.DB, table string) []string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), `SELECT * FROM `+table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for i, v := range vals {
			if b.Len() > 0 {
				b.WriteString(" | ")
			}
			fmt.Fprintf(&b, "%s=%v", cols[i], v)
		}
		out = append(out, b.String())
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// memContradictions is a ContradictionStore in memory.
type memContradictions struct {
	mu       sync.Mutex
	byID     map[string]Contradiction
	rejected map[string]bool
}

func (m *memContradictions) AddContradictions(_ context.Context, cs []Contradiction) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byID == nil {
		m.byID = map[string]Contradiction{}
	}
	for _, c := range cs {
		if _, ok := m.byID[c.ID]; !ok {
			m.byID[c.ID] = c
		}
	}
	return nil
}

func (m *memContradictions) all() []Contradiction {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Contradiction, 0, len(m.byID))
	for _, c := range m.byID {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Contradiction) int {
		return cmp.Or(a.DetectedAt.Compare(b.DetectedAt), cmp.Compare(a.ID, b.ID))
	})
	return out
}

func (m *memContradictions) OpenContradictions(_ context.Context, userID string, types []string, limit int) ([]Contradiction, error) {
	var out []Contradiction
	for _, c := range m.all() {
		if c.UserID == userID && c.Status == ContradictionOpen && (types == nil || slices.Contains(types, c.EntityType)) && len(out) < limit {
			out = append(out, c)
		}
	}
	return out, nil
}

func (m *memContradictions) Contradiction(_ context.Context, userID, id string) (Contradiction, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.byID[id]
	if !ok || c.UserID != userID {
		return Contradiction{}, ErrContradictionNotFound
	}
	return c, nil
}

func (m *memContradictions) ResolveContradiction(_ context.Context, r Contradiction) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byID[r.ID].Status == ContradictionResolved {
		return ErrContradictionResolved
	}
	m.byID[r.ID] = r
	if r.Resolution == Reject {
		if m.rejected == nil {
			m.rejected = map[string]bool{}
		}
		m.rejected[r.UserID+"/"+r.NewObservationID] = true
	}
	return nil
}

func (m *memContradictions) RejectedObservations(_ context.Context, userID string, ids []string) (map[string]bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]bool{}
	for _, id := range ids {
		if m.rejected[userID+"/"+id] {
			out[id] = true
		}
	}
	return out, nil
}

func (m *memContradictions) ForgetContradictions(_ context.Context, userID string, ids []string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for id, c := range m.byID {
		if c.UserID == userID && slices.Contains(ids, c.NewObservationID) {
			delete(m.byID, id)
			n++
		}
	}
	for _, id := range ids {
		delete(m.rejected, userID+"/"+id)
	}
	return n, nil
}

func (m *memContradictions) CloseRetracted(_ context.Context, userID string, ids []string, at time.Time, by string) ([]Contradiction, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Contradiction
	for id, c := range m.byID {
		if c.UserID == userID && c.Status == ContradictionOpen && (slices.Contains(ids, c.CurrentObservationID) || slices.Contains(ids, c.NewObservationID)) {
			c.Status, c.Resolution, c.ResolvedAt, c.ResolvedBy = ContradictionResolved, Retracted, at, by
			m.byID[id] = c
			out = append(out, c)
		}
	}
	return out, nil
}

func (m *memContradictions) RetractedContradictions(_ context.Context, userID string, ids []string) ([]Contradiction, error) {
	var out []Contradiction
	for _, c := range m.all() {
		if c.UserID == userID && c.Resolution == Retracted && (slices.Contains(ids, c.CurrentObservationID) || slices.Contains(ids, c.NewObservationID)) {
			out = append(out, c)
		}
	}
	return out, nil
}

// ReopenRetracted keeps no retractions, so it opens every one of ids
// resolved as Retracted.
func (m *memContradictions) ReopenRetracted(_ context.Context, userID string, ids []string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, id := range ids {
		if c, ok := m.byID[id]; ok && c.UserID == userID && c.Resolution == Retracted {
			c.Status, c.Resolution, c.ResolvedAt, c.ResolvedBy = ContradictionOpen, "", time.Time{}, ""
			m.byID[id] = c
			out = append(out, id)
		}
	}
	return out, nil
}
