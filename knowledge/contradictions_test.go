package knowledge_test

import (
	"encoding/json"
	"errors"
	"fmt"
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
