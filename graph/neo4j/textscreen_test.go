package neo4j

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScreenEntityText(t *testing.T) {
	f := (&fakeRunner{}).reply("entity_texts",
		map[string]any{"id": "ent_1", "entity_type": "person", "canonical_name": "Ada", "snapshot_json": `{"note":"ROCKET"}`},
		map[string]any{"id": "ent_2", "entity_type": "person", "canonical_name": "Bo", "snapshot_json": `{"note":"boat"}`},
		map[string]any{"id": "ent_3", "entity_type": "space_probe", "canonical_name": "Zoë", "snapshot_json": `{}`},
		map[string]any{"id": "ent_4", "entity_type": "place", "canonical_name": "Launch pad", "snapshot_json": `{}`},
	)
	got, err := (&tx{r: f}).ScreenEntityText(t.Context(), "alice", []string{"ent_1", "ent_2", "ent_3", "ent_4"}, []string{"rocket", "launch"})
	if err != nil {
		t.Fatal(err)
	}
	// ent_3 holds neither word but a byte beyond ASCII.
	if d := cmp.Diff([]string{"ent_1", "ent_3", "ent_4"}, got); d != "" {
		t.Errorf("kept (-want +got):\n%s", d)
	}
	if p := f.last(t, "entity_texts").params; p["userId"] != "alice" || len(p["ids"].([]string)) != 4 {
		t.Errorf("params %v", p)
	}
}
