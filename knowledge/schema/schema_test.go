package schema_test

import (
	"encoding/json"
	"errors"
	"testing"

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
	if sc := schema.Infer("meal", []map[string]any{{"kcal": 1}}); len(sc.Fields) != 0 {
		t.Errorf("no candidate: fields %v, want none", sc.Fields)
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
