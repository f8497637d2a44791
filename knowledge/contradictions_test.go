package knowledge_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
)

// acmeWithConflict stores Acme as an anvil maker, then, a minute later and
// from another source, as a rocket maker, and returns the entity id and the
// one contradiction that the second store raised.
func acmeWithConflict(t *testing.T, s *knowledge.Service, clk *clock) (string, knowledge.Contradiction) {
	t.Helper()
	first := store(t, s, alice, map[string]any{"entity_type": "company", "name": "Acme", "industry": "anvils", "aliases": []any{"ACME"}})
	clk.Advance(time.Minute)
	store(t, s, alice, map[string]any{"entity_type": "company", "name": "acme", "industry": "rockets", "aliases": []any{"Acme Corp"}})
	cs, err := s.OpenContradictions(t.Context(), alice)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 {
		t.Fatalf("open contradictions = %+v, want exactly one (industry; name differs only in case, aliases merge)", cs)
	}
	return first.Entities[0].EntityID, cs[0]
}

func TestContradictionDetected(t *testing.T) {
	s, clk := newFullService(t, knowledge.Options{})
	id, c := acmeWithConflict(t, s, clk)
	if c.EntityID != id || c.EntityType != "company" || c.Field != "industry" || c.CurrentValue != "anvils" || c.NewValue != "rockets" ||
		c.Status != knowledge.ContradictionOpen || c.CurrentSourceID == c.NewSourceID || !c.DetectedAt.Equal(clk.Now()) {
		t.Errorf("contradiction = %+v", c)
	}
	obs, _, _, err := s.Observations(t.Context(), alice, id, graph.Page{})
	if err != nil || len(obs) != 2 {
		t.Fatalf("observations = %v, %v", obs, err)
	}
	if c.NewObservationID != obs[0].ID || c.CurrentObservationID != obs[1].ID || c.NewSourceID != obs[0].SourceID || c.CurrentSourceID != obs[1].SourceID {
		t.Errorf("contradiction names observations %s (current) and %s (new), want %s and %s", c.CurrentObservationID, c.NewObservationID, obs[1].ID, obs[0].ID)
	}
	// Bob sees none of Alice's.
	if cs, err := s.OpenContradictions(t.Context(), bob); err != nil || len(cs) != 0 {
		t.Errorf("bob sees %+v, %v", cs, err)
	}
	// Agreeing with the current value raises nothing.
	store(t, s, alice, map[string]any{"entity_type": "company", "name": "Acme", "industry": " ROCKETS "})
	if cs, _ := s.OpenContradictions(t.Context(), alice); len(cs) != 1 {
		t.Errorf("an agreeing observation raised a contradiction: %d open", len(cs))
	}
}

func TestContradictionsListIsCappedAndConsentFiltered(t *testing.T) {
	s, clk := newFullService(t, knowledge.Options{})
	for i := range 7 {
		name := fmt.Sprintf("Company %d", i)
		store(t, s, alice, map[string]any{"entity_type": "company", "name": name, "industry": "a"})
		clk.Advance(time.Second)
		store(t, s, alice, map[string]any{"entity_type": "company", "name": name, "industry": "b"})
	}
	store(t, s, alice, map[string]any{"entity_type": "task", "title": "Ship", "status": "todo"})
	clk.Advance(time.Second)
	store(t, s, alice, map[string]any{"entity_type": "task", "title": "Ship", "status": "done"})
	cs, err := s.OpenContradictions(t.Context(), alice)
	if err != nil || len(cs) != knowledge.MaxOpenContradictions {
		t.Fatalf("open = %d, %v; want %d", len(cs), err, knowledge.MaxOpenContradictions)
	}
	tasksOnly := only("read:" + knowledge.EntityResource("task"))
	cs, err = s.OpenContradictions(t.Context(), tasksOnly)
	if err != nil || len(cs) != 1 || cs[0].EntityType != "task" {
		t.Errorf("a caller who may read only tasks sees %+v, %v", cs, err)
	}
	if _, err := s.ResolveContradiction(t.Context(), tasksOnly, cs[0].ID, knowledge.KeepBoth); !errors.Is(err, knowledge.ErrForbidden) {
		t.Errorf("resolve without write: err = %v, want ErrForbidden", err)
	}
	all, _ := s.OpenContradictions(t.Context(), alice)
	if _, err := s.ResolveContradiction(t.Context(), tasksOnly, all[0].ID, knowledge.KeepBoth); !errors.Is(err, knowledge.ErrContradictionNotFound) {
		t.Errorf("resolve a company contradiction without reading companies: err = %v, want not found", err)
	}
}

