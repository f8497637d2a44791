package knowledge_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/migrations"
)

// memories is a test MemoryIndex over a slice, filtering by consent as the
// memory store must.
type memories []knowledge.MemorySummary

func (m memories) Collections(_ context.Context, c knowledge.Caller) ([]knowledge.MemoryCollection, error) {
	counts := map[string]int{}
	for _, mem := range m {
		if c.May(knowledge.Read, knowledge.MemoryResource(mem.Collection)) {
			counts[mem.Collection]++
		}
	}
	var out []knowledge.MemoryCollection
	for name, n := range counts {
		out = append(out, knowledge.MemoryCollection{Name: name, Count: n})
	}
	return out, nil
}

func (m memories) Recent(_ context.Context, c knowledge.Caller, n int) ([]knowledge.MemorySummary, error) {
	var out []knowledge.MemorySummary
	for _, mem := range m {
		if c.May(knowledge.Read, knowledge.MemoryResource(mem.Collection)) {
			out = append(out, mem)
		}
	}
	slices.SortFunc(out, func(a, b knowledge.MemorySummary) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out[:min(n, len(out))], nil
}

// contextEnv is a service wired as cmd/cairn wires it, with direct access
// to its graph for bulk set-up.
type contextEnv struct {
	svc   *knowledge.Service
	graph *graph.Store
	clock *clock
	db    *sqlite.DB
}

func newContextEnv(t testing.TB, mem knowledge.MemoryIndex) *contextEnv {
	t.Helper()
	db, g := openEmbedded(t)
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	control := controlplane.New(db.Write, migrations.SQLite)
	svc := knowledge.NewService(g, schema.NewRegistry(), knowledge.Options{
		Now: clk.Now, Profiles: control, Contradictions: control.WithReader(db.Read), MemoryIndex: mem,
	})
	return &contextEnv{svc: svc, graph: g, clock: clk, db: db}
}

func userContext(t testing.TB, s *knowledge.Service, c knowledge.Caller, req knowledge.ContextRequest) knowledge.UserContext {
	t.Helper()
	out, err := s.UserContext(context.Background(), c, req)
	if err != nil {
		t.Fatal(err)
	}
	checkBudget(t, out)
	return out
}

// checkBudget proves the budget: the JSON the caller receives, counted as
// ceil(bytes/3), is what tokens_used says and no more than the budget.
func checkBudget(t testing.TB, out knowledge.UserContext) {
	t.Helper()
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := (len(b) + 2) / 3; got != out.TokensUsed || got > out.BudgetTokens {
		t.Fatalf("response is %d bytes = %d tokens; tokens_used says %d, budget %d", len(b), got, out.TokensUsed, out.BudgetTokens)
	}
}

func entityNames(out knowledge.UserContext) []string {
	var names []string
	for _, e := range out.Entities {
		names = append(names, e.Name)
	}
	return names
}

func TestUserContextSections(t *testing.T) {
	env := newContextEnv(t, nil)
	s, ctx := env.svc, t.Context()
	if _, _, err := s.UpdateProfile(ctx, alice, map[string]any{"name": "Alice", "city": "Lyon"}, "intro"); err != nil {
		t.Fatal(err)
	}
	acme := store(t, s, alice, map[string]any{"entity_type": "company", "name": "Acme", "industry": "anvils"}).Entities[0].EntityID
	env.clock.Advance(time.Hour)
	store(t, s, alice, map[string]any{"entity_type": "company", "name": "Acme", "domain": "acme.test"})
	for _, name := range []string{"Bob", "Carol"} {
		p := store(t, s, alice, map[string]any{"entity_type": "person", "name": name, "company": "Acme"}).Entities[0].EntityID
		if _, _, err := s.CreateRelationship(ctx, alice, knowledge.RelationshipRequest{Type: graph.PartOf, SourceEntityID: p, TargetEntityID: acme}); err != nil {
			t.Fatal(err)
		}
	}
	store(t, s, alice, map[string]any{"entity_type": "note", "title": "Rocket launch ideas", "content": "fuel, fins"})
	store(t, s, bob, map[string]any{"entity_type": "company", "name": "Bob's secret"})

	out := userContext(t, s, alice, knowledge.ContextRequest{})
	if out.BudgetTokens != knowledge.DefaultContextBudget || out.Truncated {
		t.Errorf("budget %d, truncated %v; want the default and nothing cut", out.BudgetTokens, out.Truncated)
	}
	if out.Profile["city"] != "Lyon" || out.Profile["name"] != "Alice" {
		t.Errorf("profile = %v", out.Profile)
	}
	counts := map[string]int{}
	for _, tc := range out.EntityTypes {
		counts[tc.EntityType] = tc.Count
	}
	if counts["company"] != 1 || counts["person"] != 2 || counts["note"] != 1 || counts["invoice"] != 0 || out.EntityTypes[0].EntityType != "person" {
		t.Errorf("inventory = %+v", out.EntityTypes)
	}
	if names := entityNames(out); len(names) != 4 || names[0] != "Acme" || slices.Contains(names, "Bob's secret") {
		t.Errorf("entities = %v; want Acme first (two observations, two relationships), and nothing of bob's", names)
	}
	if out.Entities[0].Facts["industry"] != "anvils" || out.Entities[0].Facts["domain"] != "acme.test" {
		t.Errorf("Acme's facts = %v", out.Entities[0].Facts)
	}
	if _, dup := out.Entities[0].Facts["name"]; dup {
		t.Errorf("the name is repeated as a fact")
	}
	if out.Memories.Available || len(out.Memories.Collections) != 0 || len(out.Memories.Recent) != 0 ||
		!slices.ContainsFunc(out.Notes, func(n string) bool { return strings.Contains(n, "no memory store") }) {
		t.Errorf("memories = %+v, notes %v; want an empty, unavailable section that says so", out.Memories, out.Notes)
	}

	topical := userContext(t, s, alice, knowledge.ContextRequest{Topic: "rocket launch"})
	if names := entityNames(topical); names[0] != "Rocket launch ideas" {
		t.Errorf("with topic: %v, want the rocket note first", names)
	}
	if topical.Topic != "rocket launch" {
		t.Errorf("topic = %q", topical.Topic)
	}
}

func TestUserContextConsent(t *testing.T) {
	mem := memories{
		{ID: "mem_1", Collection: "notes", Title: "likes tea", Text: "Alice likes green tea", CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{ID: "mem_2", Collection: "health", Text: "private", CreatedAt: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)},
	}
	env := newContextEnv(t, mem)
	s := env.svc
	store(t, s, alice, map[string]any{"entity_type": "company", "name": "Acme"})
	store(t, s, alice, map[string]any{"entity_type": "person", "name": "Dana"})
	if _, err := s.UserContext(t.Context(), only("read:"+knowledge.EntityResource("person")), knowledge.ContextRequest{}); !errors.Is(err, knowledge.ErrForbidden) {
		t.Errorf("without profile read: err = %v, want ErrForbidden", err)
	}
	c := alice
	c.Allowed = func(_ knowledge.Action, r string) bool {
		return r == knowledge.ResourceProfile || r == knowledge.EntityResource("person") || r == knowledge.MemoryResource("notes")
	}
	out := userContext(t, s, c, knowledge.ContextRequest{})
	if names := entityNames(out); len(names) != 1 || names[0] != "Dana" {
		t.Errorf("entities = %v, want only the person", names)
	}
	for _, tc := range out.EntityTypes {
		if tc.EntityType != "person" {
			t.Errorf("inventory shows %s", tc.EntityType)
		}
	}
	if !out.Memories.Available || len(out.Memories.Collections) != 1 || out.Memories.Collections[0].Name != "notes" ||
		len(out.Memories.Recent) != 1 || out.Memories.Recent[0].Text != "Alice likes green tea" {
		t.Errorf("memories = %+v, want only the notes collection", out.Memories)
	}
	profileOnly := userContext(t, s, only("read:"+knowledge.ResourceProfile), knowledge.ContextRequest{})
	if len(profileOnly.Entities) != 0 || len(profileOnly.EntityTypes) != 0 || len(profileOnly.Memories.Recent) != 0 || profileOnly.Omitted.Entities != 0 {
		t.Errorf("a caller who may read only the profile sees %+v", profileOnly)
	}
	if _, err := s.UserContext(t.Context(), alice, knowledge.ContextRequest{BudgetTokens: 50}); !errors.Is(err, knowledge.ErrValidation) {
		t.Errorf("budget 50: err = %v, want a validation error", err)
	}
}

// TestUserContextTypesOnly checks the inventory a completion loads alone:
// the same types and counts as a whole context load at its largest budget,
// for the owner and for a caller limited to some types, with no profile,
// memory or entity, and every entity counted as left out; without profile
// read (which a whole load needs) it shows the types the caller may read.
func TestUserContextTypesOnly(t *testing.T) {
	env := newContextEnv(t, memories{{ID: "mem_1", Collection: "notes", Text: "Alice likes green tea", CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}})
	s := env.svc
	for i := range 3 {
		store(t, s, alice, map[string]any{"entity_type": "company", "name": fmt.Sprintf("Acme %d", i)})
	}
	store(t, s, alice, map[string]any{"entity_type": "person", "name": "Dana"})
	store(t, s, alice, map[string]any{"entity_type": "recipe", "name": "Lasagna", "servings": 4})
	narrow := alice
	narrow.Allowed = func(_ knowledge.Action, r string) bool {
		return r == knowledge.ResourceProfile || r == knowledge.EntityResource("person") || r == knowledge.EntityResource("recipe")
	}
	for name, c := range map[string]knowledge.Caller{"owner": alice, "narrow": narrow} {
		whole := userContext(t, s, c, knowledge.ContextRequest{BudgetTokens: knowledge.MaxContextBudget})
		types := userContext(t, s, c, knowledge.ContextRequest{BudgetTokens: knowledge.MaxContextBudget, TypesOnly: true})
		if diff := gocmp.Diff(whole.EntityTypes, types.EntityTypes); diff != "" || len(types.EntityTypes) == 0 {
			t.Errorf("%s: types only differ from the whole load's (-whole +types):\n%s", name, diff)
		}
		if len(types.Entities) != 0 || len(types.Profile) != 0 || len(types.Memories.Recent) != 0 || types.Omitted.Entities != whole.Omitted.Entities+len(whole.Entities) {
			t.Errorf("%s: types only returned more than the inventory: %+v", name, types)
		}
	}
	noProfile := only("read:" + knowledge.EntityResource("person"))
	if _, err := s.UserContext(t.Context(), noProfile, knowledge.ContextRequest{}); !errors.Is(err, knowledge.ErrForbidden) {
		t.Errorf("a whole load without profile read: err = %v, want ErrForbidden", err)
	}
	types, err := s.UserContext(t.Context(), noProfile, knowledge.ContextRequest{TypesOnly: true})
	if err != nil || len(types.EntityTypes) != 1 || types.EntityTypes[0].EntityType != "person" || types.EntityTypes[0].Count != 1 || len(types.Profile) != 0 {
		t.Errorf("the types alone without profile read = %+v, %v; want person (1) and nothing else", types.EntityTypes, err)
	}
}

// bulkEntities writes n entities of a few types, with relationships,
// through the graph API (the store pipeline would take minutes), with
// observation times spread over a year.
func bulkEntities(t testing.TB, g *graph.Store, user string, n int, now time.Time) {
	t.Helper()
	types := []string{"company", "person", "task", "note"}
	const batch = 5000
	for start := 0; start < n; start += batch {
		err := g.Update(context.Background(), func(tx *graph.Tx) error {
			for i := start; i < min(start+batch, n); i++ {
				typ := types[i%len(types)]
				name := fmt.Sprintf("%s %d", typ, i)
				at := now.Add(-time.Duration(i%365) * 24 * time.Hour)
				if err := tx.PutEntity(context.Background(), graph.Entity{
					ID: fmt.Sprintf("ent_bulk%06d", i), UserID: user, Type: typ, CanonicalName: name, SchemaVersion: "1.0",
					Snapshot: map[string]any{"name": name, "description": strings.Repeat(fmt.Sprintf("detail %d ", i), 1+i%40),
						"status": "open", "employees": json.Number(fmt.Sprint(i % 500))},
					ObservationCount: 1 + i%7, LastObservationAt: at, CreatedAt: at, ComputedAt: at,
				}); err != nil {
					return err
				}
				if i > 0 && i%3 == 0 {
					src, dst := fmt.Sprintf("ent_bulk%06d", i), fmt.Sprintf("ent_bulk%06d", i/3)
					if err := tx.PutRelationship(context.Background(), graph.Relationship{
						ID: graph.RelationshipID(graph.RefersTo, src, dst), UserID: user, Type: graph.RefersTo,
						SourceEntityID: src, TargetEntityID: dst, CreatedAt: at, LastObservationAt: at,
					}); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func bulkMemories(n int, now time.Time) memories {
	out := make(memories, n)
	for i := range out {
		out[i] = knowledge.MemorySummary{
			ID: fmt.Sprintf("mem_%06d", i), Collection: fmt.Sprintf("collection-%d", i%12),
			Title: fmt.Sprintf("memory %d", i), Text: strings.Repeat(fmt.Sprintf("remembered fact %d. ", i), 1+i%60),
			CreatedAt: now.Add(-time.Duration(i) * time.Minute),
		}
	}
	return out
}

// TestUserContextBudgetAtScale stores 10,000 entities (scaled to the tests'
// context limits: knowledge.Scaled) and 10,000 memories and checks, for budgets from the minimum to the maximum, that the
// response never exceeds its budget, that names come before facts, and that
// what was left out is counted.
func TestUserContextBudgetAtScale(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	env := newContextEnv(t, bulkMemories(10_000, now))
	knowledge.WithTestLimits(env.svc)
	entities := knowledge.Scaled(10_000)
	bulkEntities(t, env.graph, alice.UserID, entities-1, now)
	// One old, once-observed entity that a topic should still bring up.
	env.clock.Advance(-200 * 24 * time.Hour)
	store(t, env.svc, alice, map[string]any{"entity_type": "note", "title": "Quarterly rocket launch plan", "content": "fuel and fins"})
	env.clock.Advance(200 * 24 * time.Hour)
	profile := map[string]any{"bio": strings.Repeat("loves climbing ", 200)}
	for i := range 30 {
		profile[fmt.Sprintf("pref_%02d", i)] = fmt.Sprintf("value %d", i)
	}
	if _, _, err := env.svc.UpdateProfile(t.Context(), alice, profile, "bulk"); err != nil {
		t.Fatal(err)
	}
	type load struct {
		budget int
		topic  string
	}
	var loads []load
	for _, budget := range []int{knowledge.MinContextBudget, 500, 1000, knowledge.DefaultContextBudget, 4000, knowledge.MaxContextBudget} {
		for _, topic := range []string{"", "rocket launch"} {
			loads = append(loads, load{budget, topic})
		}
	}
	if raceEnabled && entities == 10_000 {
		// Each load takes seconds under the race detector; keep the two
		// that cover the most code.
		loads = []load{{knowledge.MinContextBudget, ""}, {knowledge.DefaultContextBudget, "rocket launch"}}
	}
	for _, l := range loads {
		budget, topic := l.budget, l.topic
		t.Run(fmt.Sprintf("budget=%d/topic=%q", budget, topic), func(t *testing.T) {
			out := userContext(t, env.svc, alice, knowledge.ContextRequest{BudgetTokens: budget, Topic: topic})
			shownFacts := false
			for _, e := range out.Entities {
				shownFacts = shownFacts || len(e.Facts) > 0
			}
			if shownFacts && len(out.Entities) != knowledge.ContextTopEntities {
				t.Errorf("facts shown with only %d of %d names", len(out.Entities), knowledge.ContextTopEntities)
			}
			if shownFacts && len(out.Memories.Recent) != knowledge.ContextRecentMemories {
				t.Errorf("entity facts shown before all %d memory titles (%d)", knowledge.ContextRecentMemories, len(out.Memories.Recent))
			}
			if got := len(out.Entities) + out.Omitted.Entities; got != entities {
				t.Errorf("entities shown + omitted = %d, want %d", got, entities)
			}
			if got := len(out.Memories.Recent) + out.Omitted.Memories; got != knowledge.ContextRecentMemories {
				t.Errorf("memories shown + omitted = %d, want %d", got, knowledge.ContextRecentMemories)
			}
			if got := len(out.Profile) + out.Omitted.ProfileMembers; got != len(profile) {
				t.Errorf("profile members shown + omitted = %d, want %d", got, len(profile))
			}
			if budget == knowledge.MinContextBudget && !out.Truncated {
				t.Errorf("the minimum budget held everything?")
			}
			if budget == knowledge.MaxContextBudget && (len(out.Entities) != knowledge.ContextTopEntities || out.Memories.Recent[0].ID != "mem_000000") {
				t.Errorf("the largest budget shows %d entities, first memory %+v", len(out.Entities), out.Memories.Recent)
			}
			if topic != "" && budget >= knowledge.DefaultContextBudget && out.Entities[0].Name != "Quarterly rocket launch plan" {
				t.Errorf("topic %q: first entity %q", topic, out.Entities[0].Name)
			}
		})
	}
}

// waitingProfiles is a profile store whose reads wait for their context to
// end and report that.
type waitingProfiles struct{ knowledge.ProfileStore }

func (waitingProfiles) Profile(ctx context.Context, _ string) (knowledge.Profile, error) {
	<-ctx.Done()
	return knowledge.Profile{}, ctx.Err()
}

// TestUserContextReportsTheGraphError checks that when the graph read
// fails, the error returned is the graph's, not the cancellation that the
// failure caused in the parts read beside it.
func TestUserContextReportsTheGraphError(t *testing.T) {
	db, g := openEmbedded(t)
	svc := knowledge.NewService(g, schema.NewRegistry(), knowledge.Options{Profiles: waitingProfiles{}})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := svc.UserContext(t.Context(), alice, knowledge.ContextRequest{Topic: "rocket"})
	if err == nil || errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "profile") {
		t.Fatalf("UserContext with a closed graph store = %v, want the graph's error", err)
	}
}
