package knowledge_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// openEmbedded opens a fresh embedded store, closed when the test ends, and
// its graph.
func openEmbedded(t testing.TB) (*sqlite.DB, *graph.Store) {
	t.Helper()
	db := sqlitetest.Open(t)
	g := graph.NewStore(embedded.New(db))
	t.Cleanup(func() {
		g.Close()
	})
	return db, g
}

// newService returns a service on a fresh embedded store and its clock.
func newService(t *testing.T) (*knowledge.Service, *clock) {
	t.Helper()
	_, g := openEmbedded(t)
	c := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	return knowledge.NewService(g, schema.NewRegistry(), knowledge.Options{Now: c.Now}), c
}

var alice = knowledge.Caller{UserID: "user-alice", AgentID: "claude"}
var bob = knowledge.Caller{UserID: "user-bob", AgentID: "claude"}

func store(t *testing.T, s *knowledge.Service, c knowledge.Caller, entities ...map[string]any) knowledge.StoreResult {
	t.Helper()
	res, err := s.Store(t.Context(), c, knowledge.StoreRequest{Entities: entities})
	if err != nil {
		t.Fatalf("store: %v", err)
	}
	return res
}

func TestStoreSameArgumentsDeduplicates(t *testing.T) {
	s, _ := newService(t)
	company := map[string]any{"entity_type": "company", "name": "Acme", "industry": "anvils"}
	first := store(t, s, alice, company)
	second := store(t, s, alice, company)
	if first.Deduplicated || !second.Deduplicated {
		t.Fatalf("deduplicated = %v then %v, want false then true", first.Deduplicated, second.Deduplicated)
	}
	if first.Source.ID != second.Source.ID || first.Source.ContentHash != second.Source.ContentHash {
		t.Errorf("source ids differ: %s vs %s", first.Source.ID, second.Source.ID)
	}
	if second.ObservationsCreated != 0 {
		t.Errorf("second store created %d observations, want 0", second.ObservationsCreated)
	}
	obs, total, _, err := s.Observations(t.Context(), alice, first.Entities[0].EntityID, graph.Page{})
	if err != nil || total != 1 || len(obs) != 1 {
		t.Fatalf("observations = %d (total %d), %v; want exactly one", len(obs), total, err)
	}
	// Another user storing the same content gets their own source and entity.
	other := store(t, s, bob, company)
	if other.Deduplicated || other.Source.ID == first.Source.ID || other.Entities[0].EntityID == first.Entities[0].EntityID {
		t.Errorf("bob's store shares alice's source or entity: %+v", other)
	}
}

