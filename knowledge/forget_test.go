package knowledge_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/vector"
)

// forgetService returns a service with memories on a fresh store of the
// backend, and the memory store, for the versions and tombstones.
func forgetService(t *testing.T, b memoryBackend) (*knowledge.Service, *vector.Store) {
	t.Helper()
	st := b.open(t)
	return knowledge.NewService(st.graph, schema.NewRegistry(), knowledge.Options{Memories: st.memories}), st.memories
}

func found(t *testing.T, s *knowledge.Service, c knowledge.Caller, collection, query string) []string {
	t.Helper()
	res, err := s.SearchMemories(t.Context(), c, knowledge.MemoryQuery{Collections: []string{collection}, Query: query})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	return ids
}

func saveMemory(t *testing.T, s *knowledge.Service, c knowledge.Caller, r knowledge.MemoryRequest) vector.Memory {
	t.Helper()
	m, err := s.SaveMemory(t.Context(), c, r)
	if err != nil {
		t.Fatal(err)
	}
	return m.Memory
}

func TestUpdateMemory(t *testing.T) {
	forEachMemoryBackend(t, func(t *testing.T, b memoryBackend) {
		s, mem := forgetService(t, b)
		ctx := t.Context()
		m := saveMemory(t, s, alice, knowledge.MemoryRequest{Collection: "health", Text: "Dentist appointment on Tuesday",
			Tags: []string{"appointment"}, Metadata: map[string]any{"where": "downtown"}})
		text, tags := "Physiotherapy session on Friday", []string{"physio"}
		got, err := s.UpdateMemory(ctx, alice, knowledge.MemoryUpdate{ID: m.ID, Text: &text, Tags: &tags, Reason: "moved"})
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != m.ID || got.Text != text || !slices.Equal(got.Tags, tags) || got.Metadata["where"] != "downtown" ||
			!got.CreatedAt.Equal(m.CreatedAt) || got.Collection != "health" {
			t.Errorf("updated memory %+v; want the same id, collection, time and metadata with the new text and tags", got)
		}
		if ids := found(t, s, alice, "health", "dentist appointment"); len(ids) != 0 {
			t.Errorf("the old text is still found: %v", ids)
		}
		if ids := found(t, s, alice, "health", "physiotherapy session"); !slices.Equal(ids, []string{m.ID}) {
			t.Errorf("the new text finds %v, want [%s]", ids, m.ID)
		}
		vs, err := mem.Versions(ctx, alice.UserID, []string{m.ID})
		if err != nil || len(vs) != 1 || vs[0].Text != m.Text || vs[0].State != vector.VersionSuperseded ||
			vs[0].Actor != alice.AgentID || vs[0].Reason != "moved" || vs[0].At.IsZero() {
			t.Errorf("history = %+v, %v; want the old text, superseded by claude for the reason given", vs, err)
		}

		// occurred_at alone moves when it happened, and date filters follow.
		march := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
		moved, err := s.UpdateMemory(ctx, alice, knowledge.MemoryUpdate{ID: m.ID, OccurredAt: &march, Reason: "it was in March"})
		if err != nil || !moved.OccurredAt.Equal(march) || moved.Text != text {
			t.Fatalf("occurred_at update = %+v, %v; want March with the text kept", moved, err)
		}
		res, err := s.SearchMemories(ctx, alice, knowledge.MemoryQuery{Collections: []string{"health"}, Query: "physiotherapy session",
			From: march.Add(-time.Hour), To: march.Add(time.Hour)})
		if err != nil || len(res.Hits) != 1 || res.Hits[0].ID != m.ID || !res.Hits[0].OccurredAt.Equal(march) {
			t.Errorf("search in March = %+v, %v; want the moved memory", res.Hits, err)
		}
		var zero time.Time
		if _, err := s.UpdateMemory(ctx, alice, knowledge.MemoryUpdate{ID: m.ID, OccurredAt: &zero}); !errors.Is(err, knowledge.ErrValidation) {
			t.Errorf("a zero occurred_at: err = %v, want a validation error", err)
		}

		if _, err := s.UpdateMemory(ctx, alice, knowledge.MemoryUpdate{ID: m.ID}); !errors.Is(err, knowledge.ErrValidation) {
			t.Errorf("an update of nothing: err = %v, want a validation error", err)
		}
		empty := " "
		if _, err := s.UpdateMemory(ctx, alice, knowledge.MemoryUpdate{ID: m.ID, Text: &empty}); !errors.Is(err, knowledge.ErrValidation) {
			t.Errorf("an empty text: err = %v, want a validation error", err)
		}
		// Read without write: refused; no read: not found, as for a
		// missing id; another user: not found.
		readOnly := alice
		readOnly.Allowed = func(a knowledge.Action, r string) bool { return a == knowledge.Read }
		if _, err := s.UpdateMemory(ctx, readOnly, knowledge.MemoryUpdate{ID: m.ID, Text: &text}); !errors.Is(err, knowledge.ErrForbidden) {
			t.Errorf("update without write: err = %v, want ErrForbidden", err)
		}
		writeOnly := alice
		writeOnly.Allowed = func(a knowledge.Action, r string) bool { return a == knowledge.Write }
		assertSameNotFound(t, m.ID,
			func(id string) error {
				_, err := s.UpdateMemory(ctx, writeOnly, knowledge.MemoryUpdate{ID: id, Text: &text})
				return err
			})
		if _, err := s.UpdateMemory(ctx, bob, knowledge.MemoryUpdate{ID: m.ID, Text: &text}); !errors.Is(err, knowledge.ErrMemoryNotFound) {
			t.Errorf("another user's memory: err = %v, want ErrMemoryNotFound", err)
		}
	})
}

