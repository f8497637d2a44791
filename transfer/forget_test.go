package transfer_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/transfer"
	"github.com/cairnkg/cairn/vector"
)

// forgetBackends are the backends the forgetting round trips run on.
var forgetBackends = []struct {
	name string
	open func(*testing.T, *clock) backend
}{{"Embedded", openEmbedded}, {"Postgres", openPostgres}}

// forgetUser opens a backend with a user of that name and returns them,
// the clock and a caller of the user.
func forgetUser(t *testing.T, open func(*testing.T, *clock) backend, name string) (backend, *clock, consent.User, knowledge.Caller) {
	t.Helper()
	clk := &clock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	src := open(t, clk)
	u, err := src.stores.Control.CreateUser(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return src, clk, u, knowledge.Caller{UserID: u.ID, AgentID: "claude"}
}

// Exports carry what forgetting leaves (issue 37): an erased memory is a
// tombstone without content, a retracted one and an update's old content
// are versions; and an import never brings an erased memory back, nor
// makes a retracted one count again, from this export or from one made
// before, of this format version or the previous one.
func TestExportImportForgetting(t *testing.T) {
	for _, open := range forgetBackends {
		t.Run(open.name, func(t *testing.T) {
			src, clk, u, c := forgetUser(t, open.open, "dana")
			ctx := t.Context()
			const marker = "zqvforgetmarkq"
			save := func(text string) string {
				t.Helper()
				m, err := src.svc.SaveMemory(ctx, c, knowledge.MemoryRequest{Collection: "notes", Text: text})
				if err != nil {
					t.Fatal(err)
				}
				return m.ID
			}
			kept := save("Dana likes green tea")
			erased := save("Dana's diagnosis " + marker)
			retracted := save("Dana lives in Porto")
			updated := save("Dana works at Acme")
			opts := transfer.ExportOptions{Users: []consent.User{u}}
			before := exported(t, src.stores, opts)

			if _, err := src.svc.DeleteMemories(ctx, c, knowledge.MemoryDeletion{IDs: []string{erased}, Mode: knowledge.ForgetErase, Reason: "asked"}); err != nil {
				t.Fatal(err)
			}
			if _, err := src.svc.DeleteMemories(ctx, c, knowledge.MemoryDeletion{IDs: []string{retracted}, Mode: knowledge.ForgetRetract, Reason: "wrong"}); err != nil {
				t.Fatal(err)
			}
			text := "Dana works at Globex"
			if _, err := src.svc.UpdateMemory(ctx, c, knowledge.MemoryUpdate{ID: updated, Text: &text, Reason: "moved"}); err != nil {
				t.Fatal(err)
			}
			after := exported(t, src.stores, opts)
			if bytes.Contains(after, []byte(marker)) {
				t.Fatalf("the export after the erasure holds the erased text:\n%s", after)
			}
			for _, want := range []string{`"kind":"memory_tombstone"`, erased, `"state":"retracted"`, `"state":"superseded"`, "Dana works at Acme"} {
				if !bytes.Contains(after, []byte(want)) {
					t.Errorf("the export lacks %s:\n%s", want, after)
				}
			}

			// The export made before the erasure, into the store that
			// erased: the memory stays erased.
			st := imported(t, src.stores, before)
			if st.Skipped[transfer.SkipErased][transfer.KindMemory] != 1 || st.Skipped[transfer.SkipRetracted][transfer.KindMemory] != 1 {
				t.Errorf("import of the older export skipped %v, want the erased memory as erased, the retracted one as retracted", st.Skipped)
			}
			if got, _ := src.stores.Memories.Get(ctx, u.ID, []string{retracted}); len(got) != 0 {
				t.Errorf("the older export made the retracted memory count again: %+v", got)
			}
			assertGone(t, src.stores.Memories, u.ID, erased, marker)
			// So does the same file in format version 2, which had no
			// tombstones.
			v2 := bytes.Replace(before, []byte(`"version":3`), []byte(`"version":2`), 1)
			if bytes.Equal(v2, before) {
				t.Fatal("the header does not say version 3")
			}
			imported(t, src.stores, v2)
			assertGone(t, src.stores.Memories, u.ID, erased, marker)

			// The new export into a new store: the same state.
			dst := open.open(t, clk)
			imported(t, dst.stores, after)
			assertGone(t, dst.stores.Memories, u.ID, erased, marker)
			live, err := dst.stores.Memories.Get(ctx, u.ID, []string{kept, retracted, updated})
			if err != nil || len(live) != 2 || live[0].ID != kept || live[1].Text != text {
				t.Errorf("live memories after import = %+v, %v; want the kept one and the updated one", live, err)
			}
			vs, err := dst.stores.Memories.Versions(ctx, u.ID, nil)
			if err != nil || len(vs) != 2 {
				t.Fatalf("versions after import = %+v, %v", vs, err)
			}
			for _, v := range vs {
				if (v.ID == retracted && (v.State != vector.VersionRetracted || v.Reason != "wrong")) ||
					(v.ID == updated && (v.State != vector.VersionSuperseded || v.Text != "Dana works at Acme")) {
					t.Errorf("imported version %+v", v)
				}
			}
			// And the older export into that store: nothing comes back.
			imported(t, dst.stores, before)
			assertGone(t, dst.stores.Memories, u.ID, erased, marker)
			if again := exported(t, dst.stores, opts); !bytes.Equal(again, after) {
				t.Errorf("the imported store exports differently:\n%s\nwant\n%s", again, after)
			}
		})
	}
}

// assertGone checks that id is erased for user: not live, no version, a
// tombstone, and no listing holds marker.
func assertGone(t *testing.T, ms *vector.Store, user, id, marker string) {
	t.Helper()
	if got, err := ms.Get(t.Context(), user, []string{id}); err != nil || len(got) != 0 {
		t.Errorf("erased memory %s is back: %+v, %v", id, got, err)
	}
	if vs, _ := ms.Versions(t.Context(), user, []string{id}); len(vs) != 0 {
		t.Errorf("erased memory %s has versions: %+v", id, vs)
	}
	if ts, err := ms.Tombstones(t.Context(), user, []string{id}); err != nil || len(ts) != 1 {
		t.Errorf("tombstone of %s = %+v, %v", id, ts, err)
	}
	res, err := ms.Search(t.Context(), vector.Query{Filter: vector.Filter{UserID: user, Collections: []string{"notes"}}, Limit: vector.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Hits {
		if strings.Contains(h.Text, marker) {
			t.Errorf("a listed memory holds the erased text: %+v", h)
		}
	}
}

// Exports carry what erasing and retracting graph data leaves: a new
// export holds no erased content and holds the tombstone; an export made
// before the erasure, imported into the store that erased or into a copy
// made from the new export, does not bring the entity back.
func TestExportImportGraphErasure(t *testing.T) {
	for _, open := range forgetBackends {
		t.Run(open.name, func(t *testing.T) {
			src, clk, u, c := forgetUser(t, open.open, "erin")
			ctx := t.Context()
			const marker = "zqvgrapheraseq"
			res, err := src.svc.Store(ctx, c, knowledge.StoreRequest{Entities: []map[string]any{
				{"entity_type": "person", "name": "Ann " + marker, "nickname": marker},
				{"entity_type": "person", "name": "Bob Stone", "title": "Nurse"},
			}})
			if err != nil {
				t.Fatal(err)
			}
			ann, bob := res.Entities[0].EntityID, res.Entities[1].EntityID
			corr, err := src.svc.Correct(ctx, c, knowledge.CorrectRequest{EntityID: bob, EntityType: "person", Field: "title", Value: "Surgeon"})
			if err != nil {
				t.Fatal(err)
			}
			opts := transfer.ExportOptions{Users: []consent.User{u}}
			before := exported(t, src.stores, opts)
			if _, err := src.svc.Erase(ctx, c, knowledge.EraseRequest{Kind: knowledge.EraseEntity, IDs: []string{ann}, Reason: "asked"}); err != nil {
				t.Fatal(err)
			}
			if _, err := src.svc.Retract(ctx, c, knowledge.RetractRequest{ObservationIDs: []string{corr.ObservationID}, Reason: "wrong"}); err != nil {
				t.Fatal(err)
			}
			after := exported(t, src.stores, opts)
			if bytes.Contains(after, []byte(marker)) {
				t.Fatalf("the export after the erasure holds the erased content:\n%s", after)
			}
			for _, want := range []string{`"table":"graph_tombstones"`, `"table":"graph_retractions"`, ann} {
				if !bytes.Contains(after, []byte(want)) {
					t.Errorf("the export lacks %s", want)
				}
			}
			gone := func(s transfer.Stores) {
				t.Helper()
				if got := exported(t, s, opts); bytes.Contains(got, []byte(marker)) {
					t.Errorf("the store holds the erased entity again:\n%s", got)
				}
			}
			st := imported(t, src.stores, before)
			if st.Skipped[transfer.SkipErased][transfer.KindEntity] != 1 {
				t.Errorf("import of the older export skipped %v, want the erased entity as erased", st.Skipped)
			}
			gone(src.stores)

			dst := open.open(t, clk)
			imported(t, dst.stores, after)
			imported(t, dst.stores, before)
			gone(dst.stores)
			rs, err := dst.stores.Control.Retractions(ctx, u.ID, []string{corr.ObservationID})
			if err != nil || len(rs) != 1 || rs[0].Reason != "wrong" {
				t.Errorf("retractions after import = %+v, %v", rs, err)
			}
			snap, err := dst.svc.EntitySnapshot(ctx, c, bob, time.Time{})
			if err != nil || snap.Entity.Snapshot["title"] != "Nurse" {
				t.Errorf("Bob after import: %+v, %v", snap.Entity.Snapshot, err)
			}
		})
	}
}
