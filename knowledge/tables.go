package knowledge

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cairnkg/cairn/graph"
)

// Epitome's tables are a view of the schema registry: a table is an entity
// type, its columns are the schema's fields, its records the entities.

// Table describes one entity type as a table.
type Table struct {
	Schema *Schema
	Count  int
}

// Tables lists the caller's tables: the readable entity types that have
// entities or a schema of the user's own, by name.
func (s *Service) Tables(ctx context.Context, c Caller) ([]Table, error) {
	set, err := s.schemas.For(ctx, c.UserID)
	if err != nil {
		return nil, err
	}
	var counts map[string]int
	err = s.graph.View(ctx, func(tx *graph.Tx) error {
		var err error
		counts, err = tx.EntityTypeCounts(ctx, c.UserID)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := []Table{}
	for _, sc := range set.All() {
		if c.readable(sc.EntityType) && (counts[sc.EntityType] > 0 || sc.Owner == c.UserID) {
			out = append(out, Table{Schema: sc, Count: counts[sc.EntityType]})
		}
	}
	return out, nil
}

// TableFilter is one condition of a table query on a snapshot field.
type TableFilter struct {
	Field string
	// Op is eq, ne, gt, gte, lt, lte, contains (text, case-insensitive, or
	// an array element) or in (one of a list).
	Op    string
	Value any
}

// TableOps are the operators a TableFilter may use.
var TableOps = []string{"eq", "ne", "gt", "gte", "lt", "lte", "contains", "in"}

// MaxTableLimit bounds one page of QueryTable.
const MaxTableLimit = 1000

// QueryTable returns a page of the caller's entities of a type whose
// snapshots pass every filter, most recently observed first, and how many
// pass in all. The filters run over the snapshots in the service (an
// entity type of a user is a few thousand entities at most in practice),
// the same way on every backend. A type the caller may not read reads as
// an empty table.
func (s *Service) QueryTable(ctx context.Context, c Caller, entityType string, filters []TableFilter, limit, offset int) ([]graph.Entity, int, error) {
	typ := NormalizeTypeName(entityType)
	for i, f := range filters {
		if !slices.Contains(TableOps, f.Op) {
			return nil, 0, invalid(fmt.Sprintf("filters.%s", f.Field), "one of: "+strings.Join(TableOps, ", "), f.Op, "unknown operator %q", truncate(f.Op, 16))
		}
		if f.Op == "in" {
			if _, ok := f.Value.([]any); !ok {
				return nil, 0, invalid(fmt.Sprintf("filters.%s.in", filters[i].Field), "array", jsonType(f.Value), "in needs an array of values")
			}
		}
	}
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, MaxTableLimit)
	var matched []graph.Entity
	const page = 500
	for off := 0; ; off += page {
		ents, total, err := s.ListEntities(ctx, c, EntityQuery{EntityType: typ, Page: graph.Page{Limit: page, Offset: off}})
		if err != nil {
			return nil, 0, err
		}
		for _, e := range ents {
			if passes(e.Snapshot, filters) {
				matched = append(matched, e)
			}
		}
		if len(ents) < page || off+page >= total {
			break
		}
	}
	total := len(matched)
	if offset >= total {
		return []graph.Entity{}, total, nil
	}
	return matched[offset:min(total, offset+limit)], total, nil
}

func passes(snap map[string]any, filters []TableFilter) bool {
	for _, f := range filters {
		v, ok := snap[f.Field]
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
		return strings.Contains(strings.ToLower(scalarText(v)), strings.ToLower(scalarText(want)))
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
