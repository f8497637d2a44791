package neo4j

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/graph"
)

// The bulk methods of the store pipeline, run against the fakeRunner of
// tx_test.go: which statements run, the $rows they get, how a short count
// becomes graph.ErrConflict or a missing source, and that every statement
// runs under the user it writes for.

// checkUsers fails unless every statement f ran has $userId, and it is one
// of users.
func checkUsers(t *testing.T, f *fakeRunner, users ...string) {
	t.Helper()
	for _, r := range f.ran {
		u, ok := r.params["userId"].(string)
		if !ok || !strings.Contains(" "+strings.Join(users, " ")+" ", " "+u+" ") {
			t.Errorf("%s ran with userId %v, want one of %v", r.name, r.params["userId"], users)
		}
	}
}

// rowsOf returns the $rows of the i-th run of name.
func rowsOf(t *testing.T, f *fakeRunner, name string, i int) (userID string, rows []map[string]any, query string) {
	t.Helper()
	n := 0
	for _, r := range f.ran {
		if r.name != name {
			continue
		}
		if n == i {
			list, ok := r.params["rows"].([]any)
			if !ok {
				t.Fatalf("%s ran without $rows: %v", name, r.params)
			}
			for _, row := range list {
				rows = append(rows, row.(map[string]any))
			}
			return r.params["userId"].(string), rows, r.query
		}
		n++
	}
	t.Fatalf("%s did not run %d times; ran %v", name, i+1, f.names())
	return "", nil, ""
}

func idsOf(rows []map[string]any, key string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i], _ = r[key].(string)
	}
	return out
}

func TestPutEntitiesOneStatementPerUserAndType(t *testing.T) {
	f := (&fakeRunner{}).
		reply("entities_put", map[string]any{"written": int64(2)}).
		reply("entities_put", written1).
		reply("entities_put", written1)
	es := []graph.Entity{
		{ID: "ent_a1", UserID: "alice", Type: "company", CreatedAt: t0.In(paris)},
		{ID: "ent_a2", UserID: "alice", Type: "bank_account", MergedInto: "ent_a1", MergedAt: t0},
		{ID: "ent_b1", UserID: "bob", Type: "company"},
		{ID: "ent_a3", UserID: "alice", Type: "company"},
	}
	if err := (&tx{r: f, write: true}).PutEntities(t.Context(), es); err != nil {
		t.Fatal(err)
	}
	want := []string{"user_lock", "entities_put", "entities_put", "user_lock", "entities_put"}
	if d := cmp.Diff(want, f.names()); d != "" {
		t.Errorf("statements (-want +got):\n%s", d)
	}
	checkUsers(t, f, "alice", "bob")
	for i, tc := range []struct {
		user, label string
		ids         []string
	}{
		{"alice", "e:Company", []string{"ent_a1", "ent_a3"}},
		{"alice", "e:BankAccount", []string{"ent_a2"}},
		{"bob", "e:Company", []string{"ent_b1"}},
	} {
		user, rows, query := rowsOf(t, f, "entities_put", i)
		if user != tc.user || !strings.Contains(query, tc.label) {
			t.Errorf("run %d: user %s, label in %q; want %s, %s", i, user, query, tc.user, tc.label)
		}
		if d := cmp.Diff(tc.ids, idsOf(rows, "id")); d != "" {
			t.Errorf("run %d: ids (-want +got):\n%s", i, d)
		}
		for _, row := range rows {
			if _, ok := row["user_id"]; ok {
				t.Errorf("run %d: a row names its user; only $userId may", i)
			}
		}
	}
	_, rows, _ := rowsOf(t, f, "entities_put", 1)
	if rows[0]["merged_into"] != "ent_a1" || rows[0]["merged_at"] != t0 {
		t.Errorf("merged row = %v", rows[0])
	}
	_, rows, _ = rowsOf(t, f, "entities_put", 0)
	if got := rows[0]["created_at"].(time.Time); got.Location() != time.UTC {
		t.Errorf("created_at in %v, want UTC", got.Location())
	}
}