func TestStoreDisagreeingSourcesAndAsOf(t *testing.T) {
	s, clk := newService(t)
	first := store(t, s, alice, map[string]any{"entity_type": "company", "name": "Acme", "industry": "anvils"})
	between := clk.Advance(time.Minute)
	clk.Advance(time.Minute)
	second := store(t, s, alice, map[string]any{"entity_type": "company", "name": "ACME", "industry": "rockets"})
	id := first.Entities[0].EntityID
	if second.Entities[0].EntityID != id {
		t.Fatalf("'Acme' and 'ACME' are different entities: %s vs %s", id, second.Entities[0].EntityID)
	}
	snap, err := s.EntitySnapshot(t.Context(), alice, id, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Entity.Snapshot["industry"]; got != "rockets" {
		t.Errorf("industry = %v, want the later value rockets", got)
	}
	if got, want := snap.Entity.Provenance["industry"], second.Entities[0].ObservationID; got != want {
		t.Errorf("provenance of industry = %s, want the second observation %s", got, want)
	}
	old, err := s.EntitySnapshot(t.Context(), alice, id, between)
	if err != nil {
		t.Fatal(err)
	}
	if got := old.Entity.Snapshot["industry"]; got != "anvils" {
		t.Errorf("industry at %s = %v, want anvils", between, got)
	}
	if _, err := s.EntitySnapshot(t.Context(), alice, id, between.Add(-time.Hour)); !errors.Is(err, knowledge.ErrEntityNotFound) {
		t.Errorf("snapshot before the first store: err = %v, want ErrEntityNotFound", err)
	}
	fp, err := s.FieldProvenance(t.Context(), alice, id, "industry")
	if err != nil {
		t.Fatal(err)
	}
	if fp.Source.ID != second.Source.ID || fp.Observation.ID != second.Entities[0].ObservationID {
		t.Errorf("field provenance = %s/%s, want %s/%s", fp.Source.ID, fp.Observation.ID, second.Source.ID, second.Entities[0].ObservationID)
	}
	if _, err := s.FieldProvenance(t.Context(), alice, id, "tax_id"); !errors.Is(err, knowledge.ErrFieldNotFound) {
		t.Errorf("provenance of an absent field: err = %v, want ErrFieldNotFound", err)
	}
}

func TestStoreKeepsUnknownFields(t *testing.T) {
	s, _ := newService(t)
	res := store(t, s, alice, map[string]any{
		"entity_type": "task", "title": "File taxes", "status": "todo",
		"asana_workspace": "home", "urgency": json.Number("3"), "nested": map[string]any{"a": true},
	})
	if res.UnknownFieldsCount != 3 {
		t.Errorf("unknown_fields_count = %d, want 3", res.UnknownFieldsCount)
	}
	snap, err := s.EntitySnapshot(t.Context(), alice, res.Entities[0].EntityID, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := snap.Entity.Snapshot["asana_workspace"]; ok {
		t.Errorf("an unknown field reached the snapshot: %v", snap.Entity.Snapshot)
	}
}

func TestStoreValidation(t *testing.T) {
	s, _ := newService(t)
	prio := func(n int) *int { return &n }
	tests := []struct {
		name      string
		req       knowledge.StoreRequest
		wantField string
		wantType  string
	}{
		{"no entities", knowledge.StoreRequest{}, "entities", "non-empty array of objects"},
		{"no entity_type", knowledge.StoreRequest{Entities: []map[string]any{{"name": "x"}}}, "entities[0].entity_type", "string"},
		{"entity_type not a string", knowledge.StoreRequest{Entities: []map[string]any{{"entity_type": json.Number("1")}}}, "entities[0].entity_type", "string"},
		{"type name with bad characters", knowledge.StoreRequest{Entities: []map[string]any{{"entity_type": "space$hip"}}}, "entities[0].entity_type", ""},
		{"type name of Cairn's own nodes", knowledge.StoreRequest{Entities: []map[string]any{{"entity_type": "observation"}}}, "entities[0].entity_type", ""},
		{"type name too long", knowledge.StoreRequest{Entities: []map[string]any{{"entity_type": strings.Repeat("a", 64)}}}, "entities[0].entity_type", ""},
		{"wrong field type", knowledge.StoreRequest{Entities: []map[string]any{{"entity_type": "invoice", "invoice_number": "1", "amount": "lots"}}}, "entities[0].amount", "number"},
		{"bad date", knowledge.StoreRequest{Entities: []map[string]any{{"entity_type": "invoice", "invoice_number": "1", "due_date": "next week"}}}, "entities[0].due_date", "date (ISO 8601, e.g. 2024-01-31 or 2024-01-31T09:30:00Z)"},
		{"missing required", knowledge.StoreRequest{Entities: []map[string]any{{"entity_type": "company", "industry": "x"}}}, "entities[0].name", "string"},
		{"priority reserved for corrections", knowledge.StoreRequest{SourcePriority: prio(1000), Entities: []map[string]any{{"entity_type": "note", "title": "x"}}}, "source_priority", "integer 0..999"},
		{"bad extracted_at", knowledge.StoreRequest{Provenance: map[string]any{"extracted_at": "yesterday"}, Entities: []map[string]any{{"entity_type": "note", "title": "x"}}}, "provenance.extracted_at", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Store(t.Context(), alice, tt.req)
			var verr *knowledge.ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("err = %v, want a *ValidationError", err)
			}
			if verr.Field != tt.wantField {
				t.Errorf("field = %q, want %q", verr.Field, tt.wantField)
			}
			if tt.wantType != "" && verr.Expected != tt.wantType {
				t.Errorf("expected = %q, want %q", verr.Expected, tt.wantType)
			}
		})
	}
}

