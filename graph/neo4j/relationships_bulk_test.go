package neo4j

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/graph"
)

// The bulk methods of a batch of relationships, run against the fakeRunner
// of tx_test.go, as bulk_test.go does for the store pipeline's.

func TestPutRelationshipsOneStatementPerUserAndType(t *testing.T) {
	f := (&fakeRunner{}).
		reply("relationships_put", map[string]any{"written": int64(2)}).
		reply("relationships_put", written1).
		reply("relationships_put", written1)
	rs := []graph.Relationship{
		{ID: "rel_1", UserID: "alice", Type: graph.RefersTo, SourceEntityID: "ent_a", TargetEntityID: "ent_b", CreatedAt: t0.In(paris),
			Metadata: map[string]any{"since": 2020, "nested": map[string]any{"x": 1}}, ObservationCount: 3, LastObservationAt: t0},
		{ID: "rel_2", UserID: "alice", Type: graph.Settles, SourceEntityID: "ent_a", TargetEntityID: "ent_c", CreatedAt: t0, EndedAt: t0.Add(time.Second)},
		{ID: "rel_3", UserID: "bob", Type: graph.RefersTo, SourceEntityID: "ent_x", TargetEntityID: "ent_y", CreatedAt: t0},
		{ID: "rel_1", UserID: "alice", Type: graph.RefersTo, SourceEntityID: "ent_a", TargetEntityID: "ent_b", CreatedAt: t0.Add(-time.Hour)},
	}
	if err := (&tx{r: f, write: true}).PutRelationships(t.Context(), rs); err != nil {
		t.Fatal(err)
	}
	want := []string{"user_lock", "relationships_put", "relationships_put", "user_lock", "relationships_put"}
	if d := cmp.Diff(want, f.names()); d != "" {
		t.Errorf("statements (-want +got):\n%s", d)
	}
	checkUsers(t, f, "alice", "bob")
	for i, tc := range []struct {
		user, relType string
		ids           []string
	}{
		{"alice", "r:REFERS_TO", []string{"rel_1", "rel_1"}},
		{"alice", "r:SETTLES", []string{"rel_2"}},
		{"bob", "r:REFERS_TO", []string{"rel_3"}},
	} {
		user, rows, query := rowsOf(t, f, "relationships_put", i)
		if user != tc.user || !strings.Contains(query, tc.relType) {
			t.Errorf("run %d: user %s, type in %q; want %s, %s", i, user, query, tc.user, tc.relType)
		}
		if d := cmp.Diff(tc.ids, idsOf(rows, "id")); d != "" {
			t.Errorf("run %d: ids (-want +got):\n%s", i, d)
		}
	}
	_, rows, _ := rowsOf(t, f, "relationships_put", 0)
	row := rows[0]
	if got := row["created_at"].(time.Time); got.Location() != time.UTC || !got.Equal(t0) {
		t.Errorf("created_at = %v, want %v in UTC", got, t0)
	}
	if row["metadata_json"] != `{"nested":{"x":1},"since":2020}` || row["observation_count"] != int64(3) || row["ended_at"] != nil {
		t.Errorf("row = %v", row)
	}
	if d := cmp.Diff(map[string]any{"since": int64(2020)}, row["metadata_props"]); d != "" {
		t.Errorf("metadata_props (-want +got):\n%s", d)
	}
	if _, rows, _ := rowsOf(t, f, "relationships_put", 1); rows[0]["ended_at"] == nil {
		t.Errorf("ended relationship's row has no ended_at: %v", rows[0])
	}
}

func TestPutRelationshipsErrors(t *testing.T) {
	ctx := t.Context()
	two := []graph.Relationship{
		{ID: "rel_1", UserID: "alice", Type: graph.RefersTo, CreatedAt: t0},
		{ID: "rel_2", UserID: "alice", Type: graph.RefersTo, CreatedAt: t0},
	}
	t.Run("MissingEndpoint", func(t *testing.T) {
		f := (&fakeRunner{}).reply("relationships_put", written1)
		err := (&tx{r: f, write: true}).PutRelationships(ctx, two)
		if !errors.Is(err, graph.ErrNotFound) || !strings.Contains(err.Error(), "1 of 2") {
			t.Errorf("err = %v, want graph.ErrNotFound for 1 of 2", err)
		}
	})
	t.Run("PeriodTwiceRunsNothing", func(t *testing.T) {
		f := &fakeRunner{}
		err := (&tx{r: f, write: true}).PutRelationships(ctx, []graph.Relationship{two[0], two[1], two[0]})
		if err == nil || !strings.Contains(err.Error(), "rel_1") || len(f.ran) != 0 {
			t.Errorf("err = %v, ran %v; want an error naming rel_1 and nothing run", err, f.names())
		}
	})
	t.Run("InvalidType", func(t *testing.T) {
		f := &fakeRunner{}
		err := (&tx{r: f, write: true}).PutRelationships(ctx, []graph.Relationship{{ID: "rel_1", UserID: "alice", Type: "bad type", CreatedAt: t0}})
		if !errors.Is(err, graph.ErrInvalidRelationshipType) {
			t.Errorf("err = %v, want graph.ErrInvalidRelationshipType", err)
		}
	})
	t.Run("Nothing", func(t *testing.T) {
		f := &fakeRunner{}
		if err := (&tx{r: f, write: true}).PutRelationships(ctx, nil); err != nil || len(f.ran) != 0 {
			t.Errorf("PutRelationships(nil) = %v, ran %v; want nothing", err, f.names())
		}
	})
}