// assertSameNotFound checks that call answers for id exactly as for an id
// that never existed: ErrMemoryNotFound, the same message but for the id.
func assertSameNotFound(t *testing.T, id string, call func(id string) error) {
	t.Helper()
	const missing = "mem_00000000000000000000000000000000"
	err, want := call(id), call(missing)
	if !errors.Is(err, knowledge.ErrMemoryNotFound) || !errors.Is(want, knowledge.ErrMemoryNotFound) {
		t.Fatalf("err = %v for the unreadable id, %v for a missing one; want ErrMemoryNotFound for both", err, want)
	}
	if strings.ReplaceAll(err.Error(), id, "ID") != strings.ReplaceAll(want.Error(), missing, "ID") {
		t.Errorf("unreadable %q and missing %q differ", err, want)
	}
}

func TestDeleteMemories(t *testing.T) {
	forEachMemoryBackend(t, func(t *testing.T, b memoryBackend) {
		s, mem := forgetService(t, b)
		ctx := t.Context()
		diag := saveMemory(t, s, alice, knowledge.MemoryRequest{Collection: "health", Text: "Diagnosis: mild asthma"})
		trip := saveMemory(t, s, alice, knowledge.MemoryRequest{Collection: "travel", Text: "Trip to Lisbon in May"})
		inv := saveMemory(t, s, alice, knowledge.MemoryRequest{Collection: "notes", Text: "Invoice 42 from Acme", Types: []string{"invoice"}})

		if _, err := s.DeleteMemories(ctx, alice, knowledge.MemoryDeletion{IDs: []string{diag.ID}, Mode: "forget"}); !errors.Is(err, knowledge.ErrValidation) {
			t.Errorf("an unknown mode: err = %v, want a validation error", err)
		}
		if _, err := s.DeleteMemories(ctx, alice, knowledge.MemoryDeletion{Mode: knowledge.ForgetErase}); !errors.Is(err, knowledge.ErrValidation) {
			t.Errorf("no ids: err = %v, want a validation error", err)
		}
		many := make([]string, knowledge.MaxForgetBatch+1)
		for i := range many {
			many[i] = vector.NewID()
		}
		if _, err := s.DeleteMemories(ctx, alice, knowledge.MemoryDeletion{IDs: many, Mode: knowledge.ForgetErase}); !errors.Is(err, knowledge.ErrValidation) {
			t.Errorf("too many ids: err = %v, want a validation error", err)
		}

		// Consent: no delete rule means no deletion, and write is not
		// delete; no read, or a type the caller may not read, is not found.
		writer := alice
		writer.Allowed = func(a knowledge.Action, r string) bool { return a != knowledge.Delete }
		var ae *knowledge.AccessError
		if _, err := s.DeleteMemories(ctx, writer, knowledge.MemoryDeletion{IDs: []string{diag.ID}, Mode: knowledge.ForgetRetract}); !errors.As(err, &ae) ||
			ae.Action != knowledge.Delete || ae.Resource != "memories/health" {
			t.Errorf("delete without a delete rule: err = %v, want no delete access to memories/health", err)
		}
		noHealth := alice
		noHealth.Allowed = func(a knowledge.Action, r string) bool { return r != knowledge.MemoryResource("health") }
		noInvoices := alice
		noInvoices.Allowed = func(a knowledge.Action, r string) bool { return r != knowledge.EntityResource("invoice") }
		for _, mode := range []knowledge.ForgetMode{knowledge.ForgetRetract, knowledge.ForgetErase} {
			assertSameNotFound(t, diag.ID, func(id string) error {
				_, err := s.DeleteMemories(ctx, noHealth, knowledge.MemoryDeletion{IDs: []string{id}, Mode: mode})
				return err
			})
			assertSameNotFound(t, inv.ID, func(id string) error {
				_, err := s.DeleteMemories(ctx, noInvoices, knowledge.MemoryDeletion{IDs: []string{id}, Mode: mode})
				return err
			})
			if _, err := s.DeleteMemories(ctx, bob, knowledge.MemoryDeletion{IDs: []string{diag.ID}, Mode: mode}); !errors.Is(err, knowledge.ErrMemoryNotFound) {
				t.Errorf("%s of another user's memory: err = %v, want ErrMemoryNotFound", mode, err)
			}
			// All or nothing: one unreadable id and nothing changes.
			if _, err := s.DeleteMemories(ctx, noHealth, knowledge.MemoryDeletion{IDs: []string{trip.ID, diag.ID}, Mode: mode}); !errors.Is(err, knowledge.ErrMemoryNotFound) {
				t.Errorf("%s of a batch with an unreadable id: err = %v", mode, err)
			}
		}
		if ids := found(t, s, alice, "travel", "trip to lisbon"); !slices.Equal(ids, []string{trip.ID}) {
			t.Fatalf("a refused batch changed something: %v", ids)
		}

		// Retract, then erase the retracted memory with a live one.
		deleter := alice
		deleter.Allowed = func(a knowledge.Action, r string) bool { return true }
		got, err := s.DeleteMemories(ctx, deleter, knowledge.MemoryDeletion{IDs: []string{diag.ID, diag.ID}, Mode: knowledge.ForgetRetract, Reason: "wrong"})
		if err != nil || !slices.Equal(got.IDs, []string{diag.ID}) || got.Counts["memories"] != 1 {
			t.Fatalf("retract = %+v, %v", got, err)
		}
		if ids := found(t, s, alice, "health", "diagnosis asthma"); len(ids) != 0 {
			t.Errorf("a retracted memory is found: %v", ids)
		}
		if _, err := s.DeleteMemories(ctx, deleter, knowledge.MemoryDeletion{IDs: []string{diag.ID}, Mode: knowledge.ForgetRetract}); !errors.Is(err, knowledge.ErrMemoryNotFound) {
			t.Errorf("retracting a retracted memory: err = %v, want ErrMemoryNotFound", err)
		}
		assertSameNotFound(t, diag.ID, func(id string) error {
			_, err := s.DeleteMemories(ctx, noHealth, knowledge.MemoryDeletion{IDs: []string{id}, Mode: knowledge.ForgetErase})
			return err
		})
		got, err = s.DeleteMemories(ctx, deleter, knowledge.MemoryDeletion{IDs: []string{diag.ID, trip.ID}, Mode: knowledge.ForgetErase, Reason: "forget this"})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"memories": 1, "retracted_memories": 1, "versions": 0, "contradictions": 0}; !maps.Equal(got.Counts, want) ||
			!slices.Equal(got.IDs, []string{diag.ID, trip.ID}) || len(got.Tombstones) != 2 {
			t.Errorf("erase = %+v, want counts %v", got, want)
		}
		if ids := found(t, s, alice, "travel", "trip to lisbon"); len(ids) != 0 {
			t.Errorf("an erased memory is found: %v", ids)
		}
		ts, err := mem.Tombstones(ctx, alice.UserID, nil)
		if err != nil || len(ts) != 2 || ts[0].Actor != "claude" || ts[0].Reason != "forget this" {
			t.Errorf("tombstones = %+v, %v", ts, err)
		}
		if vs, _ := mem.Versions(ctx, alice.UserID, nil); len(vs) != 0 {
			t.Errorf("versions left after the erasure: %+v", vs)
		}
		if _, err := s.DeleteMemories(ctx, deleter, knowledge.MemoryDeletion{IDs: []string{trip.ID}, Mode: knowledge.ForgetErase}); !errors.Is(err, knowledge.ErrMemoryNotFound) {
			t.Errorf("erasing an erased memory: err = %v, want ErrMemoryNotFound", err)
		}
		cols, err := s.MemoryCollections(ctx, alice)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cols {
			if want := map[string]int{"health": 0, "travel": 0, "notes": 1}[c.Name]; c.Count != want {
				t.Errorf("collection %s counts %d, want %d", c.Name, c.Count, want)
			}
		}
	})
}
