package controlplane_test

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
)

func schemaVersion(owner, typ, version string, active bool, fields ...string) schema.Version {
	sc := &schema.Schema{EntityType: typ, Version: version, Fields: map[string]schema.Field{}, Description: "d"}
	for _, f := range fields {
		sc.Fields[f] = schema.Field{Type: schema.TypeString, Identifier: f == "name"}
	}
	return schema.Version{
		ID: schema.VersionID(owner, typ, version), Owner: owner, EntityType: typ, Version: version,
		Schema: sc, Active: active, CreatedAt: time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC), CreatedBy: "test",
	}
}

func TestSchemaVersionsPersist(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		ctx := t.Context()
		for _, v := range []schema.Version{
			schemaVersion("", "recipe", "1.0", true, "name"),
			schemaVersion("u1", "recipe", "1.0", true, "name", "cuisine"),
			schemaVersion("u1", "recipe", "1.1", true, "name", "cuisine", "servings"),
			schemaVersion("u2", "recipe", "1.0", false, "title"),
		} {
			got, err := s.AddSchemaVersion(ctx, v)
			if err != nil {
				t.Fatal(err)
			}
			if v.Owner == "u1" && v.Version == "1.1" && got.Seq != 2 {
				t.Errorf("seq of u1's second version = %d, want 2", got.Seq)
			}
		}
		if _, err := s.AddSchemaVersion(ctx, schemaVersion("u1", "recipe", "1.1", true, "name")); !errors.Is(err, schema.ErrExists) {
			t.Errorf("a version twice: err = %v, want schema.ErrExists", err)
		}
		active, err := s.ActiveSchemas(ctx, "u1")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range active {
			got = append(got, v.Owner+"/"+v.Version)
		}
		if diff := cmp.Diff([]string{"/1.0", "u1/1.1"}, got); diff != "" {
			t.Errorf("u1's active schemas (-want +got):\n%s", diff)
		}
		if len(active) == 2 && (active[1].Schema.Fields["servings"].Type != schema.TypeString || !active[1].Schema.Fields["name"].Identifier) {
			t.Errorf("definition read back = %+v", active[1].Schema)
		}
		// u2's version is inactive; u2 sees the global one only, and never u1's.
		if active, _ := s.ActiveSchemas(ctx, "u2"); len(active) != 1 || active[0].Owner != "" {
			t.Errorf("u2's active schemas = %+v", active)
		}
		if err := s.ActivateSchemaVersion(ctx, "u2", "recipe", "1.0"); err != nil {
			t.Fatal(err)
		}
		if err := s.ActivateSchemaVersion(ctx, "u1", "recipe", "1.0"); err != nil {
			t.Fatal(err)
		}
		if err := s.ActivateSchemaVersion(ctx, "u1", "recipe", "9.9"); !errors.Is(err, schema.ErrNotFound) {
			t.Errorf("activate a missing version: err = %v", err)
		}
		vs, err := s.SchemaVersions(ctx, "u1", "recipe")
		if err != nil || len(vs) != 2 || !vs[0].Active || vs[1].Active {
			t.Errorf("u1's versions after activating 1.0 = %+v, %v", vs, err)
		}
	})
}

// TestSchemaActivationAtomic: concurrent registrations of new versions
// leave exactly one active version, and every version stored once.
func TestSchemaActivationAtomic(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		ctx := t.Context()
		var wg sync.WaitGroup
		versions := []string{"1.0", "1.1", "1.2", "1.3", "1.4", "1.5"}
		errs := make([]error, len(versions))
		for i, v := range versions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = s.AddSchemaVersion(ctx, schemaVersion("u1", "meal", v, true, "food"))
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("version %s: %v", versions[i], err)
			}
		}
		vs, err := s.SchemaVersions(ctx, "u1", "meal")
		if err != nil {
			t.Fatal(err)
		}
		active := 0
		for i, v := range vs {
			if v.Seq != i+1 {
				t.Errorf("seqs = %+v, want 1..%d", vs, len(vs))
			}
			if v.Active {
				active++
			}
		}
		if len(vs) != len(versions) || active != 1 {
			t.Errorf("%d versions, %d active; want %d and 1", len(vs), active, len(versions))
		}
	})
}

