package knowledge

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// maxFieldNameLen bounds field names, which become JSON keys and index rows.
const maxFieldNameLen = 128

// jsonType names the JSON type of a decoded value, for error messages.
func jsonType(v any) string {
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

// expectedText describes what a field type accepts, for error messages.
func expectedText(t FieldType) string {
	switch t {
	case TypeDate:
		return "date (ISO 8601, e.g. 2024-01-31 or 2024-01-31T09:30:00Z)"
	case TypeNumber:
		return "number"
	default:
		return string(t)
	}
}

// coerceField checks v against a schema field type and returns it in its
// stored form. Numbers given as numeric strings become numbers, numbers
// given for string fields become their decimal text, and dates are
// normalised (date-only values stay dates, date-times become RFC 3339 UTC).
// Anything else of the wrong type is a *ValidationError at path.
func coerceField(path string, t FieldType, v any) (any, error) {
	bad := func() error {
		return invalid(path, expectedText(t), jsonType(v), "expected %s, got %s", expectedText(t), jsonType(v))
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
			if d, ok := normalizeDate(s); ok {
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

// normalizeDate returns s as a canonical ISO 8601 date or date-time.
func normalizeDate(s string) (string, bool) {
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

// parseDate parses a normalised date or date-time for ordering.
func parseDate(s string) (time.Time, bool) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, true
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), true
	}
	return time.Time{}, false
}

// ParseTime parses an ISO 8601 date or date-time given as an argument (an
// `at`, an `after_date`). A date alone means its midnight UTC.
func ParseTime(field, s string) (time.Time, error) {
	if d, ok := normalizeDate(s); ok {
		if t, ok := parseDate(d); ok {
			return t, nil
		}
	}
	return time.Time{}, invalid(field, expectedText(TypeDate), "string", "expected %s, got %q", expectedText(TypeDate), truncate(s, 64))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