func TestPutEntitiesConflict(t *testing.T) {
	f := (&fakeRunner{}).reply("entities_put", written1)
	err := (&tx{r: f, write: true}).PutEntities(t.Context(), []graph.Entity{
		{ID: "ent_1", UserID: "alice", Type: "company"}, {ID: "ent_2", UserID: "alice", Type: "company"},
	})
	if !errors.Is(err, graph.ErrConflict) || !strings.Contains(err.Error(), "1 of 2") {
		t.Errorf("err = %v, want graph.ErrConflict for 1 of 2", err)
	}
	f = &fakeRunner{}
	if err := (&tx{r: f, write: true}).PutEntities(t.Context(), nil); err != nil || len(f.ran) != 0 {
		t.Errorf("PutEntities(nil) = %v, ran %v; want nothing", err, f.names())
	}
}

func TestInsertObservationsRows(t *testing.T) {
	f := (&fakeRunner{}).
		reply("observations_insert", map[string]any{"written": int64(2)}).
		reply("observations_insert", written1)
	obs := []graph.Observation{
		{ID: "obs_1", UserID: "alice", EntityID: "ent_1", EntityType: "company", SchemaVersion: "1", SourceID: "src_1",
			ObservedAt: t0.In(paris), CreatedAt: t0, SpecificityScore: 0.5, SourcePriority: 7,
			Fields: map[string]any{"name": "Acme"}, OriginalEntityID: "ent_0"},
		{ID: "obs_2", UserID: "bob", EntityID: "ent_2", SourceID: "src_2"},
		{ID: "obs_3", UserID: "alice", EntityID: "ent_1", SourceID: "src_1"},
	}
	if err := (&tx{r: f, write: true}).InsertObservations(t.Context(), obs); err != nil {
		t.Fatal(err)
	}
	want := []string{"user_lock", "observations_insert", "user_lock", "observations_insert"}
	if d := cmp.Diff(want, f.names()); d != "" {
		t.Errorf("statements (-want +got):\n%s", d)
	}
	checkUsers(t, f, "alice", "bob")
	user, rows, _ := rowsOf(t, f, "observations_insert", 0)
	if user != "alice" || cmp.Diff([]string{"obs_1", "obs_3"}, idsOf(rows, "id")) != "" {
		t.Errorf("first run: %s %v, want alice's obs_1, obs_3", user, idsOf(rows, "id"))
	}
	wantRow := map[string]any{
		"id": "obs_1", "entity_id": "ent_1", "entity_type": "company", "schema_version": "1", "source_id": "src_1",
		"observed_at": t0, "created_at": t0, "specificity_score": 0.5, "source_priority": int64(7),
		"fields_json": `{"name":"Acme"}`, "original_entity_id": "ent_0",
	}
	if d := cmp.Diff(wantRow, rows[0]); d != "" {
		t.Errorf("row (-want +got):\n%s", d)
	}
	if user, rows, _ := rowsOf(t, f, "observations_insert", 1); user != "bob" || len(rows) != 1 {
		t.Errorf("second run: %s with %d rows, want bob's one", user, len(rows))
	}
}