func TestSchemaRecommendationsAndSettings(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		ctx := t.Context()
		at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
		r := schema.Recommendation{ID: "rec_1", UserID: "u1", EntityType: "recipe", Source: "raw_fragments",
			Fields: []schema.RecommendedField{{Name: "cuisine", Type: schema.TypeString}}, Confidence: 0.5, Reasoning: "a",
			Status: schema.RecommendationPending, CreatedAt: at, UpdatedAt: at}
		if err := s.PutRecommendations(ctx, []schema.Recommendation{r}); err != nil {
			t.Fatal(err)
		}
		r2 := r
		r2.Confidence, r2.Reasoning = 0.9, "b"
		if err := s.PutRecommendations(ctx, []schema.Recommendation{r2}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Recommendations(ctx, "u1", "recipe")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]schema.Recommendation{r2}, got); diff != "" {
			t.Errorf("a pending recommendation stored again (-want +got):\n%s", diff)
		}
		if err := s.SetRecommendationStatus(ctx, "u1", "rec_1", schema.RecommendationApplied); err != nil {
			t.Fatal(err)
		}
		if err := s.PutRecommendations(ctx, []schema.Recommendation{r}); err != nil {
			t.Fatal(err)
		}
		got, _ = s.Recommendations(ctx, "u1", "recipe")
		if len(got) != 1 || got[0].Status != schema.RecommendationApplied || got[0].Confidence != 0.9 {
			t.Errorf("an applied recommendation changed: %+v", got)
		}
		if err := s.SetRecommendationStatus(ctx, "u2", "rec_1", schema.RecommendationRejected); !errors.Is(err, schema.ErrNotFound) {
			t.Errorf("another user's recommendation: err = %v", err)
		}
		if on, err := s.AutoEnhance(ctx, "u1"); err != nil || !on {
			t.Errorf("auto-enhance by default = %v, %v; want on", on, err)
		}
		if err := s.SetAutoEnhance(ctx, "u1", false); err != nil {
			t.Fatal(err)
		}
		if on, _ := s.AutoEnhance(ctx, "u1"); on {
			t.Errorf("auto-enhance after switching off = on")
		}
		if on, _ := s.AutoEnhance(ctx, "u2"); !on {
			t.Errorf("switching u1 off switched u2 off")
		}
	})
}

// TestPersistentRegistryResolution: on the control plane, a user's own
// version wins over the global one, which wins over the built-in one, and
// global versions are checked against the global and built-in ones only.
func TestPersistentRegistryResolution(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		ctx := t.Context()
		reg := schema.NewPersistentRegistry(s)
		at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
		person := func(version string, extra string) *schema.Schema {
			return &schema.Schema{EntityType: "person", Version: version, IdentityFields: []string{"name"}, NameFields: []string{"name"},
				Fields: map[string]schema.Field{"name": {Type: schema.TypeString, Identifier: true}, extra: {Type: schema.TypeString}}}
		}
		if _, err := reg.RegisterVersion(ctx, "", person("2.0", "pronouns"), true, "operator", at); err != nil {
			t.Fatal(err)
		}
		if _, err := reg.RegisterVersion(ctx, "u1", person("2.1", "nickname"), true, "claude", at); err != nil {
			t.Fatal(err)
		}
		dropped := person("3.0", "x")
		dropped.IdentityFields = []string{"x"}
		if _, err := reg.RegisterVersion(ctx, "", dropped, true, "operator", at); !errors.Is(err, knowledge.ErrValidation) {
			t.Errorf("a global version dropping the identity: err = %v", err)
		}
		for _, tt := range []struct{ user, version, field string }{{"u1", "2.1", "nickname"}, {"u2", "2.0", "pronouns"}} {
			sc, ok, err := reg.Lookup(ctx, tt.user, "person")
			if err != nil || !ok {
				t.Fatal(ok, err)
			}
			if _, has := sc.Fields[tt.field]; sc.Version != tt.version || !has {
				t.Errorf("%s resolves person to %s %v, want %s with %s", tt.user, sc.Version, sc.FieldNames(), tt.version, tt.field)
			}
		}
		if sc, _, _ := reg.Lookup(ctx, "u2", "company"); sc == nil || sc.Version != "1.0" || sc.Owner != "" {
			t.Errorf("company falls back to the built-in schema: %+v", sc)
		}
	})
}

// A relationship type a user registers by using it is registered once,
// concurrent first uses included, and for that user only.
func TestRelationshipTypesRegisteredOnUse(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		ctx := t.Context()
		at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
		var created atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				ok, err := s.RegisterRelationshipType(ctx, "user-a", "WORKS_AT", at)
				if err != nil {
					t.Error(err)
				}
				if ok {
					created.Add(1)
				}
			})
		}
		wg.Wait()
		if created.Load() != 1 {
			t.Fatalf("%d first uses registered WORKS_AT, want 1", created.Load())
		}
		if ok, err := s.RegisterRelationshipType(ctx, "user-a", "MENTORS", at); err != nil || !ok {
			t.Fatalf("MENTORS: %v, %v", ok, err)
		}
		if got, err := s.RelationshipTypes(ctx, "user-a"); err != nil || !slices.Equal(got, []string{"MENTORS", "WORKS_AT"}) {
			t.Fatalf("user-a's types = %v, %v", got, err)
		}
		if got, err := s.RelationshipTypes(ctx, "user-b"); err != nil || len(got) != 0 {
			t.Fatalf("user-b's types = %v, %v; want none", got, err)
		}
	})
}
