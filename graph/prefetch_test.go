package graph

import (
	"context"
	"testing"
)

// mapTx is a DriverTx holding entities in a map; it counts its reads.
type mapTx struct {
	DriverTx
	ents  map[string]Entity
	reads int
}

func (m *mapTx) Entity(_ context.Context, _, id string) (Entity, error) {
	m.reads++
	e, ok := m.ents[id]
	if !ok {
		return Entity{}, &NotFoundError{What: "entity", ID: id}
	}
	return e, nil
}

func (m *mapTx) Entities(_ context.Context, _ string, ids []string) ([]Entity, error) {
	m.reads++
	var out []Entity
	for _, id := range ids {
		if e, ok := m.ents[id]; ok {
			out = append(out, e)
		}
	}
	return out, nil
}

func (m *mapTx) PutEntity(_ context.Context, e Entity) error { m.ents[e.ID] = e; return nil }

// TestPrefetchEntities: prefetched entities answer Entity without a read,
// as copies the caller may change; an entity write drops them, so a read
// after it sees the write; an id that names nothing still reads (and is
// not found).
func TestPrefetchEntities(t *testing.T) {
	ctx := t.Context()
	m := &mapTx{ents: map[string]Entity{
		"a": {ID: "a", Type: "company", Snapshot: map[string]any{"name": "Acme"}},
		"b": {ID: "b", Type: "person"},
	}}
	tx := &Tx{DriverTx: m}
	if err := tx.PrefetchEntities(ctx, "u", []string{"a", "b", "missing"}); err != nil {
		t.Fatal(err)
	}
	reads := m.reads
	for range 3 {
		e, err := tx.Entity(ctx, "u", "a")
		if err != nil || e.Type != "company" {
			t.Fatalf("Entity(a) = %+v, %v", e, err)
		}
		e.Snapshot["name"] = "changed by the caller"
	}
	if m.reads != reads {
		t.Errorf("%d reads for prefetched entities, want none", m.reads-reads)
	}
	if e, _ := tx.Entity(ctx, "u", "a"); e.Snapshot["name"] != "Acme" {
		t.Errorf("a caller's change reached the prefetched entity: %v", e.Snapshot)
	}
	if _, err := tx.Entity(ctx, "u", "missing"); err == nil || m.reads != reads+1 {
		t.Errorf("Entity(missing) = %v after %d reads, want not found after one read", err, m.reads-reads)
	}
	if _, err := tx.Entity(ctx, "other-user", "a"); m.reads != reads+2 || err != nil {
		t.Errorf("another user's read was answered from the prefetch (%d reads, %v)", m.reads-reads, err)
	}
	if err := tx.PutEntity(ctx, Entity{ID: "a", Type: "company", Snapshot: map[string]any{"name": "Acme 2"}}); err != nil {
		t.Fatal(err)
	}
	if e, _ := tx.Entity(ctx, "u", "a"); e.Snapshot["name"] != "Acme 2" {
		t.Errorf("after a write, Entity(a) = %v, want the written entity", e.Snapshot)
	}
}
