package schema

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Epitome's tables are a view of the schema registry: a table is an entity
// type, its columns are the schema's fields, its records the entities. A
// Filter is one condition of a table query; the service runs the filters
// over the snapshots (knowledge's Service.QueryTable), the same way on
// every backend.

// Filter is one condition of a table query on a snapshot field.
type Filter struct {
	Field string
	// Op is eq, ne, gt, gte, lt, lte, contains (text, case-insensitive, or
	// an array element) or in (one of a list).
	Op    string
	Value any
}

// FilterOps are the operators a Filter may use.
var FilterOps = []string{"eq", "ne", "gt", "gte", "lt", "lte", "contains", "in"}

// CheckFilters returns an *InvalidError naming the first filter with an
// unknown operator, or an in whose value is not an array.
func CheckFilters(filters []Filter) error {
	for i, f := range filters {
		if !slices.Contains(FilterOps, f.Op) {
			return invalid(fmt.Sprintf("filters.%s", f.Field), "one of: "+strings.Join(FilterOps, ", "), f.Op, "unknown operator %q", truncate(f.Op, 16))
		}
		if f.Op == "in" {
			if _, ok := f.Value.([]any); !ok {
				return invalid(fmt.Sprintf("filters.%s.in", filters[i].Field), "array", JSONType(f.Value), "in needs an array of values")
			}
		}
	}
	return nil
}

// Match reports whether a snapshot passes every filter.
func Match(snapshot map[string]any, filters []Filter) bool {
	for _, f := range filters {
		v, ok := snapshot[f.Field]
		if !matchOp(v, ok, f.Op, f.Value) {
			return false
		}
	}
	return true
}

func matchOp(v any, present bool, op string, want any) bool {
	switch op {
	case "eq":
		return present && equalValues(v, want)
	case "ne":
		return !present || !equalValues(v, want)
	case "in":
		list, _ := want.([]any)
		return present && slices.ContainsFunc(list, func(w any) bool { return equalValues(v, w) })
	case "contains":
		if !present {
			return false
		}
		if arr, ok := v.([]any); ok {
			return slices.ContainsFunc(arr, func(x any) bool { return equalValues(x, want) })
		}
		return strings.Contains(strings.ToLower(ValueText(v)), strings.ToLower(ValueText(want)))
	default:
		if !present {
			return false
		}
		c, ok := compareValues(v, want)
		if !ok {
			return false
		}
		switch op {
		case "gt":
			return c > 0
		case "gte":
			return c >= 0
		case "lt":
			return c < 0
		case "lte":
			return c <= 0
		}
	}
	return false
}

// tableNumber returns v as a float when it is a number, or a string holding one.
func tableNumber(v any) (float64, bool) {
	switch v := v.(type) {
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	case float64:
		return v, true
	case int:
		return float64(v), true
	}
	return 0, false
}

func equalValues(a, b any) bool {
	if x, ok := tableNumber(a); ok {
		if y, ok := tableNumber(b); ok {
			return x == y
		}
		if s, ok := b.(string); ok {
			y, err := strconv.ParseFloat(s, 64)
			return err == nil && x == y
		}
	}
	if sa, ok := a.(string); ok {
		if sb, ok := b.(string); ok {
			return strings.EqualFold(sa, sb)
		}
	}
	ja, _ := canonicalJSON(a)
	jb, _ := canonicalJSON(b)
	return string(ja) == string(jb)
}

// compareValues orders two numbers, or two strings (dates in ISO 8601
// order as text).
func compareValues(a, b any) (int, bool) {
	if x, ok := tableNumber(a); ok {
		if y, ok := tableNumber(b); ok {
			switch {
			case x < y:
				return -1, true
			case x > y:
				return 1, true
			}
			return 0, true
		}
	}
	sa, okA := a.(string)
	sb, okB := b.(string)
	if okA && okB {
		return strings.Compare(sa, sb), true
	}
	return 0, false
}
