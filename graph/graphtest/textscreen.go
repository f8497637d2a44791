package graphtest

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/graph"
)

// testTextScreen holds graph.Tx.ScreenEntityText to graph.TextScreener's
// contract: it keeps every entity whose type, name or snapshot holds a word
// (upper case, escaped neighbours and numbers included) or any byte
// outside ASCII, in the order asked; a driver with the capability drops
// every other entity and every id that is not the user's; one without it
// keeps every id.
func testTextScreen(t *testing.T, newStore Harness) {
	s := newStore(t)
	ent := func(id, typ, name string, snap map[string]any) graph.Entity {
		e := newEntity(alice, id, typ, at(epoch, len(id)))
		e.CanonicalName, e.Snapshot = name, snap
		return e
	}
	ents := []graph.Entity{
		ent("ent_alice_t1", "person", "Ada Lovelace", map[string]any{"note": "Rocket <launch> & co", "n": json.Number("4217")}),
		ent("ent_alice_t2", "space_probe", "Voyager", map[string]any{"mission": "flyby"}),
		ent("ent_alice_t3", "person", "Zoë Café", map[string]any{"role": "buyer"}),
		ent("ent_alice_t4", "place", "Pad 39A", map[string]any{"text": "LAUNCH\nPAD", "nested": map[string]any{"deep": "orbit"}}),
		ent("ent_alice_t5", "place", "Field", map[string]any{"rocket": true}),
		ent("ent_alice_t6", "thing", "Plain", map[string]any{"colour": "grey"}),
	}
	bobs := newEntity(bob, "ent_bob_t1", "person", epoch)
	bobs.CanonicalName, bobs.Snapshot = "Rocket Bob", map[string]any{"note": "launch"}
	putEntities(t, s, ents...)
	putEntities(t, s, bobs)
	ids := []string{"ent_alice_t6", "ent_alice_t5", "ent_alice_t4", "ent_alice_t3", "ent_alice_t2", "ent_alice_t1", "ent_bob_t1", "ent_alice_none"}

	// The screen a driver with the capability must give: Go's lower case
	// of the type, the name and the snapshot's JSON, or a byte beyond
	// ASCII.
	exact := func(words []string) []string {
		var out []string
		for _, id := range ids {
			i := slices.IndexFunc(ents, func(e graph.Entity) bool { return e.ID == id })
			if i < 0 {
				continue
			}
			e := ents[i]
			snap, err := json.Marshal(e.Snapshot)
			if err != nil {
				t.Fatal(err)
			}
			text := e.Type + " " + e.CanonicalName + " " + string(snap)
			keep := strings.ContainsFunc(text, func(r rune) bool { return r > 127 })
			for _, w := range words {
				keep = keep || strings.Contains(strings.ToLower(text), w)
			}
			if keep {
				out = append(out, id)
			}
		}
		return out
	}
	for _, words := range [][]string{{"launch"}, {"rocket", "probe"}, {"4217"}, {"orbit"}, {"zzz"}, {"lovelace", "grey"}} {
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]string, error) {
			out, err := tx.ScreenEntityText(ctx, alice, ids, words)
			if _, ok := tx.DriverTx.(graph.TextScreener); !ok {
				diff(t, "without the capability, ids kept", ids, out)
				return nil, err
			}
			return out, err
		})
		if got == nil {
			continue
		}
		diff(t, "screen of "+strings.Join(words, " "), exact(words), got)
	}
	// Words the screen cannot take keep every id.
	for _, words := range [][]string{nil, {"Rocket"}, {"café"}, {"a b"}} {
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]string, error) {
			return tx.ScreenEntityText(ctx, alice, ids, words)
		})
		diff(t, "screen of unscreenable words", ids, got)
	}
}