func TestStoreCoercesAndNormalisesIdentity(t *testing.T) {
	s, _ := newService(t)
	a := store(t, s, alice, map[string]any{"entity_type": "invoice", "invoice_number": "INV-7", "vendor_name": "ACME, Inc.", "amount": "120.50", "issue_date": "2026-02-01"})
	b := store(t, s, alice, map[string]any{"entity_type": "invoice", "invoice_number": "inv 7", "vendor_name": "acme inc"})
	if a.Entities[0].EntityID != b.Entities[0].EntityID {
		t.Fatalf("normalised identities differ: %s vs %s", a.Entities[0].EntityID, b.Entities[0].EntityID)
	}
	if got := knowledge.EntityID(alice.UserID, "invoice", "acme inc\x1finv 7"); got != a.Entities[0].EntityID {
		t.Errorf("EntityID = %s, want %s (ids must be reproducible from user, type and identity)", got, a.Entities[0].EntityID)
	}
	snap, err := s.EntitySnapshot(t.Context(), alice, a.Entities[0].EntityID, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Entity.Snapshot["amount"]; got != json.Number("120.50") {
		t.Errorf("amount = %#v, want the number 120.50", got)
	}
	found, err := s.EntitiesByIdentifier(t.Context(), alice, "Acme Inc", "")
	if err != nil || len(found) != 1 || found[0].ID != a.Entities[0].EntityID {
		t.Errorf("by identifier 'Acme Inc' = %v, %v; want the invoice", found, err)
	}
	events, total, err := s.Timeline(t.Context(), alice, knowledge.TimelineQuery{})
	if err != nil || total != 1 || events[0].EventType != "InvoiceIssued" || events[0].Timestamp != "2026-02-01" {
		t.Errorf("timeline = %+v (total %d), %v; want one InvoiceIssued on 2026-02-01", events, total, err)
	}
}

func TestCorrectionWinsOverLaterExtractions(t *testing.T) {
	s, clk := newService(t)
	res := store(t, s, alice, map[string]any{"entity_type": "person", "name": "Ada", "email": "ada@old.example"})
	id := res.Entities[0].EntityID
	clk.Advance(time.Minute)
	corr, err := s.Correct(t.Context(), alice, knowledge.CorrectRequest{EntityID: id, EntityType: "person", Field: "email", Value: "ada@new.example"})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	store(t, s, alice, map[string]any{"entity_type": "person", "name": "Ada", "email": "ada@later.example"})
	snap, err := s.EntitySnapshot(t.Context(), alice, id, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Entity.Snapshot["email"] != "ada@new.example" || snap.Entity.Provenance["email"] != corr.ObservationID {
		t.Errorf("email = %v from %s, want the correction %s", snap.Entity.Snapshot["email"], snap.Entity.Provenance["email"], corr.ObservationID)
	}
	again, err := s.Correct(t.Context(), alice, knowledge.CorrectRequest{EntityID: id, EntityType: "person", Field: "email", Value: "ada@new.example"})
	if err != nil || !again.Unchanged || again.ObservationID != corr.ObservationID {
		t.Errorf("repeated correction = %+v, %v; want unchanged with the same observation", again, err)
	}
	for _, bad := range []knowledge.CorrectRequest{
		{EntityID: id, EntityType: "company", Field: "email", Value: "x"},
		{EntityID: id, EntityType: "person", Field: "shoe_size", Value: "x"},
		{EntityID: id, EntityType: "person", Field: "birth_date", Value: "soon"},
	} {
		if _, err := s.Correct(t.Context(), alice, bad); !errors.Is(err, knowledge.ErrValidation) {
			t.Errorf("Correct(%+v) err = %v, want a validation error", bad, err)
		}
	}
}

func TestMergeEntities(t *testing.T) {
	s, clk := newService(t)
	a := store(t, s, alice, map[string]any{"entity_type": "company", "name": "Acme Corp", "industry": "anvils"}).Entities[0].EntityID
	b := store(t, s, alice, map[string]any{"entity_type": "company", "name": "Acme", "domain": "acme.example"}).Entities[0].EntityID
	c := store(t, s, alice, map[string]any{"entity_type": "person", "name": "Wile"}).Entities[0].EntityID
	if _, _, err := s.CreateRelationship(t.Context(), alice, knowledge.RelationshipRequest{Type: graph.RefersTo, SourceEntityID: c, TargetEntityID: a}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	res, err := s.MergeEntities(t.Context(), alice, a, b, "same company")
	if err != nil {
		t.Fatal(err)
	}
	if res.ObservationsMoved != 1 || res.RelationshipsMoved != 1 {
		t.Errorf("merge moved %d observations and %d relationships, want 1 and 1", res.ObservationsMoved, res.RelationshipsMoved)
	}
	snap, err := s.EntitySnapshot(t.Context(), alice, b, time.Time{})
	if err != nil || snap.Entity.Snapshot["industry"] != "anvils" || snap.Entity.Snapshot["domain"] != "acme.example" {
		t.Errorf("target snapshot = %v, %v; want fields of both", snap.Entity.Snapshot, err)
	}
	var merged *knowledge.MergedError
	if _, err := s.EntitySnapshot(t.Context(), alice, a, time.Time{}); !errors.As(err, &merged) || merged.MergedInto != b {
		t.Errorf("reading the merged entity: err = %v, want a MergedError naming %s", err, b)
	}
	if _, err := s.MergeEntities(t.Context(), alice, a, b, ""); !errors.Is(err, knowledge.ErrEntityMerged) {
		t.Errorf("merging again: err = %v, want ErrEntityMerged", err)
	}
	if _, err := s.MergeEntities(t.Context(), alice, b, c, ""); !errors.Is(err, knowledge.ErrValidation) {
		t.Errorf("merging a company into a person: err = %v, want a validation error", err)
	}
	// A later store of the merged identity lands on the target.
	later := store(t, s, alice, map[string]any{"entity_type": "company", "name": "Acme Corp", "employees": json.Number("12")})
	if later.Entities[0].EntityID != b {
		t.Errorf("store of the merged identity went to %s, want %s", later.Entities[0].EntityID, b)
	}
	rels, _, err := s.ListRelationships(t.Context(), alice, knowledge.RelationshipQuery{EntityID: b})
	if err != nil || len(rels) != 1 || rels[0].SourceEntityID != c {
		t.Errorf("relationships of the target = %+v, %v; want the re-pointed REFERS_TO from %s", rels, err, c)
	}
}

func TestCallerCannotSeeUnreadableTypes(t *testing.T) {
	s, _ := newService(t)
	id := store(t, s, alice, map[string]any{"entity_type": "contract", "title": "NDA"}).Entities[0].EntityID
	store(t, s, alice, map[string]any{"entity_type": "note", "title": "hello"})
	noContracts := alice
	noContracts.Allowed = func(_ knowledge.Action, resource string) bool {
		return resource != knowledge.EntityResource("contract")
	}
	if _, err := s.EntitySnapshot(t.Context(), noContracts, id, time.Time{}); !errors.Is(err, knowledge.ErrEntityNotFound) {
		t.Errorf("snapshot of an unreadable type: err = %v, want ErrEntityNotFound", err)
	}
	ents, total, err := s.ListEntities(t.Context(), noContracts, knowledge.EntityQuery{})
	if err != nil || total != 1 || ents[0].Type != "note" {
		t.Errorf("list = %v (total %d), %v; want only the note", ents, total, err)
	}
	if _, err := s.EntitySnapshot(t.Context(), bob, id, time.Time{}); !errors.Is(err, knowledge.ErrEntityNotFound) {
		t.Errorf("another user's entity: err = %v, want ErrEntityNotFound", err)
	}
}

func TestEntityTypesKeyword(t *testing.T) {
	s, _ := newService(t)
	tests := []struct {
		keyword, wantFirst, wantMethod string
	}{
		{"", "company", knowledge.SearchAll},
		{"invoice", "invoice", knowledge.SearchKeyword},
		{"email", "contact", knowledge.SearchKeyword},
		{"due_date", "invoice", knowledge.SearchKeyword},
	}
	for _, tt := range tests {
		got, err := s.EntityTypes(t.Context(), knowledge.Caller{UserID: "u"}, tt.keyword)
		if err != nil {
			t.Fatal(err)
		}
		if got.Method != tt.wantMethod || len(got.Matches) == 0 || got.Matches[0].Schema.EntityType != tt.wantFirst {
			first := ""
			if len(got.Matches) > 0 {
				first = got.Matches[0].Schema.EntityType
			}
			t.Errorf("EntityTypes(%q) = %s first via %s, want %s via %s", tt.keyword, first, got.Method, tt.wantFirst, tt.wantMethod)
		}
	}
}