// relationshipRow is a period as relationships_get returns it.
func relationshipRow(id string, created time.Time) map[string]any {
	return map[string]any{"relationship": map[string]any{
		"id": id, "user_id": "alice", "type": graph.RefersTo, "source_entity_id": "ent_a", "target_entity_id": "ent_b",
		"source_type": "company", "target_type": "company", "metadata_json": `{"n":1}`, "provenance_json": `{}`,
		"observation_count": int64(1), "created_at": created.In(paris), "last_observation_at": created, "ended_at": nil,
	}}
}

func TestRelationshipsKeepsNewestInOrderOfIDs(t *testing.T) {
	f := (&fakeRunner{}).reply("relationships_get",
		relationshipRow("rel_1", t0), relationshipRow("rel_2", t0), relationshipRow("rel_1", t0.Add(time.Hour)),
		relationshipRow("rel_1", t0.Add(-time.Hour)))
	got, err := (&tx{r: f}).Relationships(t.Context(), "alice", []string{"rel_2", "rel_9", "rel_1", "rel_2"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	if d := cmp.Diff([]string{"rel_2", "rel_1"}, ids); d != "" {
		t.Errorf("ids (-want +got):\n%s", d)
	}
	if !got[1].CreatedAt.Equal(t0.Add(time.Hour)) || got[1].CreatedAt.Location() != time.UTC {
		t.Errorf("rel_1 period starts %v, want the newest (%v) in UTC", got[1].CreatedAt, t0.Add(time.Hour))
	}
	if d := cmp.Diff([]any{"rel_2", "rel_9", "rel_1"}, anyStrings(f.last(t, "relationships_get").params["ids"])); d != "" {
		t.Errorf("$ids (-want +got):\n%s", d)
	}
}

func anyStrings(v any) []any {
	ss, _ := v.([]string)
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func TestInsertRelationshipObservations(t *testing.T) {
	ctx := t.Context()
	src := map[string]any{"source": map[string]any{"id": "src_1", "user_id": "alice"}}
	two := []graph.RelationshipObservation{
		{ID: "robs_1", UserID: "alice", RelationshipID: "rel_1", SourceID: "src_1", ObservedAt: t0.In(paris), Metadata: map[string]any{"a": 1}},
		{ID: "robs_2", UserID: "alice", RelationshipID: "rel_2", SourceID: "src_1", ObservedAt: t0},
	}
	t.Run("Rows", func(t *testing.T) {
		f := (&fakeRunner{}).reply("relationship_observations_insert", map[string]any{"written": int64(2)})
		if err := (&tx{r: f, write: true}).InsertRelationshipObservations(ctx, two); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{"user_lock", "relationship_observations_insert"}, f.names()); d != "" {
			t.Errorf("statements (-want +got):\n%s", d)
		}
		_, rows, _ := rowsOf(t, f, "relationship_observations_insert", 0)
		if rows[0]["relationship_id"] != "rel_1" || rows[0]["metadata_json"] != `{"a":1}` || rows[0]["observed_at"].(time.Time).Location() != time.UTC {
			t.Errorf("row = %v", rows[0])
		}
		if _, ok := rows[0]["user_id"]; ok {
			t.Errorf("a row names its user; only $userId may")
		}
	})
	t.Run("RepeatedIDRunsNothing", func(t *testing.T) {
		f := &fakeRunner{}
		err := (&tx{r: f, write: true}).InsertRelationshipObservations(ctx, []graph.RelationshipObservation{two[0], two[1], two[0]})
		if !errors.Is(err, graph.ErrConflict) || len(f.ran) != 0 {
			t.Errorf("err = %v, ran %v; want graph.ErrConflict and nothing run", err, f.names())
		}
	})
	t.Run("ExistingID", func(t *testing.T) {
		f := (&fakeRunner{}).reply("relationship_observations_insert", written1).reply("source_get", src)
		err := (&tx{r: f, write: true}).InsertRelationshipObservations(ctx, two)
		if !errors.Is(err, graph.ErrConflict) || !strings.Contains(err.Error(), "1 of 2") {
			t.Errorf("err = %v, want graph.ErrConflict for 1 of 2", err)
		}
	})
	t.Run("OneStatementPerUser", func(t *testing.T) {
		f := (&fakeRunner{}).reply("relationship_observations_insert", written1).reply("relationship_observations_insert", written1)
		bobs := graph.RelationshipObservation{ID: "robs_9", UserID: "bob", SourceID: "src_9"}
		if err := (&tx{r: f, write: true}).InsertRelationshipObservations(ctx, []graph.RelationshipObservation{two[0], bobs}); err != nil {
			t.Fatal(err)
		}
		checkUsers(t, f, "alice", "bob")
		if d := cmp.Diff([]string{"user_lock", "relationship_observations_insert", "user_lock", "relationship_observations_insert"}, f.names()); d != "" {
			t.Errorf("statements (-want +got):\n%s", d)
		}
	})
}

func TestRelationshipsObservations(t *testing.T) {
	f := (&fakeRunner{}).reply("relationship_observations_of", map[string]any{"observation": map[string]any{
		"id": "robs_1", "user_id": "alice", "relationship_id": "rel_1", "source_id": "src_1",
		"observed_at": t0.In(paris), "created_at": t0, "specificity_score": 0.5, "source_priority": int64(100),
		"metadata_json": `{"n":1}`,
	}})
	got, err := (&tx{r: f}).RelationshipsObservations(t.Context(), "alice", []string{"rel_1", "rel_2", "rel_1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []graph.RelationshipObservation{{ID: "robs_1", UserID: "alice", RelationshipID: "rel_1", SourceID: "src_1",
		ObservedAt: t0, CreatedAt: t0, SpecificityScore: 0.5, SourcePriority: 100, Metadata: map[string]any{"n": json.Number("1")}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("observations (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]any{"rel_1", "rel_2"}, anyStrings(f.last(t, "relationship_observations_of").params["relationshipIds"])); d != "" {
		t.Errorf("$relationshipIds (-want +got):\n%s", d)
	}
	f = &fakeRunner{}
	if got, err := (&tx{r: f}).RelationshipsObservations(t.Context(), "alice", nil); err != nil || len(got) != 0 || len(f.ran) != 0 {
		t.Errorf("no ids: %v, %v, ran %v; want nothing", got, err, f.names())
	}
}

// sourceRow is a source as sources_ensure returns it.
func sourceRow(user, id, hash string) map[string]any {
	return map[string]any{"source": map[string]any{
		"id": id, "user_id": user, "content_hash": hash, "kind": "relationship", "mime_type": "application/json",
		"original_filename": "", "size": int64(10), "provenance_json": `{"agent_id":"claude"}`, "created_at": t0.In(paris),
	}}
}

func TestEnsureSources(t *testing.T) {
	ctx := t.Context()
	src := func(user, id, hash string) graph.Source {
		return graph.Source{ID: id, UserID: user, ContentHash: hash, Kind: "relationship", CreatedAt: t0}
	}
	srcs := []graph.Source{src("alice", "src_1", "h1"), src("alice", "src_2", "h2"), src("alice", "src_1b", "h1"), src("bob", "src_9", "h1")}
	f := (&fakeRunner{}).
		reply("sources_ensure", sourceRow("alice", "src_0", "h1"), sourceRow("alice", "src_2", "h2")).
		reply("sources_ensure", sourceRow("bob", "src_9", "h1"))
	got, err := (&tx{r: f, write: true}).EnsureSources(ctx, srcs)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range got {
		ids = append(ids, s.ID)
	}
	// alice's h1 was stored already as src_0: it answers for both of hers.
	if d := cmp.Diff([]string{"src_0", "src_2", "src_0", "src_9"}, ids); d != "" {
		t.Errorf("sources (-want +got):\n%s", d)
	}
	checkUsers(t, f, "alice", "bob")
	if _, rows, _ := rowsOf(t, f, "sources_ensure", 0); !cmp.Equal([]string{"src_1", "src_2"}, idsOf(rows, "id")) {
		t.Errorf("alice's rows = %v, want src_1 and src_2: a hash once", idsOf(rows, "id"))
	}

	f = (&fakeRunner{}).reply("sources_ensure", sourceRow("alice", "src_1", "h1"))
	_, err = (&tx{r: f, write: true}).EnsureSources(ctx, srcs[:2])
	if !errors.Is(err, graph.ErrConflict) || !strings.Contains(err.Error(), "src_2") {
		t.Errorf("a hash given nothing back: err = %v, want graph.ErrConflict naming src_2", err)
	}
}