func TestResolveConfirm(t *testing.T) {
	s, clk := newFullService(t, knowledge.Options{})
	id, c := acmeWithConflict(t, s, clk)
	// A later, higher-priority source says anvils again: confirm must still
	// make rockets win.
	clk.Advance(time.Minute)
	prio := 900
	if _, err := s.Store(t.Context(), alice, knowledge.StoreRequest{SourcePriority: &prio,
		Entities: []map[string]any{{"entity_type": "company", "name": "Acme", "industry": "anvils", "employees": json.Number("3")}}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.ResolveContradiction(t.Context(), alice, c.ID, knowledge.Confirm)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != knowledge.ContradictionResolved || got.Resolution != knowledge.Confirm || got.CorrectionID == "" || got.ResolvedBy != "claude" {
		t.Errorf("resolved = %+v", got)
	}
	snap, err := s.EntitySnapshot(t.Context(), alice, id, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Entity.Snapshot["industry"] != "rockets" || snap.Entity.Provenance["industry"] != got.CorrectionID {
		t.Errorf("industry = %v from %s, want rockets from the correction %s", snap.Entity.Snapshot["industry"], snap.Entity.Provenance["industry"], got.CorrectionID)
	}
	prov, err := s.FieldProvenance(t.Context(), alice, id, "industry")
	if err != nil || prov.Observation.SourcePriority != knowledge.CorrectionPriority {
		t.Errorf("provenance = %+v, %v; want a correction", prov.Observation, err)
	}
	if _, err := s.ResolveContradiction(t.Context(), alice, c.ID, knowledge.Reject); !errors.Is(err, knowledge.ErrContradictionResolved) {
		t.Errorf("second resolution: err = %v, want ErrContradictionResolved", err)
	}
}

func TestResolveReject(t *testing.T) {
	s, clk := newFullService(t, knowledge.Options{})
	id, c := acmeWithConflict(t, s, clk)
	before := clk.Now()
	snap, _ := s.EntitySnapshot(t.Context(), alice, id, time.Time{})
	if snap.Entity.Snapshot["industry"] != "rockets" {
		t.Fatalf("before: industry = %v, want rockets (the later observation)", snap.Entity.Snapshot["industry"])
	}
	clk.Advance(time.Minute)
	if _, err := s.ResolveContradiction(t.Context(), alice, c.ID, knowledge.Reject); err != nil {
		t.Fatal(err)
	}
	snap, err := s.EntitySnapshot(t.Context(), alice, id, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Entity.Snapshot["industry"] != "anvils" || snap.Entity.Provenance["industry"] != c.CurrentObservationID {
		t.Errorf("after reject: industry = %v from %s, want anvils from %s", snap.Entity.Snapshot["industry"], snap.Entity.Provenance["industry"], c.CurrentObservationID)
	}
	// The rejected observation's other fields stop counting too, but it is
	// still recorded: provenance reads still list it.
	aliases, _ := snap.Entity.Snapshot["aliases"].([]any)
	if len(aliases) != 1 || aliases[0] != "ACME" {
		t.Errorf("aliases = %v, want only the first source's", aliases)
	}
	obs, total, _, err := s.Observations(t.Context(), alice, id, graph.Page{})
	if err != nil || total != 2 || obs[0].ID != c.NewObservationID {
		t.Errorf("observations after reject = %d (%v), want both, the rejected one first", total, err)
	}
	// As-of reads skip it as well.
	asOf, err := s.EntitySnapshot(t.Context(), alice, id, before)
	if err != nil || asOf.Entity.Snapshot["industry"] != "anvils" {
		t.Errorf("as-of read after reject: industry = %v, %v; want anvils", asOf.Entity.Snapshot["industry"], err)
	}
	if cs, _ := s.OpenContradictions(t.Context(), alice); len(cs) != 0 {
		t.Errorf("still open: %+v", cs)
	}
}

func TestResolveKeepBothAndBadInput(t *testing.T) {
	s, clk := newFullService(t, knowledge.Options{})
	id, c := acmeWithConflict(t, s, clk)
	got, err := s.ResolveContradiction(t.Context(), alice, c.ID, knowledge.KeepBoth)
	if err != nil || got.Resolution != knowledge.KeepBoth {
		t.Fatalf("keep_both = %+v, %v", got, err)
	}
	snap, _ := s.EntitySnapshot(t.Context(), alice, id, time.Time{})
	if snap.Entity.Snapshot["industry"] != "rockets" {
		t.Errorf("keep_both changed the entity: industry = %v", snap.Entity.Snapshot["industry"])
	}
	if _, err := s.ResolveContradiction(t.Context(), alice, "ctr_nope", knowledge.KeepBoth); !errors.Is(err, knowledge.ErrContradictionNotFound) {
		t.Errorf("unknown id: err = %v", err)
	}
	if _, err := s.ResolveContradiction(t.Context(), bob, c.ID, knowledge.KeepBoth); !errors.Is(err, knowledge.ErrContradictionNotFound) {
		t.Errorf("another user's contradiction: err = %v", err)
	}
	var verr *knowledge.ValidationError
	if _, err := s.ResolveContradiction(t.Context(), alice, c.ID, "maybe"); !errors.As(err, &verr) || verr.Field != "resolution" {
		t.Errorf("bad resolution: err = %v", err)
	}
}

func TestNoContradictionStoreDetectsNothing(t *testing.T) {
	s, _ := newService(t)
	store(t, s, alice, map[string]any{"entity_type": "company", "name": "Acme", "industry": "anvils"})
	store(t, s, alice, map[string]any{"entity_type": "company", "name": "Acme", "industry": "rockets"})
	if _, err := s.OpenContradictions(t.Context(), alice); !errors.Is(err, knowledge.ErrUnavailable) {
		t.Errorf("err = %v, want ErrUnavailable", err)
	}
}

func TestCheckClaimsFromMemories(t *testing.T) {
	s, clk := newFullService(t, knowledge.Options{})
	id := store(t, s, alice, map[string]any{"entity_type": "company", "name": "Acme", "industry": "anvils"}).Entities[0].EntityID
	clk.Advance(time.Minute)
	found, err := s.CheckClaims(t.Context(), alice, []knowledge.FieldClaim{
		{EntityID: id, Field: "industry", Value: "rockets", ClaimID: "mem_1"},
		{EntityID: id, Field: "industry", Value: "Anvils", ClaimID: "mem_2"},    // agrees
		{EntityID: id, Field: "domain", Value: "acme.test", ClaimID: "mem_3"},   // no current value
		{EntityID: "ent_nope", Field: "industry", Value: "x", ClaimID: "mem_4"}, // no such entity
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].NewObservationID != "mem_1" || found[0].CurrentValue != "anvils" {
		t.Fatalf("found = %+v, want the one disagreeing memory", found)
	}
	open, err := s.OpenContradictions(t.Context(), alice)
	if err != nil || len(open) != 1 || open[0].ID != found[0].ID {
		t.Fatalf("open = %+v, %v", open, err)
	}
	if _, err := s.ResolveContradiction(t.Context(), alice, open[0].ID, knowledge.Confirm); err != nil {
		t.Fatal(err)
	}
	snap, _ := s.EntitySnapshot(t.Context(), alice, id, time.Time{})
	if snap.Entity.Snapshot["industry"] != "rockets" {
		t.Errorf("confirmed memory: industry = %v, want rockets", snap.Entity.Snapshot["industry"])
	}
	if found, err := s.CheckClaims(t.Context(), only("read:profile"), []knowledge.FieldClaim{
		{EntityID: id, Field: "industry", Value: "boats", ClaimID: "mem_5"},
	}); err != nil || len(found) != 0 {
		t.Errorf("a claim about an unreadable entity: %+v, %v; want nothing", found, err)
	}
}

// adaWithMemoryClaim stores Ada with an email, then saves a memory that
// claims another email for her, and returns Ada's id and the memory.
func adaWithMemoryClaim(t *testing.T, s *knowledge.Service, clk *clock) (string, knowledge.SavedMemory) {
	t.Helper()
	id := store(t, s, alice, map[string]any{"entity_type": "person", "name": "Ada", "email": "ada@old.example"}).Entities[0].EntityID
	clk.Advance(time.Minute)
	m, err := s.SaveMemory(t.Context(), alice, knowledge.MemoryRequest{
		Collection: "notes", Text: "Ada said her new address is ada@new.example",
		Claims: []knowledge.Claim{{EntityID: id, Field: "email", Value: "ada@new.example"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Contradictions) != 1 {
		t.Fatalf("contradictions = %+v, want one about the email", m.Contradictions)
	}
	return id, m
}

func TestMemoryClaimContradicts(t *testing.T) {
	forEachMemoryBackend(t, func(t *testing.T, b memoryBackend) {
		s, clk := claimService(t, b)
		ctx := t.Context()
		id, m := adaWithMemoryClaim(t, s, clk)
		c := m.Contradictions[0]
		if c.EntityID != id || c.EntityType != "person" || c.Field != "email" || c.CurrentValue != "ada@old.example" ||
			c.NewValue != "ada@new.example" || c.NewObservationID != m.ID || !c.FromMemory() || c.Status != knowledge.ContradictionOpen {
			t.Errorf("contradiction = %+v", c)
		}
		if !slices.Equal(m.EntityIDs, []string{id}) {
			t.Errorf("the memory links %v, want the entity it claims about", m.EntityIDs)
		}
		open, err := s.OpenContradictions(ctx, alice)
		if err != nil || len(open) != 1 || open[0].ID != c.ID || !open[0].FromMemory() {
			t.Fatalf("open = %+v, %v", open, err)
		}

		// A claim that agrees (up to case and space), one about a field
		// without a value, and one from the source of the current value
		// raise nothing.
		acme := store(t, s, alice, map[string]any{"entity_type": "company", "name": "Acme", "industry": "anvils"})
		for _, r := range []knowledge.MemoryRequest{
			{Collection: "notes", Text: "agrees", Claims: []knowledge.Claim{{EntityID: id, Field: "email", Value: " ADA@old.example"}}},
			{Collection: "notes", Text: "no value yet", Claims: []knowledge.Claim{{EntityID: id, Field: "title", Value: "engineer"}}},
			{Collection: "notes", Text: "same source", SourceID: acme.Source.ID, Claims: []knowledge.Claim{{EntityID: acme.Entities[0].EntityID, Field: "industry", Value: "rockets"}}},
		} {
			got, err := s.SaveMemory(ctx, alice, r)
			if err != nil || len(got.Contradictions) != 0 {
				t.Errorf("%s: %+v, %v; want no contradiction", r.Text, got.Contradictions, err)
			}
		}

		// A claim about a merged entity is about the one it was merged into.
		old := store(t, s, alice, map[string]any{"entity_type": "company", "name": "Acme Old", "industry": "anvils"}).Entities[0].EntityID
		into := store(t, s, alice, map[string]any{"entity_type": "company", "name": "Acme New", "industry": "anvils"}).Entities[0].EntityID
		if _, err := s.MergeEntities(ctx, alice, old, into, "same company"); err != nil {
			t.Fatal(err)
		}
		merged, err := s.SaveMemory(ctx, alice, knowledge.MemoryRequest{Collection: "notes", Text: "Acme makes rockets now",
			Claims: []knowledge.Claim{{EntityID: old, Field: "industry", Value: "rockets"}}})
		if err != nil || len(merged.Contradictions) != 1 || merged.Contradictions[0].EntityID != into || !slices.Equal(merged.EntityIDs, []string{into}) {
			t.Errorf("claim about a merged entity: %+v, %v; want it about %s", merged, err, into)
		}

		// One memory may claim the same field of two entities: two
		// contradictions, with distinct ids.
		bob2 := store(t, s, alice, map[string]any{"entity_type": "person", "name": "Bo", "email": "bo@old.example"}).Entities[0].EntityID
		two, err := s.SaveMemory(ctx, alice, knowledge.MemoryRequest{Collection: "notes", Text: "both moved", Claims: []knowledge.Claim{
			{EntityID: id, Field: "email", Value: "ada@third.example"}, {EntityID: bob2, Field: "email", Value: "bo@new.example"},
		}})
		if err != nil || len(two.Contradictions) != 2 || two.Contradictions[0].ID == two.Contradictions[1].ID {
			t.Errorf("two claims: %+v, %v; want two distinct contradictions", two.Contradictions, err)
		}
	})
}

func TestMemoryClaimErrors(t *testing.T) {
	forEachMemoryBackend(t, func(t *testing.T, b memoryBackend) {
		s, _ := claimService(t, b)
		ctx := t.Context()
		ada := store(t, s, alice, map[string]any{"entity_type": "person", "name": "Ada", "email": "ada@old.example"}).Entities[0].EntityID
		acme := store(t, s, alice, map[string]any{"entity_type": "company", "name": "Acme"}).Entities[0].EntityID
		noCompanies := alice
		noCompanies.Allowed = func(a knowledge.Action, r string) bool { return r != knowledge.EntityResource("company") }
		noMemoryWrite := alice
		noMemoryWrite.Allowed = func(a knowledge.Action, r string) bool { return a == knowledge.Read }
		claim := func(cs ...knowledge.Claim) knowledge.MemoryRequest {
			return knowledge.MemoryRequest{Collection: "notes", Text: "a claim", Claims: cs}
		}
		for _, tc := range []struct {
			name   string
			caller knowledge.Caller
			req    knowledge.MemoryRequest
			want   error
			field  string // of the validation error
		}{
			{"unknown field", alice, claim(knowledge.Claim{EntityID: ada, Field: "shoe_size", Value: "42"}), knowledge.ErrValidation, "claims[0].field"},
			{"wrong type", alice, claim(knowledge.Claim{EntityID: acme, Field: "employees", Value: "many"}), knowledge.ErrValidation, "claims[0].value"},
			{"null value", alice, claim(knowledge.Claim{EntityID: ada, Field: "email"}), knowledge.ErrValidation, "claims[0].value"},
			{"no entity", alice, claim(knowledge.Claim{Field: "email", Value: "x"}), knowledge.ErrValidation, "claims[0].entity_id"},
			{"repeated", alice, claim(knowledge.Claim{EntityID: ada, Field: "email", Value: "a@x"}, knowledge.Claim{EntityID: ada, Field: "email", Value: "b@x"}), knowledge.ErrValidation, "claims[1]"},
			{"missing entity", alice, claim(knowledge.Claim{EntityID: "ent_missing", Field: "email", Value: "x"}), knowledge.ErrEntityNotFound, ""},
			{"other user's entity", bob, claim(knowledge.Claim{EntityID: ada, Field: "email", Value: "x"}), knowledge.ErrEntityNotFound, ""},
			{"unreadable type", noCompanies, claim(knowledge.Claim{EntityID: acme, Field: "industry", Value: "x"}), knowledge.ErrEntityNotFound, ""},
			// Not a validation error naming the company's fields.
			{"unreadable type, unknown field", noCompanies, claim(knowledge.Claim{EntityID: acme, Field: "shoe_size", Value: "x"}), knowledge.ErrEntityNotFound, ""},
			{"no memory write", noMemoryWrite, claim(knowledge.Claim{EntityID: ada, Field: "email", Value: "x"}), knowledge.ErrForbidden, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := s.SaveMemory(ctx, tc.caller, tc.req)
				if !errors.Is(err, tc.want) {
					t.Fatalf("got %v, want %v", err, tc.want)
				}
				var ve *knowledge.ValidationError
				if tc.field != "" && (!errors.As(err, &ve) || ve.Field != tc.field) {
					t.Errorf("validation error %v, want one about %s", err, tc.field)
				}
			})
		}
		// Nothing was saved, and nothing recorded.
		if cols, err := s.MemoryCollections(ctx, alice); err != nil || len(cols) != 0 {
			t.Errorf("collections after refused claims: %+v, %v", cols, err)
		}
		if open, err := s.OpenContradictions(ctx, alice); err != nil || len(open) != 0 {
			t.Errorf("open after refused claims: %+v, %v", open, err)
		}
	})
}

func TestResolveMemoryClaim(t *testing.T) {
	forEachMemoryBackend(t, func(t *testing.T, b memoryBackend) {
		ctx := t.Context()
		t.Run("confirm", func(t *testing.T) {
			s, clk := claimService(t, b)
			id, m := adaWithMemoryClaim(t, s, clk)
			got, err := s.ResolveContradiction(ctx, alice, m.Contradictions[0].ID, knowledge.Confirm)
			if err != nil || got.CorrectionID == "" || got.Resolution != knowledge.Confirm {
				t.Fatalf("confirm: %+v, %v", got, err)
			}
			prov, err := s.FieldProvenance(ctx, alice, id, "email")
			if err != nil {
				t.Fatal(err)
			}
			if prov.Value != "ada@new.example" || prov.Observation.ID != got.CorrectionID || prov.Observation.SourcePriority != knowledge.CorrectionPriority {
				t.Errorf("email provenance = %+v, want the confirmed value as a correction", prov)
			}
			if prov.Source.Provenance["memory_id"] != m.ID || prov.Source.Provenance["contradiction_id"] != got.ID {
				t.Errorf("correction source provenance = %v, want the memory and the contradiction named", prov.Source.Provenance)
			}
		})
		t.Run("reject", func(t *testing.T) {
			s, clk := claimService(t, b)
			id, m := adaWithMemoryClaim(t, s, clk)
			before, _ := s.EntitySnapshot(ctx, alice, id, time.Time{})
			got, err := s.ResolveContradiction(ctx, alice, m.Contradictions[0].ID, knowledge.Reject)
			if err != nil || got.Status != knowledge.ContradictionResolved || got.Resolution != knowledge.Reject || got.CorrectionID != "" {
				t.Fatalf("reject: %+v, %v", got, err)
			}
			after, _ := s.EntitySnapshot(ctx, alice, id, time.Time{})
			if after.Entity.Snapshot["email"] != "ada@old.example" || after.Entity.ObservationCount != before.Entity.ObservationCount {
				t.Errorf("after reject: %+v, want the entity unchanged", after.Entity)
			}
			if open, err := s.OpenContradictions(ctx, alice); err != nil || len(open) != 0 {
				t.Errorf("open after reject: %+v, %v", open, err)
			}
			if _, err := s.ResolveContradiction(ctx, alice, got.ID, knowledge.Confirm); !errors.Is(err, knowledge.ErrContradictionResolved) {
				t.Errorf("resolving twice: %v", err)
			}
		})
		t.Run("keep both", func(t *testing.T) {
			s, clk := claimService(t, b)
			id, m := adaWithMemoryClaim(t, s, clk)
			if _, err := s.ResolveContradiction(ctx, alice, m.Contradictions[0].ID, knowledge.KeepBoth); err != nil {
				t.Fatal(err)
			}
			snap, _ := s.EntitySnapshot(ctx, alice, id, time.Time{})
			if snap.Entity.Snapshot["email"] != "ada@old.example" {
				t.Errorf("after keep_both: email = %v", snap.Entity.Snapshot["email"])
			}
		})
		t.Run("unreadable type", func(t *testing.T) {
			s, clk := claimService(t, b)
			_, m := adaWithMemoryClaim(t, s, clk)
			noPeople := alice
			noPeople.Allowed = func(a knowledge.Action, r string) bool { return r != knowledge.EntityResource("person") }
			if open, err := s.OpenContradictions(ctx, noPeople); err != nil || len(open) != 0 {
				t.Errorf("an agent that may not read people lists %+v, %v", open, err)
			}
			_, err := s.ResolveContradiction(ctx, noPeople, m.Contradictions[0].ID, knowledge.Confirm)
			if !errors.Is(err, knowledge.ErrContradictionNotFound) {
				t.Errorf("resolve by an agent that may not read people: %v, want not found", err)
			}
			if _, err := s.ResolveContradiction(ctx, bob, m.Contradictions[0].ID, knowledge.Confirm); !errors.Is(err, knowledge.ErrContradictionNotFound) {
				t.Errorf("resolve by another user: %v, want not found", err)
			}
		})
		t.Run("unreadable memory", func(t *testing.T) {
			s, clk := claimService(t, b)
			adaWithMemoryClaim(t, s, clk)
			noNotes := alice
			noNotes.Allowed = func(a knowledge.Action, r string) bool { return r != knowledge.MemoryResource("notes") }
			open, err := s.OpenContradictions(ctx, noNotes)
			if err != nil || len(open) != 1 {
				t.Fatalf("open = %+v, %v; want the claim about a readable entity", open, err)
			}
			if open[0].NewObservationID != "" || !open[0].MemoryHidden || !open[0].FromMemory() || open[0].NewValue != "ada@new.example" {
				t.Errorf("an agent that may not read notes sees %+v, want the value without the memory", open[0])
			}
			got, err := s.ResolveContradiction(ctx, noNotes, open[0].ID, knowledge.KeepBoth)
			if err != nil || got.NewObservationID != "" || !got.MemoryHidden {
				t.Errorf("resolved = %+v, %v; want the memory hidden", got, err)
			}
			if got, err := s.OpenContradictions(ctx, alice); err != nil || len(got) != 0 {
				t.Errorf("open after keep_both = %+v, %v", got, err)
			}
		})
	})
}
