package knowledge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// schemaServices runs fn with a service on every graph backend, over the
// in-memory schema store (the control plane's is tested in controlplane).
func schemaServices(t *testing.T, fn func(t *testing.T, s *knowledge.Service, c *clock)) {
	for _, b := range knowledge.GraphBackends {
		t.Run(b.Name, func(t *testing.T) {
			c := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
			fn(t, knowledge.NewService(b.Open(t), schema.NewRegistry(), knowledge.Options{Now: c.Now}), c)
		})
	}
}

func recipe(name string, extra map[string]any) map[string]any {
	e := map[string]any{"entity_type": "recipe", "name": name}
	for k, v := range extra {
		e[k] = v
	}
	return e
}

func TestStoreUnknownTypeCreatesUserSchema(t *testing.T) {
	schemaServices(t, func(t *testing.T, s *knowledge.Service, clk *clock) {
		ctx := t.Context()
		res := store(t, s, alice, recipe("Pad Thai", map[string]any{"cuisine": "thai", "servings": json.Number("2")}))
		if len(res.SchemasCreated) != 1 || res.SchemasCreated[0].EntityType != "recipe" || res.SchemasCreated[0].Version != "1.0" {
			t.Fatalf("schemas created = %+v, want recipe 1.0", res.SchemasCreated)
		}
		sc := res.SchemasCreated[0]
		if diff := cmp.Diff([]string{"name"}, sc.IdentityFields); diff != "" || sc.Owner != alice.UserID {
			t.Errorf("inferred schema %+v (identity -want +got):\n%s", sc, diff)
		}
		// Every field of the first store, typed by its value.
		wantFields := map[string]schema.Field{
			"name":     {Type: schema.TypeString, Identifier: true, Description: "Identifies the record (inferred)."},
			"cuisine":  {Type: schema.TypeString, Inferred: true, Description: "Inferred from the first store of the type."},
			"servings": {Type: schema.TypeNumber, Inferred: true, Description: "Inferred from the first store of the type."},
		}
		if diff := cmp.Diff(wantFields, sc.Fields); diff != "" {
			t.Errorf("inferred fields (-want +got):\n%s", diff)
		}
		if res.UnknownFieldsCount != 0 || res.Entities[0].EntityType != "recipe" {
			t.Errorf("result = %+v, want a recipe and no unknown field", res)
		}
		// The same name is the same entity; the schema is not created
		// again; a field it lacks is kept raw, and a value that does not
		// fit an inferred field is kept raw too rather than refused.
		clk.Advance(time.Minute)
		again := store(t, s, alice, recipe("pad thai", map[string]any{"cuisine": "Thai", "rating": json.Number("5"), "servings": "a few"}))
		if len(again.SchemasCreated) != 0 || again.Entities[0].EntityID != res.Entities[0].EntityID || again.UnknownFieldsCount != 2 {
			t.Errorf("second store = %+v, want the same entity, no new schema, 2 unknown fields", again)
		}
		snap, err := s.EntitySnapshot(ctx, alice, res.Entities[0].EntityID, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if snap.Entity.Snapshot["cuisine"] != "Thai" || snap.Entity.Snapshot["servings"] != json.Number("2") {
			t.Errorf("snapshot = %v, want cuisine Thai and servings 2", snap.Entity.Snapshot)
		}
		raw, err := s.RawFields(ctx, alice, snap.Entity)
		if err != nil {
			t.Fatal(err)
		}
		// servings has a value in the snapshot: "a few" stays in the
		// record of what came in, not shown beside it.
		if diff := cmp.Diff(map[string]any{"rating": json.Number("5")}, raw); diff != "" {
			t.Errorf("raw fields (-want +got):\n%s", diff)
		}
		soup := store(t, s, alice, recipe("Soup", map[string]any{"servings": "a few"}))
		snap, err = s.EntitySnapshot(ctx, alice, soup.Entities[0].EntityID, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if raw, err := s.RawFields(ctx, alice, snap.Entity); err != nil || fmt.Sprint(raw) != "map[servings:a few]" {
			t.Errorf("soup's raw fields = %v, %v; want servings, which its snapshot lacks", raw, err)
		}
		// Type names are normalised.
		norm := store(t, s, alice, map[string]any{"entity_type": "Recipe", "name": "Laksa"})
		if norm.Entities[0].EntityType != "recipe" || len(norm.SchemasCreated) != 0 {
			t.Errorf("Recipe stored as %+v", norm)
		}
		// Bob never sees alice's schema; his first recipe creates his own.
		if types, err := s.EntityTypes(ctx, bob, "recipe"); err != nil || len(types.Matches) != 0 {
			t.Errorf("bob's types for recipe = %+v, %v; want none", types.Matches, err)
		}
		b := store(t, s, bob, map[string]any{"entity_type": "recipe", "title": "Soup"})
		if len(b.SchemasCreated) != 1 || b.SchemasCreated[0].IdentityFields[0] != "title" {
			t.Errorf("bob's recipe schema = %+v, want his own, identified by title", b.SchemasCreated)
		}
		at, _, err := s.Schemas().Lookup(ctx, alice.UserID, "recipe")
		if err != nil || at.IdentityFields[0] != "name" {
			t.Errorf("alice's recipe schema after bob's = %+v, %v", at, err)
		}
	})
}

func TestTwoUsersRegisterSameTypeNameApart(t *testing.T) {
	schemaServices(t, func(t *testing.T, s *knowledge.Service, clk *clock) {
		ctx := t.Context()
		reg := func(c knowledge.Caller, field string) {
			t.Helper()
			_, err := s.RegisterSchema(ctx, c, knowledge.RegisterSchemaRequest{Activate: true, Schema: &schema.Schema{
				EntityType: "medication", Fields: map[string]schema.Field{"name": {Type: schema.TypeString}, field: {Type: schema.TypeString}},
				IdentityFields: []string{"name"}, NameFields: []string{"name"},
			}})
			if err != nil {
				t.Fatal(err)
			}
		}
		reg(alice, "dose")
		reg(bob, "pharmacy")
		for _, tt := range []struct {
			c          knowledge.Caller
			has, hasnt string
		}{{alice, "dose", "pharmacy"}, {bob, "pharmacy", "dose"}} {
			sc, ok, err := s.Schemas().Lookup(ctx, tt.c.UserID, "medication")
			if err != nil || !ok {
				t.Fatalf("lookup: %v %v", ok, err)
			}
			if _, ok := sc.Fields[tt.has]; !ok {
				t.Errorf("%s's medication lacks %s", tt.c.UserID, tt.has)
			}
			if _, ok := sc.Fields[tt.hasnt]; ok {
				t.Errorf("%s sees the other user's field %s", tt.c.UserID, tt.hasnt)
			}
			types, err := s.EntityTypes(ctx, tt.c, tt.hasnt)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range types.Matches {
				if m.Schema.EntityType == "medication" {
					t.Errorf("%s found medication by the other user's field %s", tt.c.UserID, tt.hasnt)
				}
			}
		}
	})
}

func TestRegisterSchemaErrors(t *testing.T) {
	s, _ := newService(t)
	ctx := t.Context()
	base := func() *schema.Schema {
		return &schema.Schema{EntityType: "meal", Fields: map[string]schema.Field{
			"food": {Type: schema.TypeString}, "calories": {Type: schema.TypeNumber}, "eaten": {Type: schema.TypeDate, EventType: "MealEaten"},
		}, IdentityFields: []string{"food"}}
	}
	if _, err := s.RegisterSchema(ctx, alice, knowledge.RegisterSchemaRequest{Schema: base(), Activate: true}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		mutate    func(*schema.Schema)
		wantErr   error
		wantField string
	}{
		{"same version again", func(*schema.Schema) {}, schema.ErrExists, ""},
		{"identity dropped", func(sc *schema.Schema) { sc.Version = "2.0"; sc.IdentityFields = nil }, knowledge.ErrValidation, "schema_definition.identity_fields"},
		{"number to boolean", func(sc *schema.Schema) {
			sc.Version = "2.0"
			sc.Fields["calories"] = schema.Field{Type: schema.TypeBoolean}
		}, knowledge.ErrValidation, "schema_definition.fields.calories.type"},
		{"unknown field type", func(sc *schema.Schema) { sc.Version = "2.0"; sc.Fields["x"] = schema.Field{Type: "money"} }, knowledge.ErrValidation, "schema_definition.fields.x.type"},
		{"merge_array on a string", func(sc *schema.Schema) {
			sc.Version = "2.0"
			sc.Fields["food"] = schema.Field{Type: schema.TypeString, Policy: schema.MergeArray}
		}, knowledge.ErrValidation, "reducer_config.merge_policies.food"},
		{"event on a string", func(sc *schema.Schema) {
			sc.Version = "2.0"
			sc.Fields["food"] = schema.Field{Type: schema.TypeString, EventType: "X"}
		}, knowledge.ErrValidation, "schema_definition.fields.food.event_type"},
		{"reserved type name", func(sc *schema.Schema) { sc.EntityType = "source" }, knowledge.ErrValidation, "entity_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := base()
			tt.mutate(sc)
			_, err := s.RegisterSchema(ctx, alice, knowledge.RegisterSchemaRequest{Schema: sc, Activate: true})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			var verr *knowledge.ValidationError
			if tt.wantField != "" && (!errors.As(err, &verr) || verr.Field != tt.wantField) {
				t.Errorf("err = %v, want it to name %s", err, tt.wantField)
			}
		})
	}
	// A compatible change: number to string, a field added.
	sc := base()
	sc.Version = "2.0"
	sc.Fields["calories"] = schema.Field{Type: schema.TypeString}
	if _, err := s.RegisterSchema(ctx, alice, knowledge.RegisterSchemaRequest{Schema: sc, Activate: true}); err != nil {
		t.Errorf("number to string: %v", err)
	}
	if _, err := s.UpdateSchemaIncremental(ctx, alice, knowledge.SchemaUpdateRequest{EntityType: "spaceship", Fields: []knowledge.NewField{{Name: "x", Type: schema.TypeString}}, Activate: true}); !errors.Is(err, schema.ErrNotFound) {
		t.Errorf("update of a type with no schema: err = %v, want schema.ErrNotFound", err)
	}
	if _, err := s.UpdateSchemaIncremental(ctx, knowledge.Caller{}, knowledge.SchemaUpdateRequest{EntityType: "meal", Fields: []knowledge.NewField{{Name: "x", Type: schema.TypeString}}}); !errors.Is(err, knowledge.ErrUserIDRequired) {
		t.Errorf("user-specific update without a user: err = %v, want ErrUserIDRequired", err)
	}
	// Timeline events come from a registered type's date fields.
	res := store(t, s, alice, map[string]any{"entity_type": "meal", "food": "pizza", "calories": json.Number("800"), "eaten": "2026-02-12"})
	events, _, err := s.Timeline(ctx, alice, knowledge.TimelineQuery{EntityID: res.Entities[0].EntityID})
	if err != nil || len(events) != 1 || events[0].EventType != "MealEaten" {
		t.Errorf("meal timeline = %+v, %v; want one MealEaten", events, err)
	}
}

func TestRegisteredRelationshipType(t *testing.T) {
	schemaServices(t, func(t *testing.T, s *knowledge.Service, clk *clock) {
		ctx := t.Context()
		a := store(t, s, alice, recipe("Dough", nil)).Entities[0].EntityID
		b := store(t, s, alice, recipe("Pizza", nil)).Entities[0].EntityID
		rel := knowledge.RelationshipRequest{Type: "INGREDIENT_OF", SourceEntityID: a, TargetEntityID: b}
		if _, err := s.RegisterSchema(ctx, alice, knowledge.RegisterSchemaRequest{Activate: true, Schema: &schema.Schema{
			EntityType: "recipe", Version: "1.1", Fields: map[string]schema.Field{"name": {Type: schema.TypeString, Identifier: true}},
			IdentityFields: []string{"name"}, NameFields: []string{"name"},
			RelationshipTypes: []schema.RelationshipType{{Name: "INGREDIENT_OF", Acyclic: true}},
		}}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.CreateRelationship(ctx, alice, rel); err != nil {
			t.Fatalf("registered type: %v", err)
		}
		back := knowledge.RelationshipRequest{Type: "INGREDIENT_OF", SourceEntityID: b, TargetEntityID: a}
		if _, _, err := s.CreateRelationship(ctx, alice, back); !errors.Is(err, graph.ErrCycle) {
			t.Errorf("edge closing a cycle of an acyclic registered type: err = %v, want ErrCycle", err)
		}
		// Bob's schemas do not declare it: his first use registers it for
		// him, not acyclic, whatever alice's schema says.
		bobA := store(t, s, bob, recipe("Dough", nil)).Entities[0].EntityID
		bobB := store(t, s, bob, recipe("Pizza", nil)).Entities[0].EntityID
		for _, r := range []knowledge.RelationshipRequest{{Type: "INGREDIENT_OF", SourceEntityID: bobA, TargetEntityID: bobB},
			{Type: "INGREDIENT_OF", SourceEntityID: bobB, TargetEntityID: bobA}} {
			if _, _, err := s.CreateRelationship(ctx, bob, r); err != nil {
				t.Errorf("bob's own INGREDIENT_OF, used not declared: %v, want no cycle check", err)
			}
		}
		// In one create_relationships call, the registered type is
		// acyclic too: an edge that closes a cycle with an earlier one of
		// the same call is refused.
		c := store(t, s, alice, recipe("Calzone", nil)).Entities[0].EntityID
		res, err := s.CreateRelationships(ctx, alice, []knowledge.RelationshipRequest{
			{Type: "INGREDIENT_OF", SourceEntityID: b, TargetEntityID: c},
			{Type: "INGREDIENT_OF", SourceEntityID: c, TargetEntityID: a},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Err != nil || !res[0].Created || !errors.Is(res[1].Err, graph.ErrCycle) {
			t.Errorf("batch of a registered acyclic type: %+v, %v; want the first created and the second refused as a cycle (a → b → c → a)",
				res[0], res[1].Err)
		}
	})
}

// evolve stores recipes with a field, one call each, from distinct sources.
// evolveStores are stores of recipes for evolution to decide on: a first
// store with the identity alone (a first store's fields are inferred),
// then six dishes with cuisine, four with servings, one with rare.
func evolveStores() []map[string]any {
	out := []map[string]any{recipe("Plain", nil)}
	for i := range 6 {
		e := recipe(fmt.Sprintf("Dish %d", i), map[string]any{"cuisine": []string{"thai", "french", "thai"}[i%3]})
		if i < 4 {
			e["servings"] = json.Number(fmt.Sprint(i + 1))
		}
		if i == 0 {
			e["rare"] = "once"
		}
		out = append(out, e)
	}
	return out
}

func TestAutoEnhancementPromotesAndBackfills(t *testing.T) {
	schemaServices(t, func(t *testing.T, s *knowledge.Service, clk *clock) {
		ctx := t.Context()
		var first string
		for i, e := range evolveStores() {
			res := store(t, s, alice, e)
			if i == 1 {
				first = res.Entities[0].EntityID
			}
		}
		sc, _, err := s.Schemas().Lookup(ctx, alice.UserID, "recipe")
		if err != nil {
			t.Fatal(err)
		}
		if sc.Fields["cuisine"].Type != schema.TypeString || sc.Fields["servings"].Type != schema.TypeNumber {
			t.Fatalf("recipe schema %s fields %v, want cuisine and servings promoted", sc.Version, sc.FieldNames())
		}
		if _, ok := sc.Fields["rare"]; ok {
			t.Errorf("a field seen once was promoted")
		}
		// The first dish's cuisine was a raw fragment; now it is a field
		// whose provenance is the source that gave it.
		snap, err := s.EntitySnapshot(ctx, alice, first, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if snap.Entity.Snapshot["cuisine"] != "thai" {
			t.Errorf("backfilled snapshot = %v", snap.Entity.Snapshot)
		}
		prov, err := s.FieldProvenance(ctx, alice, first, "cuisine")
		if err != nil {
			t.Fatal(err)
		}
		if prov.Source.ID == "" || prov.Observation.Fields["cuisine"] != "thai" {
			t.Errorf("provenance of the backfilled field = %+v", prov)
		}
		recs, err := s.SchemaRecommendations(ctx, alice, "recipe", "", schema.RecommendationAutoApplied)
		if err != nil || len(recs) != 2 {
			t.Errorf("auto-applied recommendations = %+v, %v; want cuisine and servings", recs, err)
		}
	})
}

func TestManualEvolutionWithAutoEnhancementOff(t *testing.T) {
	schemaServices(t, func(t *testing.T, s *knowledge.Service, clk *clock) {
		ctx := t.Context()
		if err := s.SetAutoEnhance(ctx, alice.UserID, false); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range evolveStores() {
			ids = append(ids, store(t, s, alice, e).Entities[0].EntityID)
		}
		sc, _, _ := s.Schemas().Lookup(ctx, alice.UserID, "recipe")
		if len(sc.Fields) != 1 {
			t.Fatalf("with auto-enhancement off the schema grew: %v", sc.FieldNames())
		}
		an, err := s.AnalyzeSchemaCandidates(ctx, alice, knowledge.AnalyzeRequest{EntityType: "recipe"})
		if err != nil {
			t.Fatal(err)
		}
		if len(an.Recommendations) != 1 || len(an.Recommendations[0].Fields) != 1 || an.Recommendations[0].Fields[0].Name != "cuisine" {
			t.Fatalf("analysis = %+v, want cuisine only (servings is seen 4 times, under 5)", an)
		}
		c := an.Recommendations[0].Fields[0]
		if c.Frequency != 6 || c.Sources != 6 || c.TypeConsistency != 1 || c.Confidence != 1 || len(c.SampleValues) != 2 {
			t.Errorf("cuisine candidate = %+v", c)
		}
		pending, err := s.SchemaRecommendations(ctx, alice, "recipe", "all", "")
		if err != nil || len(pending) != 1 || pending[0].Fields[0].Name != "cuisine" {
			t.Fatalf("pending recommendations = %+v, %v", pending, err)
		}
		ch, err := s.UpdateSchemaIncremental(ctx, alice, knowledge.SchemaUpdateRequest{
			EntityType: "recipe", RecommendationID: pending[0].ID, Activate: true, MigrateExisting: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		if ch.Schema.Version != "1.1" || ch.Migrated != 6 || len(ch.FieldsAdded) != 1 {
			t.Errorf("update = %+v (version %s)", ch, ch.Schema.Version)
		}
		again, err := s.MigrateFragments(ctx, alice, "recipe", []string{"cuisine"})
		if err != nil || again != 0 {
			t.Errorf("migrating twice: %d, %v; want nothing more", again, err)
		}
		prov, err := s.FieldProvenance(ctx, alice, ids[2], "cuisine") // Dish 1
		if err != nil || prov.Observation.Fields["cuisine"] != "french" {
			t.Errorf("provenance = %+v, %v", prov, err)
		}
		applied, _ := s.SchemaRecommendations(ctx, alice, "recipe", "", schema.RecommendationApplied)
		if len(applied) != 1 {
			t.Errorf("applied recommendations = %+v", applied)
		}
	})
}

// TestSchemaEvolutionOrderIndependent is schema evolution's determinism
// property. A type's first store infers its schema from every field that
// store gives (issue 35), so which fields the schema holds depends on which
// store came first, and no rule could avoid it: a schema never loses a
// field, so one that depended only on the set of stores would hold, after
// any stores, every field of each of them (each could have come first), and
// evolution would be left nothing to decide. What holds instead, and what
// this checks:
//
//   - with the same first store of each type, the later stores in any order
//     give the same schemas, versions, recommendations and analysis;
//   - in any order at all, every store is accepted and every entity shows
//     the same facts (its snapshot's fields and its raw fields, as text:
//     a number stored into a string field is kept as its text).
func TestSchemaEvolutionOrderIndependent(t *testing.T) {
	stores := evolveStores()[1:]
	stores = append(stores, map[string]any{"entity_type": "meal", "food": "pizza", "kcal": json.Number("800")},
		map[string]any{"entity_type": "meal", "food": "ramen", "kcal": json.Number("500"), "spicy": true},
		map[string]any{"entity_type": "meal", "food": "salad", "kcal": "light"})
	// The first store of each type, fixed for the first property: the
	// identity alone, so that evolution decides every other field.
	firsts := []map[string]any{{"entity_type": "recipe", "name": "Plain"}, {"entity_type": "meal", "food": "bread"}}
	type outcome struct {
		Schemas map[string]*schema.Schema
		Recs    []schema.Recommendation
		Analyse knowledge.Analysis
		Facts   map[string]map[string]string
	}
	run := func(t *testing.T, order []int, withFirsts bool) outcome {
		s, _ := newService(t)
		ctx := t.Context()
		var ids []string
		if withFirsts {
			for _, e := range firsts {
				ids = append(ids, store(t, s, alice, e).Entities[0].EntityID)
			}
		}
		for _, i := range order {
			ids = append(ids, store(t, s, alice, stores[i]).Entities[0].EntityID)
		}
		out := outcome{Schemas: map[string]*schema.Schema{}, Facts: map[string]map[string]string{}}
		for _, id := range ids {
			snap, err := s.EntitySnapshot(ctx, alice, id, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			raw, err := s.RawFields(ctx, alice, snap.Entity)
			if err != nil {
				t.Fatal(err)
			}
			facts := map[string]string{}
			for _, m := range []map[string]any{snap.Entity.Snapshot, raw} {
				for k, v := range m {
					facts[k] = schema.ValueText(v)
				}
			}
			out.Facts[id] = facts
		}
		for _, typ := range []string{"recipe", "meal"} {
			sc, _, err := s.Schemas().Lookup(ctx, alice.UserID, typ)
			if err != nil {
				t.Fatal(err)
			}
			out.Schemas[typ] = sc
			recs, err := s.SchemaRecommendations(ctx, alice, typ, "all", "all")
			if err != nil {
				t.Fatal(err)
			}
			out.Recs = append(out.Recs, recs...)
		}
		one := 1e-9
		an, err := s.AnalyzeSchemaCandidates(context.WithoutCancel(ctx), alice, knowledge.AnalyzeRequest{MinFrequency: 1, MinConfidence: &one})
		if err != nil {
			t.Fatal(err)
		}
		out.Analyse = an
		return out
	}
	base := make([]int, len(stores))
	for i := range base {
		base[i] = i
	}
	want := run(t, base, true)
	// recipe: cuisine and servings promoted, rare not (once); meal (no
	// identity field): food from its first store, kcal not promoted (two
	// numbers, one word), spicy not (once).
	if want.Schemas["recipe"].Version != "1.2" || len(want.Schemas["recipe"].Fields) != 3 ||
		want.Schemas["meal"].Version != "1.0" || len(want.Schemas["meal"].Fields) != 1 {
		t.Fatalf("recipe %s %v, meal %s %v; want 1.2 with name, cuisine and servings and 1.0 with food",
			want.Schemas["recipe"].Version, want.Schemas["recipe"].FieldNames(), want.Schemas["meal"].Version, want.Schemas["meal"].FieldNames())
	}
	wantFacts := run(t, base, false).Facts
	rng := rand.New(rand.NewPCG(7, 13))
	for range 4 {
		order := rng.Perm(len(stores))
		got := run(t, order, true)
		if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(schema.Recommendation{}, "CreatedAt", "UpdatedAt")); diff != "" {
			t.Errorf("after the same first stores, order %v (-first +this):\n%s", order, diff)
		}
		if diff := cmp.Diff(wantFacts, run(t, order, false).Facts); diff != "" {
			t.Errorf("order %v, without the fixed first stores (-in order +this):\n%s", order, diff)
		}
	}
}

// TestFirstStoreDatesYieldEvents: a date field a first store infers yields
// timeline events of its own type, named in valid UTF-8 whatever the
// field's letters, on every backend.
func TestFirstStoreDatesYieldEvents(t *testing.T) {
	schemaServices(t, func(t *testing.T, s *knowledge.Service, clk *clock) {
		store(t, s, alice, map[string]any{"entity_type": "voyage", "name": "Lyon", "départ": "2026-05-01", "émis": "2026-04-01T09:30:00+02:00"})
		evs, _, err := s.Timeline(t.Context(), alice, knowledge.TimelineQuery{Page: graph.Page{Limit: 10}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range evs {
			got = append(got, e.EventType+" "+e.Time.UTC().Format(time.RFC3339))
		}
		want := []string{"VoyageDépart 2026-05-01T00:00:00Z", "VoyageÉmis 2026-04-01T07:30:00Z"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("timeline (-want +got):\n%s", diff)
		}
	})
}
