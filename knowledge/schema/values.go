package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// MaxFieldNameLen bounds field names, which become JSON keys and index rows.
const MaxFieldNameLen = 128

// JSONType names the JSON type of a decoded value, for error messages.
func JSONType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case json.Number, float64, float32, int, int64, int32:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// Expected describes what a field type accepts, for error messages.
func (t FieldType) Expected() string {
	switch t {
	case TypeDate:
		return "date (ISO 8601, e.g. 2024-01-31 or 2024-01-31T09:30:00Z)"
	case TypeNumber:
		return "number"
	default:
		return string(t)
	}
}

// Coerce checks v against the field type and returns it in its stored
// form. Numbers given as numeric strings become numbers, numbers given for
// string fields become their decimal text, and dates are normalised
// (date-only values stay dates, date-times become RFC 3339 UTC). Anything
// else of the wrong type is an *InvalidError at path.
func (t FieldType) Coerce(path string, v any) (any, error) {
	bad := func() error {
		return invalid(path, t.Expected(), JSONType(v), "expected %s, got %s", t.Expected(), JSONType(v))
	}
	switch t {
	case TypeString:
		switch v := v.(type) {
		case string:
			return v, nil
		case json.Number:
			return v.String(), nil
		}
	case TypeNumber:
		switch v := v.(type) {
		case json.Number:
			return v, nil
		case float64:
			if math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, bad()
			}
			return json.Number(strconv.FormatFloat(v, 'f', -1, 64)), nil
		case string:
			s := strings.TrimSpace(v)
			if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				return json.Number(s), nil
			}
		}
	case TypeDate:
		if s, ok := v.(string); ok {
			if d, ok := NormalizeDate(s); ok {
				return d, nil
			}
		}
	case TypeBoolean:
		if _, ok := v.(bool); ok {
			return v, nil
		}
	case TypeArray:
		if _, ok := v.([]any); ok {
			return v, nil
		}
	case TypeObject:
		if _, ok := v.(map[string]any); ok {
			return v, nil
		}
	}
	return nil, bad()
}

// dateLayouts are the ISO 8601 forms accepted for date fields, most
// specific first.
var dateLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05"}

// NormalizeDate returns s as a canonical ISO 8601 date or date-time.
func NormalizeDate(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t.Format("2006-01-02"), true
	}
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Format(time.RFC3339Nano), true
		}
	}
	return "", false
}

// ParseDate parses a normalised date or date-time (as NormalizeDate
// returns them) for ordering.
func ParseDate(s string) (time.Time, bool) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, true
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), true
	}
	return time.Time{}, false
}

// ValueText renders a JSON value as text, as identifiers, names and the
// contains filter read it: a string as itself, a number as written, null
// as nothing, anything else as its canonical JSON.
func ValueText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case nil:
		return ""
	default:
		b, _ := canonicalJSON(v)
		return string(b)
	}
}
