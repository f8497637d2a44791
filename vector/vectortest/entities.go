package vectortest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/vector"
)

// testEntities checks entity embeddings: replace by entity, reads in the
// order asked, isolation between users, deletes, paging through the
// embeddings of other embedders, validation, and that entity embeddings
// never appear among memories.
func testEntities(t *testing.T, h Harness) {
	mem, s := h.OpenEntities(t)
	ctx := t.Context()
	r := rand.New(rand.NewPCG(7, 8))
	other := vector.Space{Embedder: "test:other", Dimension: 8}
	emb := func(user, id string, sp vector.Space, hash string) vector.EntityEmbedding {
		return vector.EntityEmbedding{UserID: user, EntityID: id, Space: sp, TextHash: hash,
			Embedding: randomVector(r, sp.Dimension), UpdatedAt: epoch}
	}
	a1, a2, b1 := emb(alice, "ent_1", testSpace, "h1"), emb(alice, "ent_2", other, "h2"), emb(bob, "ent_1", testSpace, "hb")
	if err := s.Put(ctx, a1, a2, b1); err != nil {
		t.Fatalf("put: %v", err)
	}
	// Vectors are stored packed to 8 bits: what reads back is exactly
	// vector.RoundInt8 of what was written, on every backend.
	a1.Embedding, a2.Embedding, b1.Embedding = vector.RoundInt8(a1.Embedding), vector.RoundInt8(a2.Embedding), vector.RoundInt8(b1.Embedding)
	get := func(user string, ids ...string) []vector.EntityEmbedding {
		t.Helper()
		got, err := s.Get(ctx, user, ids)
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		return got
	}
	if diff := cmp.Diff([]vector.EntityEmbedding{a2, a1}, get(alice, "ent_2", "ent_missing", "ent_1")); diff != "" {
		t.Errorf("Get (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]vector.EntityEmbedding{b1}, get(bob, "ent_1", "ent_2")); diff != "" {
		t.Errorf("Get of bob (-want +got):\n%s", diff)
	}

	// Put replaces, space and all; a zero UpdatedAt is set.
	a1b := emb(alice, "ent_1", other, "h1b")
	a1b.UpdatedAt = time.Time{}
	if err := s.Put(ctx, a1b); err != nil {
		t.Fatalf("replace: %v", err)
	}
	got := get(alice, "ent_1")
	if len(got) != 1 || got[0].TextHash != "h1b" || got[0].Space != other || got[0].UpdatedAt.IsZero() ||
		got[0].UpdatedAt.Location() != time.UTC || !cmp.Equal(got[0].Embedding, vector.RoundInt8(a1b.Embedding)) {
		t.Errorf("after replace: %+v", got)
	}
	if diff := cmp.Diff([]vector.EntityEmbedding{b1}, get(bob, "ent_1")); diff != "" {
		t.Errorf("bob's embedding changed by alice's put (-want +got):\n%s", diff)
	}

	// Add stores only what is not stored: alice's ent_1 keeps the vector
	// Put gave it, ent_3 is new, and bob's ent_1 is his own.
	a1c, a3 := emb(alice, "ent_1", testSpace, "h1c"), emb(alice, "ent_3", testSpace, "h3")
	if err := s.Add(ctx, a1c, a3); err != nil {
		t.Fatalf("add: %v", err)
	}
	got = get(alice, "ent_1", "ent_3")
	a3.Embedding = vector.RoundInt8(a3.Embedding)
	if len(got) != 2 || got[0].TextHash != "h1b" || !cmp.Equal(got[0].Embedding, vector.RoundInt8(a1b.Embedding)) {
		t.Errorf("Add replaced a stored embedding: %+v", got)
	} else if diff := cmp.Diff(a3, got[1]); diff != "" {
		t.Errorf("Add of a new embedding (-want +got):\n%s", diff)
	}
	if err := s.Delete(ctx, alice, []string{"ent_3"}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if err := s.Add(ctx, vector.EntityEmbedding{UserID: alice, Space: testSpace, Embedding: make([]float32, testSpace.Dimension)}); err == nil {
		t.Error("Add of an embedding without an entity id: no error")
	}

	// Embeddings are not memories.
	if cols, err := mem.Collections(ctx, alice, nil); err != nil || len(cols) != 0 {
		t.Errorf("memory collections of a user with only entity embeddings: %v, %v", cols, err)
	}

	// Paging through the embeddings outside a space, every user.
	var many []vector.EntityEmbedding
	for i := range 7 {
		many = append(many, emb(bob, fmt.Sprintf("ent_x%02d", i), other, "hx"))
	}
	if err := s.Put(ctx, many...); err != nil {
		t.Fatalf("put: %v", err)
	}
	var keys []vector.EntityKey
	for after := (vector.EntityKey{}); ; {
		page, err := s.Outside(ctx, testSpace.Embedder, after, 3)
		if err != nil {
			t.Fatalf("outside: %v", err)
		}
		if len(page) == 0 {
			break
		}
		keys = append(keys, page...)
		after = page[len(page)-1]
	}
	want := []vector.EntityKey{{UserID: alice, EntityID: "ent_1"}, {UserID: alice, EntityID: "ent_2"}}
	for _, e := range many {
		want = append(want, vector.EntityKey{UserID: e.UserID, EntityID: e.EntityID})
	}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("Outside %s (-want +got):\n%s", testSpace.Embedder, diff)
	}

	// Deletes are per user; deleting what is not there is harmless.
	if err := s.Delete(ctx, bob, []string{"ent_2", "ent_missing"}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if len(get(alice, "ent_2")) != 1 {
		t.Errorf("bob's delete removed alice's embedding")
	}
	if err := s.Delete(ctx, alice, []string{"ent_1", "ent_2"}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if got := get(alice, "ent_1", "ent_2"); len(got) != 0 {
		t.Errorf("after delete: %+v", got)
	}

	for _, bad := range []vector.EntityEmbedding{
		{EntityID: "ent_1", Space: testSpace, Embedding: make([]float32, testSpace.Dimension)},
		{UserID: alice, Space: testSpace, Embedding: make([]float32, testSpace.Dimension)},
		{UserID: alice, EntityID: "ent_1", Space: testSpace, Embedding: make([]float32, 3)},
		{UserID: alice, EntityID: "ent_1", Space: vector.Space{Dimension: 3}, Embedding: make([]float32, 3)},
		{UserID: alice, EntityID: "ent_1", Space: testSpace, Embedding: append(make([]float32, testSpace.Dimension-1), float32(math.NaN()))},
		{UserID: alice, EntityID: "ent_1", Space: testSpace, Embedding: append(make([]float32, testSpace.Dimension-1), float32(math.Inf(-1)))},
	} {
		if err := s.Put(ctx, a1, bad); !errors.Is(err, vector.ErrInvalid) {
			t.Errorf("Put(%+v) = %v, want ErrInvalid", bad, err)
		}
	}
	if got := get(alice, "ent_1"); len(got) != 0 {
		t.Errorf("a refused batch stored %+v", got)
	}
}

// testErasedUserGetsNoEntityEmbeddings checks that entity embeddings
// written for a user with an erasure recorded are dropped, and others'
// kept: the outbox worker of a running server may write embeddings of
// entities that `cairn admin erase`, another process, has just erased.
func testErasedUserGetsNoEntityEmbeddings(t *testing.T, h Harness) {
	s, recordErasure := h.OpenErasable(t)
	ctx := t.Context()
	r := rand.New(rand.NewPCG(9, 10))
	emb := func(user, id string) vector.EntityEmbedding {
		return vector.EntityEmbedding{UserID: user, EntityID: id, Space: testSpace, TextHash: "h",
			Embedding: randomVector(r, testSpace.Dimension), UpdatedAt: epoch}
	}
	if err := s.Put(ctx, emb(alice, "ent_before")); err != nil {
		t.Fatalf("put: %v", err)
	}
	recordErasure(t, alice)
	if err := s.Put(ctx, emb(alice, "ent_1"), emb(bob, "ent_1")); err != nil {
		t.Fatalf("put after the erasure began: %v", err)
	}
	if err := s.Add(ctx, emb(alice, "ent_2")); err != nil {
		t.Fatalf("add after the erasure began: %v", err)
	}
	got, err := s.Get(ctx, alice, []string{"ent_before", "ent_1", "ent_2"})
	if err != nil {
		t.Fatal(err)
	}
	// What was there before stays for the erasure's own step to delete.
	if len(got) != 1 || got[0].EntityID != "ent_before" {
		t.Errorf("alice's embeddings after her erasure began: %+v, want only the one written before", got)
	}
	if got, err := s.Get(ctx, bob, []string{"ent_1"}); err != nil || len(got) != 1 {
		t.Errorf("bob's embedding: %+v, %v; want it written", got, err)
	}
}