func TestInsertObservationsConflicts(t *testing.T) {
	ctx := t.Context()
	src := map[string]any{"source": map[string]any{"id": "src_1", "user_id": "alice"}}
	two := []graph.Observation{
		{ID: "obs_1", UserID: "alice", SourceID: "src_1"}, {ID: "obs_2", UserID: "alice", SourceID: "src_1"},
	}
	t.Run("RepeatedIDRunsNothing", func(t *testing.T) {
		f := &fakeRunner{}
		err := (&tx{r: f, write: true}).InsertObservations(ctx, []graph.Observation{two[0], two[1], two[0]})
		if !errors.Is(err, graph.ErrConflict) || !strings.Contains(err.Error(), "obs_1") {
			t.Errorf("err = %v, want graph.ErrConflict naming obs_1", err)
		}
		if len(f.ran) != 0 {
			t.Errorf("ran %v; a batch with a repeated id must not run", f.names())
		}
	})
	t.Run("ExistingID", func(t *testing.T) {
		f := (&fakeRunner{}).reply("observations_insert", written1).reply("source_get", src)
		err := (&tx{r: f, write: true}).InsertObservations(ctx, two)
		if !errors.Is(err, graph.ErrConflict) || !strings.Contains(err.Error(), "1 of 2") {
			t.Errorf("err = %v, want graph.ErrConflict for 1 of 2", err)
		}
		if d := cmp.Diff([]string{"user_lock", "observations_insert", "source_get"}, f.names()); d != "" {
			t.Errorf("statements (-want +got):\n%s", d)
		}
		checkUsers(t, f, "alice")
	})
	t.Run("MissingSource", func(t *testing.T) {
		f := (&fakeRunner{}).reply("observations_insert", written1).reply("source_get", src)
		obs := []graph.Observation{two[0], {ID: "obs_9", UserID: "alice", SourceID: "src_9"}}
		err := (&tx{r: f, write: true}).InsertObservations(ctx, obs)
		var nf *graph.NotFoundError
		if !errors.As(err, &nf) || nf.ID != "src_9" || errors.Is(err, graph.ErrConflict) || !strings.Contains(err.Error(), "obs_9") {
			t.Errorf("err = %v, want a NotFoundError of src_9 for obs_9", err)
		}
	})
	t.Run("Nothing", func(t *testing.T) {
		f := &fakeRunner{}
		if err := (&tx{r: f, write: true}).InsertObservations(ctx, nil); err != nil || len(f.ran) != 0 {
			t.Errorf("InsertObservations(nil) = %v, ran %v; want nothing", err, f.names())
		}
	})
	t.Run("NoCount", func(t *testing.T) {
		err := (&tx{r: &fakeRunner{}, write: true}).InsertObservations(ctx, two)
		if err == nil || !strings.Contains(err.Error(), "returned 0 rows") {
			t.Errorf("err = %v, want an error about the missing count", err)
		}
	})
}

func TestInsertRawFragments(t *testing.T) {
	ctx := t.Context()
	fs := []graph.RawFragment{
		{ID: "raw_1", UserID: "alice", SourceID: "src_1", EntityID: "ent_1", EntityType: "company",
			Field: "motto", Value: []any{"a", 1}, CreatedAt: t0.In(paris)},
		{ID: "raw_2", UserID: "alice", SourceID: "src_1", EntityID: "ent_1", EntityType: "company", Field: "x", Value: nil},
	}
	f := (&fakeRunner{}).reply("raw_fragments_insert", map[string]any{"written": int64(2)})
	if err := (&tx{r: f, write: true}).InsertRawFragments(ctx, fs); err != nil {
		t.Fatal(err)
	}
	checkUsers(t, f, "alice")
	_, rows, _ := rowsOf(t, f, "raw_fragments_insert", 0)
	want := map[string]any{
		"id": "raw_1", "source_id": "src_1", "entity_id": "ent_1", "entity_type": "company",
		"field": "motto", "value_json": `["a",1]`, "created_at": t0,
	}
	if d := cmp.Diff(want, rows[0]); d != "" || len(rows) != 2 {
		t.Errorf("%d rows, first (-want +got):\n%s", len(rows), d)
	}

	f = (&fakeRunner{}).reply("raw_fragments_insert", written0).
		reply("source_get", map[string]any{"source": map[string]any{"id": "src_1", "user_id": "alice"}})
	if err := (&tx{r: f, write: true}).InsertRawFragment(ctx, fs[0]); !errors.Is(err, graph.ErrConflict) {
		t.Errorf("InsertRawFragment of an existing id: err = %v, want graph.ErrConflict", err)
	}
	f = &fakeRunner{}
	if err := (&tx{r: f, write: true}).InsertRawFragments(ctx, []graph.RawFragment{fs[1], fs[1]}); !errors.Is(err, graph.ErrConflict) || len(f.ran) != 0 {
		t.Errorf("a repeated id: err = %v, ran %v; want graph.ErrConflict and nothing run", err, f.names())
	}
}

