package knowledge

import (
	"time"

	"github.com/cairnkg/cairn/knowledge/schema"
)

// coerceField checks v against a schema field type and returns it in its
// stored form (see schema.FieldType.Coerce); a value of the wrong type is
// a *ValidationError at path.
func coerceField(path string, t schema.FieldType, v any) (any, error) {
	out, err := t.Coerce(path, v)
	return out, validationError(err)
}

// ParseTime parses an ISO 8601 date or date-time given as an argument (an
// `at`, an `after_date`). A date alone means its midnight UTC.
func ParseTime(field, s string) (time.Time, error) {
	if d, ok := schema.NormalizeDate(s); ok {
		if t, ok := schema.ParseDate(d); ok {
			return t, nil
		}
	}
	return time.Time{}, invalid(field, schema.TypeDate.Expected(), "string", "expected %s, got %q", schema.TypeDate.Expected(), truncate(s, 64))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
