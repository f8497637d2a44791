package graphtest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/cairnkg/cairn/graph"
)

// TextSigBackfill holds a driver's graph.TextSigBackfiller to its
// contract: after forget has cleared the signatures of every entity of d
// (as migration 016 leaves the rows written before it),
// graph.BackfillTextSigs gives each entity of every user the signature its
// write would have stored, in batches, and then finds nothing left to do.
// Drivers without the capability do not call it.
func TextSigBackfill(t *testing.T, d graph.Driver, forget func(t *testing.T)) {
	s := graph.NewStore(d)
	var want []graph.Entity
	for i := range 1203 {
		user := alice
		if i%400 == 0 {
			user = bob
		}
		e := newEntity(user, fmt.Sprintf("ent_%s_sig%04d", user, i), []string{"person", "space_probe"}[i%2], at(epoch, i%50))
		e.Snapshot = map[string]any{"note": fmt.Sprintf("Rocket %d ZÜRICH", i), "n": json.Number(fmt.Sprint(i)), "tags": []any{"x"}}
		if i == 7 {
			e.Snapshot["odd"] = []string{"no text foreseen"}
		}
		want = append(want, e)
	}
	putEntities(t, s, want...)
	stats := func() map[string]graph.TextSig {
		out := map[string]graph.TextSig{}
		for _, user := range []string{alice, bob} {
			got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.EntityStat, error) {
				return tx.ListEntityStats(ctx, graph.EntityFilter{UserID: user, TextSigs: true, Page: graph.Page{Limit: 5000}})
			})
			for _, e := range got {
				out[e.ID] = e.TextSig
			}
		}
		return out
	}
	forget(t)
	for id, sig := range stats() {
		if sig != nil {
			t.Fatalf("%s kept its signature after forget", id)
		}
	}
	var progress []int
	n, err := graph.BackfillTextSigs(t.Context(), d, func(done int) { progress = append(progress, done) })
	if err != nil || n != len(want) {
		t.Fatalf("BackfillTextSigs = %d, %v; want %d", n, err, len(want))
	}
	diff(t, "progress", []int{500, 1000, 1203}, progress)
	// The signature of the stored entity, as the store reads it (the
	// []string of entity 7 comes back a []any, whose text it foresees).
	got := stats()
	for _, user := range []string{alice, bob} {
		stored := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Entity, error) {
			ents, _, err := tx.ListEntities(ctx, graph.EntityFilter{UserID: user, Page: graph.Page{Limit: 5000}})
			return ents, err
		})
		for _, e := range stored {
			if string(got[e.ID]) != string(graph.EntityTextSig(e)) {
				t.Errorf("%s: signature %v after the backfill, want %v", e.ID, got[e.ID], graph.EntityTextSig(e))
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d entities listed, want %d", len(got), len(want))
	}
	if n, err := graph.BackfillTextSigs(t.Context(), d, nil); err != nil || n != 0 {
		t.Errorf("a second BackfillTextSigs = %d, %v; want 0", n, err)
	}
}