func TestSetEntityIdentifiersRows(t *testing.T) {
	f := &fakeRunner{}
	tx := &tx{r: f, write: true}
	err := tx.SetEntityIdentifiers(t.Context(), "alice", []graph.EntityIdentifiers{
		{EntityID: "ent_1", Identifiers: []graph.Identifier{{Field: "email", Value: "a@b.c"}, {Field: "vat", Value: "FR1"}}},
		{EntityID: "ent_2"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"user_lock", "identifiers_set"}, f.names()); d != "" {
		t.Errorf("statements (-want +got):\n%s", d)
	}
	checkUsers(t, f, "alice")
	_, rows, _ := rowsOf(t, f, "identifiers_set", 0)
	want := []map[string]any{
		{"entity_id": "ent_1", "identifiers": []any{
			map[string]any{"field": "email", "value": "a@b.c"}, map[string]any{"field": "vat", "value": "FR1"},
		}},
		{"entity_id": "ent_2", "identifiers": []any{}},
	}
	if d := cmp.Diff(want, rows); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	if err := tx.SetEntityIdentifiers(t.Context(), "alice", nil); err != nil || len(f.ran) != 2 {
		t.Errorf("SetEntityIdentifiers(nil) = %v, ran %v; want nothing more", err, f.names())
	}
}

func TestReplaceEntityTimelinesRows(t *testing.T) {
	f := &fakeRunner{}
	err := (&tx{r: f, write: true}).ReplaceEntityTimelines(t.Context(), "alice", []graph.EntityTimeline{
		{EntityID: "ent_1", Events: []graph.TimelineEvent{{
			ID: "tle_1", UserID: "alice", EntityID: "ent_1", EventType: "founded", Timestamp: "2026-03-14",
			Time: t0.In(paris), SourceID: "src_1", Properties: map[string]any{"field": "founded"},
		}}},
		{EntityID: "ent_2"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"user_lock", "timelines_replace"}, f.names()); d != "" {
		t.Errorf("statements (-want +got):\n%s", d)
	}
	checkUsers(t, f, "alice")
	_, rows, _ := rowsOf(t, f, "timelines_replace", 0)
	want := []map[string]any{
		{"entity_id": "ent_1", "events": []any{map[string]any{
			"id": "tle_1", "event_type": "founded", "timestamp": "2026-03-14", "time": t0,
			"source_id": "src_1", "properties_json": `{"field":"founded"}`,
		}}},
		{"entity_id": "ent_2", "events": []any{}},
	}
	if d := cmp.Diff(want, rows); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
}

// typesServer answers entity_types_after as a server holding types would,
// and counts the statements.
type typesServer struct {
	types []string // sorted
	runs  int
	asked [][]string
}

func (s *typesServer) run(_ context.Context, name, _ string, params map[string]any) ([]map[string]any, error) {
	if name != "entity_types_after" {
		return nil, fmt.Errorf("unexpected statement %s", name)
	}
	s.runs++
	ask := params["afterTypes"].([]string)
	s.asked = append(s.asked, ask)
	var rows []map[string]any
	for _, a := range ask {
		if i, _ := slices.BinarySearch(s.types, a+"\x00"); i < len(s.types) {
			rows = append(rows, map[string]any{"after_type": a, "entity_type": s.types[i]})
		}
	}
	return rows, nil
}

// TestEntityTypesFollowsTheChain lists types from every kind of hint (the
// types cached before a write): the same types, none, a type added at
// either end or between, a type gone, a hint unrelated to the truth, and
// checks that the list is always the server's, and how many statements
// it took: one when the types did not change, one per type and one more
// without a hint.
func TestEntityTypesFollowsTheChain(t *testing.T) {
	truth := []string{"company", "invoice", "person", "project"}
	for _, tc := range []struct {
		name  string
		hint  []string
		truth []string
		runs  int
	}{
		{"unchanged", truth, truth, 1},
		{"unchanged, hint unsorted", []string{"person", "company", "project", "invoice"}, truth, 1},
		{"no hint", nil, truth, 5},
		{"no types", nil, []string{}, 1},
		{"all gone", truth, []string{}, 1},
		{"new first", truth, append([]string{"a_new"}, truth...), 2},
		{"new between", truth, []string{"company", "invoice", "m_new", "person", "project"}, 2},
		{"new last", truth, append(slices.Clone(truth), "z_new"), 2},
		{"one gone", truth, []string{"company", "person", "project"}, 1},
		{"gone and new", truth, []string{"company", "m_new", "person", "project", "z_new"}, 2},
		{"unrelated hint", []string{"b", "d", "f"}, truth, 4},
		{"new run of three", []string{"a"}, []string{"a", "b", "c", "d"}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &typesServer{types: tc.truth}
			got, err := (&tx{r: srv}).entityTypes(t.Context(), "alice", tc.hint)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.truth, got); d != "" {
				t.Errorf("types (-want +got):\n%s", d)
			}
			if srv.runs != tc.runs {
				t.Errorf("%d statements (asked %q), want %d", srv.runs, srv.asked, tc.runs)
			}
		})
	}

	// Through EntityTypes, with the user filter, and never nil.
	f := (&fakeRunner{}).reply("entity_types_after")
	got, err := (&tx{r: f}).EntityTypes(t.Context(), "nobody")
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("EntityTypes without entities = %#v, %v; want an empty, non-nil slice", got, err)
	}
	checkUsers(t, f, "nobody")

	// A server that answers a type not above the one asked about, or
	// about a type not asked, is refused rather than followed for ever.
	for _, row := range []map[string]any{
		{"after_type": "", "entity_type": ""},
		{"after_type": "org", "entity_type": "person"},
	} {
		f = (&fakeRunner{}).reply("entity_types_after", row)
		if _, err := (&tx{r: f}).EntityTypes(t.Context(), "alice"); err == nil {
			t.Errorf("answer %v was taken", row)
		}
	}
}

