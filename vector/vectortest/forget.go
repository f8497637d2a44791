package vectortest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cairnkg/cairn/vector"
)

// testForget checks Update, Retract and Erase: what leaves every read,
// what is kept as a version, and what remains of an erased memory. Each
// read runs once before the change too, so that a driver that caches rows
// must notice the removal.
func testForget(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := t.Context()
	ms := save(t, s, testSpace,
		vector.Memory{UserID: alice, Collection: "notes", Title: "Diagnosis", Text: "alpha walrus diagnosis", Tags: []string{"health"},
			Metadata: map[string]any{"k": "v"}, Embedding: unit(32, 1), CreatedAt: epoch},
		vector.Memory{UserID: alice, Collection: "notes", Text: "bravo walrus holiday", Embedding: unit(32, 2), CreatedAt: epoch.Add(time.Second)},
		vector.Memory{UserID: alice, Collection: "notes", Text: "charlie walrus garden", Embedding: unit(32, 3), CreatedAt: epoch.Add(2 * time.Second)},
		vector.Memory{UserID: bob, Collection: "notes", Text: "bob walrus", Embedding: unit(32, 1)},
	)
	a, b, c := ms[0], ms[1], ms[2]
	found := func(text string, vec []float32) []string {
		t.Helper()
		res := search(t, s, vector.Query{Filter: vector.Filter{UserID: alice, Collections: []string{"notes"}},
			Text: text, Vector: vec, Space: testSpace, MinSimilarity: ptr(0.9)})
		ids := hitIDs(res.Hits)
		slices.Sort(ids)
		return ids
	}
	listed := func() ([]string, int) {
		t.Helper()
		res := search(t, s, vector.Query{Filter: vector.Filter{UserID: alice, Collections: []string{"notes"}}})
		return hitIDs(res.Hits), res.Total
	}
	count := func() int {
		t.Helper()
		cs, err := s.Collections(ctx, alice, nil)
		if err != nil || len(cs) != 1 {
			t.Fatalf("Collections = %+v, %v", cs, err)
		}
		return cs[0].Count
	}
	if got := found("diagnosis", unit(32, 1)); !slices.Equal(got, []string{a.ID}) {
		t.Fatalf("before: found %v, want %v", got, a.ID)
	}
	by := vector.Removal{At: epoch.Add(time.Hour), Actor: "agt_claude", Reason: "that was wrong"}

	// Retract.
	if _, err := s.Retract(ctx, alice, nil, by); !errors.Is(err, vector.ErrInvalid) {
		t.Errorf("Retract of no ids: err = %v, want ErrInvalid", err)
	}
	if _, err := s.Retract(ctx, alice, []string{a.ID}, vector.Removal{}); !errors.Is(err, vector.ErrInvalid) {
		t.Errorf("Retract without an actor: err = %v, want ErrInvalid", err)
	}
	if got, err := s.Retract(ctx, bob, []string{a.ID}, by); err != nil || len(got) != 0 {
		t.Errorf("bob retracts alice's memory: %v, %v; want nothing retracted", got, err)
	}
	got, err := s.Retract(ctx, alice, []string{"mem_missing", a.ID, a.ID}, by)
	if err != nil || !slices.Equal(got, []string{a.ID}) {
		t.Fatalf("Retract = %v, %v; want [%s]", got, err, a.ID)
	}
	if got := found("diagnosis", unit(32, 1)); len(got) != 0 {
		t.Errorf("a retracted memory is still found by text or vector: %v", got)
	}
	if ids, total := listed(); total != 2 || slices.Contains(ids, a.ID) {
		t.Errorf("listing after a retraction: %v (total %d)", ids, total)
	}
	if n := count(); n != 2 {
		t.Errorf("collection count after a retraction = %d, want 2", n)
	}
	if got, _ := s.Get(ctx, alice, []string{a.ID}); len(got) != 0 {
		t.Errorf("Get of a retracted memory = %+v", got)
	}
	if vs, _ := s.Vectors(ctx, alice, []string{a.ID}); len(vs) != 0 {
		t.Errorf("Vectors of a retracted memory = %v", vs)
	}
	vs, err := s.Versions(ctx, alice, []string{a.ID})
	want := a
	want.Embedding = nil
	if err != nil || len(vs) != 1 {
		t.Fatalf("Versions(a) = %+v, %v", vs, err)
	}
	if diff := cmp.Diff(vector.Version{Memory: want, State: vector.VersionRetracted, Removal: by}, vs[0], cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("retracted version (-want +got):\n%s", diff)
	}
	if got, err := s.Retract(ctx, alice, []string{a.ID}, by); err != nil || len(got) != 0 {
		t.Errorf("retracting again: %v, %v; want nothing", got, err)
	}

	// Update.
	if _, err := s.Update(ctx, testSpace, vector.Memory{ID: a.ID, UserID: alice, Text: "x", Embedding: unit(32, 4)}, by); !errors.Is(err, vector.ErrNotFound) {
		t.Errorf("updating a retracted memory: err = %v, want ErrNotFound", err)
	}
	if _, err := s.Update(ctx, testSpace, vector.Memory{ID: b.ID, UserID: bob, Text: "x", Embedding: unit(32, 4)}, by); !errors.Is(err, vector.ErrNotFound) {
		t.Errorf("bob updates alice's memory: err = %v, want ErrNotFound", err)
	}
	if got := found("holiday", unit(32, 2)); !slices.Equal(got, []string{b.ID}) {
		t.Fatalf("before the update: %v", got)
	}
	upd := vector.Memory{ID: b.ID, UserID: alice, Collection: "ignored", Title: "Trip", Text: "delta walrus voyage", Tags: []string{"travel"},
		Metadata: map[string]any{"n": 1.0}, Embedding: unit(32, 5), CreatedAt: epoch.Add(time.Minute)}
	updated, err := s.Update(ctx, testSpace, upd, by)
	if err != nil {
		t.Fatal(err)
	}
	wantNew := upd
	wantNew.Collection, wantNew.CreatedAt, wantNew.OccurredAt, wantNew.Embedding = "notes", b.CreatedAt, b.OccurredAt, nil
	if diff := cmp.Diff(wantNew, updated, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Update (-want +got):\n%s", diff)
	}
	if gotM, _ := s.Get(ctx, alice, []string{b.ID}); len(gotM) != 1 || cmp.Diff(wantNew, gotM[0], cmpopts.EquateEmpty()) != "" {
		t.Errorf("Get after the update = %+v, want %+v", gotM, wantNew)
	}
	if got := found("holiday", unit(32, 2)); len(got) != 0 {
		t.Errorf("the replaced text or vector still finds the memory: %v", got)
	}
	if got := found("voyage", unit(32, 5)); !slices.Equal(got, []string{b.ID}) {
		t.Errorf("the new text and vector find %v, want [%s]", got, b.ID)
	}
	if n := count(); n != 2 {
		t.Errorf("collection count after an update = %d, want 2", n)
	}
	vs, err = s.Versions(ctx, alice, []string{b.ID})
	if err != nil || len(vs) != 1 || vs[0].State != vector.VersionSuperseded || vs[0].Text != b.Text || vs[0].Removal != by {
		t.Errorf("Versions(b) = %+v, %v; want the replaced content, superseded", vs, err)
	}

	// Erase: a retracted memory, an updated one with its old version, a
	// live one and a missing id, in one batch.
	if got := found("charlie", unit(32, 3)); !slices.Equal(got, []string{c.ID}) {
		t.Fatalf("before the erasure: %v", got)
	}
	if ts, n, err := s.Erase(ctx, bob, []string{a.ID, b.ID}, by); err != nil || len(ts) != 0 || n != (vector.Erased{}) {
		t.Errorf("bob erases alice's memories: %v, %+v, %v; want nothing", ts, n, err)
	}
	ts, n, err := s.Erase(ctx, alice, []string{a.ID, b.ID, c.ID, "mem_missing"}, by)
	if err != nil {
		t.Fatal(err)
	}
	if want := (vector.Erased{Memories: 2, Retracted: 1, Versions: 1}); n != want {
		t.Errorf("Erase counts %+v, want %+v", n, want)
	}
	wantTs := []vector.Tombstone{
		{ID: a.ID, UserID: alice, Collection: "notes", Removal: by},
		{ID: b.ID, UserID: alice, Collection: "notes", Removal: by},
		{ID: c.ID, UserID: alice, Collection: "notes", Removal: by},
	}
	if diff := cmp.Diff(wantTs, ts); diff != "" {
		t.Errorf("tombstones (-want +got):\n%s", diff)
	}
	stored, err := s.Tombstones(ctx, alice, nil)
	slices.SortFunc(wantTs, func(x, y vector.Tombstone) int { return strings.Compare(x.ID, y.ID) })
	if err != nil || cmp.Diff(wantTs, stored) != "" {
		t.Errorf("Tombstones = %+v, %v; want %+v", stored, err, wantTs)
	}
	if vs, err := s.Versions(ctx, alice, nil); err != nil || len(vs) != 0 {
		t.Errorf("versions left after the erasure: %+v, %v", vs, err)
	}
	for _, q := range []struct {
		text string
		vec  []float32
	}{{"charlie", unit(32, 3)}, {"voyage", unit(32, 5)}, {"walrus", unit(32, 1)}} {
		if got := found(q.text, q.vec); len(got) != 0 {
			t.Errorf("%s: erased memories found: %v", q.text, got)
		}
	}
	if ids, total := listed(); total != 0 || len(ids) != 0 {
		t.Errorf("listing after the erasure: %v (total %d)", ids, total)
	}
	if n := count(); n != 0 {
		t.Errorf("collection count after the erasure = %d, want 0", n)
	}
	if ts, n, err := s.Erase(ctx, alice, []string{a.ID}, by); err != nil || len(ts) != 0 || n != (vector.Erased{}) {
		t.Errorf("erasing again: %v, %+v, %v; want nothing", ts, n, err)
	}
	if err := s.Compact(ctx); err != nil {
		t.Errorf("Compact: %v", err)
	}
	// Bob's memory is untouched.
	if got, _ := s.Get(ctx, bob, []string{ms[3].ID}); len(got) != 1 {
		t.Errorf("bob's memory is gone: %+v", got)
	}
	if ts, _ := s.Tombstones(ctx, bob, nil); len(ts) != 0 {
		t.Errorf("bob has alice's tombstones: %+v", ts)
	}

	// DropSpaces: alice's emptied collection goes; one that still holds a
	// memory, or only a retracted version, stays, as do bob's.
	d := save(t, s, testSpace, vector.Memory{UserID: alice, Collection: "kept", Text: "delta", Embedding: unit(32, 4)},
		vector.Memory{UserID: alice, Collection: "retracted", Text: "echo", Embedding: unit(32, 5)})
	if _, err := s.Retract(ctx, alice, []string{d[1].ID}, by); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DropSpaces(ctx, alice); err != nil || n != 1 {
		t.Errorf("DropSpaces = %d, %v; want 1 (notes)", n, err)
	}
	names := func(user string) []string {
		t.Helper()
		cs, err := s.Collections(ctx, user, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	if got := names(alice); !slices.Equal(got, []string{"kept", "retracted"}) {
		t.Errorf("alice's collections after DropSpaces: %v; want [kept retracted]", got)
	}
	if got := names(bob); !slices.Equal(got, []string{"notes"}) {
		t.Errorf("bob's collections after alice's DropSpaces: %v", got)
	}
	if n, err := s.DropSpaces(ctx, alice); err != nil || n != 0 {
		t.Errorf("DropSpaces again = %d, %v; want 0", n, err)
	}
}

// testForgetImport checks that versions and tombstones an import brings
// are stored as given, and that an existing tombstone is kept.
func testForgetImport(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := t.Context()
	by := vector.Removal{At: epoch, Actor: "agt_owner", Reason: "imported"}
	ts := []vector.Tombstone{{ID: "mem_t1", UserID: alice, Collection: "notes", Removal: by}}
	if err := s.InsertTombstones(ctx, ts); err != nil {
		t.Fatal(err)
	}
	again := ts[0]
	again.Reason = "other"
	if err := s.InsertTombstones(ctx, []vector.Tombstone{again}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Tombstones(ctx, alice, []string{"mem_t1", "mem_none"}); err != nil || cmp.Diff(ts, got) != "" {
		t.Errorf("Tombstones = %+v, %v; want %+v", got, err, ts)
	}
	v := vector.Version{Memory: vector.Memory{ID: "mem_v1", UserID: alice, Collection: "notes", Text: "kept", Tags: []string{"x"},
		CreatedAt: epoch, Embedding: unit(32, 1)}, State: vector.VersionRetracted, Removal: by}
	if err := s.InsertVersions(ctx, testSpace, []vector.Version{v}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Versions(ctx, alice, nil)
	v.Embedding = nil
	v.OccurredAt = v.CreatedAt // a version without one, as exports before it were, happened when it was saved
	if err != nil || len(got) != 1 || cmp.Diff(v, got[0], cmpopts.EquateEmpty()) != "" {
		t.Errorf("Versions = %+v, %v; want %+v", got, err, v)
	}
	if res := search(t, s, vector.Query{Filter: vector.Filter{UserID: alice, Collections: []string{"notes"}}}); res.Total != 0 {
		t.Errorf("an imported version counts as a memory: %+v", res)
	}
}
