package schema_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/knowledge/schema"
)

func TestNormalizeAndValidateTypeName(t *testing.T) {
	for in, want := range map[string]string{"Bank Account": "bank_account", "bank-account": "bank_account", " a.b  c ": "a_b_c"} {
		if got := schema.NormalizeTypeName(in); got != want {
			t.Errorf("NormalizeTypeName(%q) = %q, want %q", in, got, want)
		}
	}
	if err := schema.ValidateTypeName("entity_type", "bank_account"); err != nil {
		t.Errorf("bank_account: %v", err)
	}
	err := schema.ValidateTypeName("entity_type", "9lives")
	var inv *schema.InvalidError
	if !errors.As(err, &inv) || inv.Field != "entity_type" || !errors.Is(err, schema.ErrInvalid) {
		t.Errorf("9lives: err = %v, want an *InvalidError at entity_type", err)
	}
}

func TestInferPicksIdentity(t *testing.T) {
	sc := schema.Infer("meal", []map[string]any{{"entity_type": "meal", "meal_id": json.Number("3"), "kcal": json.Number("500")}})
	if len(sc.IdentityFields) != 1 || sc.IdentityFields[0] != "meal_id" || sc.Fields["meal_id"].Type != schema.TypeNumber {
		t.Errorf("inferred %+v, want meal_id, a number, as the identity", sc)
	}
	if sc := schema.Infer("meal", []map[string]any{{"kcal": json.Number("1")}}); len(sc.IdentityFields) != 0 || len(sc.Fields) != 1 {
		t.Errorf("no candidate: identity %v, fields %v; want none and kcal", sc.IdentityFields, sc.FieldNames())
	}
}

// TestInferTypesEveryField: a first store's schema holds every field it
// gives, typed by the values, whatever the order of entities.
func TestInferTypesEveryField(t *testing.T) {
	entities := []map[string]any{
		{"entity_type": "trip", "name": "Lisbon", "nights": json.Number("4"), "booked": true, "stops": []any{"Sintra"},
			"hotel": map[string]any{"name": "Tivoli"}, "departs": "2026-05-01", "note": "first", "mixed": json.Number("3"), "odd": "x", "nothing": nil},
		{"entity_type": "trip", "name": json.Number("7"), "departs": "2026-06-02T08:00:00Z", "note": json.Number("2"), "mixed": "2026-01-01", "odd": map[string]any{}},
	}
	want := map[string]schema.Field{
		"name":    {Type: schema.TypeString, Identifier: true, Description: "Identifies the record (inferred)."},
		"nights":  {Type: schema.TypeNumber},
		"booked":  {Type: schema.TypeBoolean},
		"stops":   {Type: schema.TypeArray, Policy: schema.MergeArray},
		"hotel":   {Type: schema.TypeObject},
		"departs": {Type: schema.TypeDate, EventType: "TripDeparts"},
		"note":    {Type: schema.TypeString},
		"mixed":   {Type: schema.TypeString},
		// odd: a string and an object share no type; nothing: only null.
	}
	for k, f := range want {
		if !f.Identifier {
			f.Inferred, f.Description = true, "Inferred from the first store of the type."
			want[k] = f
		}
	}
	for _, order := range [][]int{{0, 1}, {1, 0}} {
		sc := schema.Infer("trip", []map[string]any{entities[order[0]], entities[order[1]]})
		if diff := cmp.Diff(want, sc.Fields); diff != "" {
			t.Errorf("order %v (-want +got):\n%s", order, diff)
		}
		if err := schema.CheckDefinition(sc); err != nil {
			t.Errorf("order %v: %v", order, err)
		}
	}
	// At most MaxInferredFields: the identity, then the others by name.
	wide := map[string]any{"name": "w"}
	for i := range schema.MaxInferredFields + 10 {
		wide[fmt.Sprintf("f%03d", i)] = json.Number("1")
	}
	sc := schema.Infer("wide", []map[string]any{wide})
	if len(sc.Fields) != schema.MaxInferredFields || sc.Fields["name"].Type == "" || sc.Fields["f000"].Type == "" ||
		sc.Fields[fmt.Sprintf("f%03d", schema.MaxInferredFields-1)].Type != "" {
		t.Errorf("wide: %d fields %v", len(sc.Fields), sc.FieldNames())
	}
}

func TestCompatibleAndNextVersion(t *testing.T) {
	prev := &schema.Schema{EntityType: "x", Version: "1.0", IdentityFields: []string{"name"},
		Fields: map[string]schema.Field{"name": {Type: schema.TypeString}, "n": {Type: schema.TypeNumber}}}
	next := prev.Clone()
	next.Fields["n"] = schema.Field{Type: schema.TypeString}
	if err := schema.Compatible(prev, next); err != nil {
		t.Errorf("number to string: %v", err)
	}
	next.Fields["n"] = schema.Field{Type: schema.TypeBoolean}
	if err := schema.Compatible(prev, next); !errors.Is(err, schema.ErrInvalid) {
		t.Errorf("number to boolean: err = %v, want ErrInvalid", err)
	}
	if prev.Fields["n"].Type != schema.TypeNumber {
		t.Error("Clone shares its fields with the original")
	}
	if v := schema.NextVersion("1.0", []schema.Version{{Version: "1.1"}}); v != "1.2" {
		t.Errorf("NextVersion = %s, want 1.2", v)
	}
}

func TestFilterMatch(t *testing.T) {
	snap := map[string]any{"amount": json.Number("12.5"), "name": "Acme", "tags": []any{"a", "b"}}
	for _, tc := range []struct {
		f    schema.Filter
		want bool
	}{
		{schema.Filter{Field: "amount", Op: "gt", Value: 10.0}, true},
		{schema.Filter{Field: "amount", Op: "eq", Value: "12.5"}, true},
		{schema.Filter{Field: "name", Op: "eq", Value: "acme"}, true},
		{schema.Filter{Field: "name", Op: "contains", Value: "CM"}, true},
		{schema.Filter{Field: "tags", Op: "contains", Value: "c"}, false},
		{schema.Filter{Field: "missing", Op: "ne", Value: 1.0}, true},
		{schema.Filter{Field: "name", Op: "in", Value: []any{"x", "ACME"}}, true},
	} {
		if got := schema.Match(snap, []schema.Filter{tc.f}); got != tc.want {
			t.Errorf("%+v: Match = %v, want %v", tc.f, got, tc.want)
		}
	}
	if err := schema.CheckFilters([]schema.Filter{{Field: "a", Op: "like"}}); !errors.Is(err, schema.ErrInvalid) {
		t.Errorf("unknown operator: err = %v, want ErrInvalid", err)
	}
}

// TestEventTypeForKeepsUTF8: the event type of a date field is its type's
// and field's words capitalised, letter by letter rather than byte by byte.
func TestEventTypeForKeepsUTF8(t *testing.T) {
	for field, want := range map[string]string{"cooked_on": "RecipeCookedOn", "émis le": "RecipeÉmisLe", "日付": "Recipe日付", "a--b": "RecipeAB"} {
		if got := schema.EventTypeFor("recipe", field); got != want || !utf8.ValidString(got) {
			t.Errorf("EventTypeFor(recipe, %q) = %q, want %q", field, got, want)
		}
	}
}
