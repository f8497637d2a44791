package knowledge_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/knowledge"
)

// TestMaxFieldBytesOption bounds field values by Options.MaxFieldBytes:
// with a bound of 16 bytes, a name of 16 bytes of JSON is stored and one
// of 17 is refused, for store and correct alike.
func TestMaxFieldBytesOption(t *testing.T) {
	s := newServiceWith(t, knowledge.Options{MaxFieldBytes: 16})
	name := func(n int) string { return strings.Repeat("n", n-2) } // n bytes as JSON

	res := store(t, s, alice, map[string]any{"entity_type": "person", "name": name(16)})
	_, err := s.Store(t.Context(), alice, knowledge.StoreRequest{Entities: []map[string]any{{"entity_type": "person", "name": name(17)}}})
	wantFieldError(t, "store", err, "entities[0].name", "16")

	id := res.Entities[0].EntityID
	if _, err := s.Correct(t.Context(), alice, knowledge.CorrectRequest{EntityID: id, EntityType: "person", Field: "notes", Value: name(16)}); err != nil {
		t.Fatalf("correct at the bound: %v", err)
	}
	_, err = s.Correct(t.Context(), alice, knowledge.CorrectRequest{EntityID: id, EntityType: "person", Field: "notes", Value: name(17)})
	wantFieldError(t, "correct", err, "value", "16")
}

func wantFieldError(t *testing.T, call string, err error, field, expected string) {
	t.Helper()
	var ve *knowledge.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("%s over the bound: err = %v, want a *ValidationError", call, err)
	}
	if ve.Field != field || !strings.Contains(ve.Expected, expected) {
		t.Errorf("%s over the bound: field %q, expected %q; want %q and the bound %s", call, ve.Field, ve.Expected, field, expected)
	}
}