// observationRow is an observation as the observation statements return
// it.
func observationRow(id, entityID string) map[string]any {
	return map[string]any{"observation": map[string]any{
		"id": id, "user_id": "alice", "entity_id": entityID, "entity_type": "company", "schema_version": "1",
		"source_id": "src_1", "observed_at": t0.In(paris), "created_at": t0, "specificity_score": 0.5,
		"source_priority": int64(7), "fields_json": `{"name":"Acme"}`, "original_entity_id": entityID,
	}}
}

func TestEntitiesObservations(t *testing.T) {
	f := (&fakeRunner{}).reply("observations_of_entities", observationRow("obs_1", "ent_1"), observationRow("obs_2", "ent_2"))
	got, err := (&tx{r: f}).EntitiesObservations(t.Context(), "alice", []string{"ent_1", "ent_2", "ent_1"})
	if err != nil {
		t.Fatal(err)
	}
	want := graph.Observation{
		ID: "obs_1", UserID: "alice", EntityID: "ent_1", EntityType: "company", SchemaVersion: "1", SourceID: "src_1",
		ObservedAt: t0, CreatedAt: t0, SpecificityScore: 0.5, SourcePriority: 7,
		Fields: map[string]any{"name": "Acme"}, OriginalEntityID: "ent_1",
	}
	if len(got) != 2 || cmp.Diff(want, got[0]) != "" || got[0].ObservedAt.Location() != time.UTC {
		t.Errorf("observations = %+v, want two, the first %+v in UTC", got, want)
	}
	r := f.last(t, "observations_of_entities")
	if d := cmp.Diff([]string{"ent_1", "ent_2"}, r.params["entityIds"]); d != "" {
		t.Errorf("entityIds (-want +got):\n%s", d)
	}
	checkUsers(t, f, "alice")

	f = &fakeRunner{}
	if got, err := (&tx{r: f}).EntitiesObservations(t.Context(), "alice", nil); err != nil || got == nil || len(f.ran) != 0 {
		t.Errorf("EntitiesObservations(nil) = %#v, %v, ran %v; want an empty slice and nothing run", got, err, f.names())
	}
}

func TestObservationsByIDKeepsOrderOfIDs(t *testing.T) {
	f := (&fakeRunner{}).reply("observations_get", observationRow("obs_2", "ent_1"), observationRow("obs_1", "ent_1"))
	got, err := (&tx{r: f}).ObservationsByID(t.Context(), "alice", []string{"obs_1", "obs_9", "obs_2", "obs_1"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, o := range got {
		ids = append(ids, o.ID)
	}
	if d := cmp.Diff([]string{"obs_1", "obs_2"}, ids); d != "" {
		t.Errorf("ids (-want +got):\n%s", d)
	}
	r := f.last(t, "observations_get")
	if d := cmp.Diff([]string{"obs_1", "obs_9", "obs_2"}, r.params["ids"]); d != "" {
		t.Errorf("$ids (-want +got):\n%s", d)
	}
	checkUsers(t, f, "alice")
}
