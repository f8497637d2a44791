package neo4j

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/graph"
)

// TestExporter checks what each graph.Exporter method runs and how it
// reads the rows back: the conformance suite cannot run here without a
// Neo4j server.
func TestExporter(t *testing.T) {
	ctx := t.Context()

	t.Run("SourcesAfter", func(t *testing.T) {
		f := (&fakeRunner{}).reply("sources_after", map[string]any{"source": map[string]any{
			"id": "src_2", "user_id": "alice", "content_hash": "ab", "kind": "structured", "mime_type": "application/json",
			"original_filename": "", "size": int64(3), "provenance_json": `{"n":1}`, "created_at": t0.In(paris),
		}})
		got, err := (&tx{r: f}).SourcesAfter(ctx, "alice", "src_1", 2)
		if err != nil {
			t.Fatal(err)
		}
		want := []graph.Source{{ID: "src_2", UserID: "alice", ContentHash: "ab", Kind: "structured", MimeType: "application/json",
			Size: 3, Provenance: map[string]any{"n": json.Number("1")}, CreatedAt: t0}}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("sources (-want +got):\n%s", d)
		}
		if d := cmp.Diff(map[string]any{"userId": "alice", "afterId": "src_1", "limit": int64(2)}, f.last(t, "sources_after").params); d != "" {
			t.Errorf("params (-want +got):\n%s", d)
		}
	})

	t.Run("EntitiesAfter", func(t *testing.T) {
		f := (&fakeRunner{}).reply("entities_after", entityRow("ent_2"))
		got, err := (&tx{r: f}).EntitiesAfter(ctx, "alice", "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != "ent_2" || got[0].Snapshot["staff"] != json.Number("120") {
			t.Errorf("entities = %+v", got)
		}
		if p := f.last(t, "entities_after").params; p["afterId"] != "" || p["limit"] != int64(10) {
			t.Errorf("params = %v", p)
		}
	})

	t.Run("EntitiesIdentifiersGroupsAndSorts", func(t *testing.T) {
		f := (&fakeRunner{}).reply("entities_identifiers",
			map[string]any{"entity_id": "ent_2", "field": "name", "value": "zed"},
			map[string]any{"entity_id": "ent_1", "field": "name", "value": "ann"},
			map[string]any{"entity_id": "ent_2", "field": "email", "value": "z@x.org"},
			map[string]any{"entity_id": "ent_2", "field": "name", "value": "acme"},
		)
		got, err := (&tx{r: f}).EntitiesIdentifiers(ctx, "alice", []string{"ent_2", "ent_1", "ent_2"})
		if err != nil {
			t.Fatal(err)
		}
		want := []graph.EntityIdentifiers{
			{EntityID: "ent_1", Identifiers: []graph.Identifier{{Field: "name", Value: "ann"}}},
			{EntityID: "ent_2", Identifiers: []graph.Identifier{{Field: "email", Value: "z@x.org"}, {Field: "name", Value: "acme"}, {Field: "name", Value: "zed"}}},
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("identifiers (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]string{"ent_2", "ent_1"}, f.last(t, "entities_identifiers").params["entityIds"]); d != "" {
			t.Errorf("entityIds (-want +got):\n%s", d)
		}
	})

	t.Run("EntitiesTimelines", func(t *testing.T) {
		ev := func(id, entity string) map[string]any {
			return map[string]any{"event": map[string]any{
				"id": id, "user_id": "alice", "entity_id": entity, "event_type": "founded", "timestamp": "2001-01-01",
				"time": t0, "source_id": "src_1", "properties_json": "{}",
			}}
		}
		f := (&fakeRunner{}).reply("entities_timelines", ev("evt_2", "ent_1"), ev("evt_3", "ent_0"), ev("evt_1", "ent_1"))
		got, err := (&tx{r: f}).EntitiesTimelines(ctx, "alice", []string{"ent_1", "ent_0"})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, tl := range got {
			for _, e := range tl.Events {
				ids = append(ids, tl.EntityID+"/"+e.ID)
			}
		}
		if d := cmp.Diff([]string{"ent_0/evt_3", "ent_1/evt_1", "ent_1/evt_2"}, ids); d != "" {
			t.Errorf("events (-want +got):\n%s", d)
		}
	})

	t.Run("NoEntitiesRunsNothing", func(t *testing.T) {
		f := &fakeRunner{}
		x := &tx{r: f}
		if got, err := x.EntitiesIdentifiers(ctx, "alice", nil); err != nil || len(got) != 0 {
			t.Errorf("EntitiesIdentifiers(nil) = %v, %v", got, err)
		}
		if got, err := x.EntitiesTimelines(ctx, "alice", nil); err != nil || len(got) != 0 {
			t.Errorf("EntitiesTimelines(nil) = %v, %v", got, err)
		}
		if got, err := x.RawFragmentsByID(ctx, "alice", nil); err != nil || len(got) != 0 {
			t.Errorf("RawFragmentsByID(nil) = %v, %v", got, err)
		}
		if len(f.ran) != 0 {
			t.Errorf("ran %v, want nothing", f.names())
		}
	})

	t.Run("RawFragments", func(t *testing.T) {
		frag := func(id, value string) map[string]any {
			return map[string]any{"fragment": map[string]any{
				"id": id, "user_id": "alice", "source_id": "src_1", "entity_id": "ent_1", "entity_type": "person",
				"field": "extra", "value_json": value, "created_at": t0,
			}}
		}
		f := (&fakeRunner{}).reply("raw_fragments_get", frag("raw_1", `{"a":[1,"x"]}`), frag("raw_2", `7`))
		got, err := (&tx{r: f}).RawFragmentsByID(ctx, "alice", []string{"raw_2", "raw_9", "raw_1"})
		if err != nil {
			t.Fatal(err)
		}
		want := []graph.RawFragment{
			{ID: "raw_2", UserID: "alice", SourceID: "src_1", EntityID: "ent_1", EntityType: "person", Field: "extra", Value: json.Number("7"), CreatedAt: t0},
			{ID: "raw_1", UserID: "alice", SourceID: "src_1", EntityID: "ent_1", EntityType: "person", Field: "extra",
				Value: map[string]any{"a": []any{json.Number("1"), "x"}}, CreatedAt: t0},
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("fragments (-want +got):\n%s", d)
		}
		f.reply("raw_fragments_after", frag("raw_3", `"s"`))
		after, err := (&tx{r: f}).RawFragmentsAfter(ctx, "alice", "raw_2", 5)
		if err != nil || len(after) != 1 || after[0].Value != "s" {
			t.Errorf("RawFragmentsAfter = %+v, %v", after, err)
		}
		if p := f.last(t, "raw_fragments_after").params; p["afterId"] != "raw_2" || p["limit"] != int64(5) {
			t.Errorf("params = %v", p)
		}
	})

	t.Run("RelationshipPeriodsAfter", func(t *testing.T) {
		rel := map[string]any{"relationship": map[string]any{
			"id": "rel_1", "user_id": "alice", "metadata_json": "{}", "provenance_json": "{}", "observation_count": int64(1),
			"created_at": t0, "last_observation_at": t0, "ended_at": t0.Add(5e9), "type": "PART_OF",
			"source_entity_id": "ent_1", "target_entity_id": "ent_2", "source_type": "person", "target_type": "company",
		}}
		f := (&fakeRunner{}).reply("relationship_periods_after", rel).reply("relationship_periods_after")
		x := &tx{r: f}
		got, err := x.RelationshipPeriodsAfter(ctx, "alice", graph.PeriodKey{}, 1)
		if err != nil {
			t.Fatal(err)
		}
		want := []graph.Relationship{{ID: "rel_1", UserID: "alice", Type: "PART_OF", SourceEntityID: "ent_1", TargetEntityID: "ent_2",
			Metadata: map[string]any{}, Provenance: map[string]string{}, ObservationCount: 1, CreatedAt: t0, LastObservationAt: t0,
			EndedAt: t0.Add(5e9)}}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("periods (-want +got):\n%s", d)
		}
		if p := f.last(t, "relationship_periods_after").params; p["afterId"] != "" || p["afterCreatedAt"] != nil {
			t.Errorf("zero key params = %v, want afterId \"\" and afterCreatedAt null", p)
		}
		if _, err := x.RelationshipPeriodsAfter(ctx, "alice", got[0].Key(), 1); err != nil {
			t.Fatal(err)
		}
		if p := f.last(t, "relationship_periods_after").params; p["afterId"] != "rel_1" || p["afterCreatedAt"] != t0 {
			t.Errorf("next key params = %v, want afterId rel_1 and afterCreatedAt %v", p, t0)
		}
	})
}
