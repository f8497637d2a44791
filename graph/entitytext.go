package graph

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// MaxEntityText bounds EntityText, in bytes.
const MaxEntityText = 300

// EntityText is the text an entity is embedded as and compared with a
// context topic as: its type (underscores as spaces), its canonical name
// and its top-level snapshot values in key order, strings as they are,
// numbers in one notation whatever the one they were written in (see
// numberText) and other scalars as JSON (arrays, objects, booleans and
// nulls left out), cut to MaxEntityText bytes. For example
//
//	company: Acme Corp; 120; Lyon; active
func EntityText(e Entity) string {
	var b strings.Builder
	b.WriteString(strings.ReplaceAll(e.Type, "_", " "))
	b.WriteString(": ")
	b.WriteString(e.CanonicalName)
	for _, k := range slices.Sorted(maps.Keys(e.Snapshot)) {
		if b.Len() >= MaxEntityText {
			break
		}
		switch v := e.Snapshot[k].(type) {
		case string:
			b.WriteString("; ")
			b.WriteString(v)
		case []any, map[string]any, nil, bool:
		case json.Number, float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
			b.WriteString("; ")
			b.WriteString(numberText(v))
		default:
			b.WriteString("; ")
			b.WriteString(scalarJSON(v))
		}
	}
	text := b.String()
	if len(text) > MaxEntityText {
		text = strings.ToValidUTF8(text[:MaxEntityText], "")
	}
	return text
}

// scalarJSON is v in JSON, without HTML escaping, as knowledge's canonical
// JSON writes it.
func scalarJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimRight(buf.String(), "\n")
}

// maxNumberExponent bounds the exponents numberText rewrites; a number
// beyond it keeps its own notation.
const maxNumberExponent = 1 << 20

// numberText writes a number (a json.Number or a Go number) in one
// notation for its value, so that the text is the same whether a backend
// gives the number back as it was written or in a notation of its own
// (PostgreSQL's jsonb writes 1e21 as 1000000000000000000000 and keeps
// 1.50's trailing zero): plain decimals between 1e-6 and 1e21, as
// JavaScript writes numbers, without trailing fractional zeros, and
// otherwise d.ddde±n. The second result is false for a value it leaves as
// written (an exponent beyond maxNumberExponent, or what is not a JSON
// number).
func numberText(v any) string {
	s, _ := canonicalNumber(v)
	return s
}

func canonicalNumber(v any) (string, bool) {
	var s string
	if n, ok := v.(json.Number); ok {
		s = n.String()
	} else {
		s = scalarJSON(v)
	}
	neg := strings.HasPrefix(s, "-")
	m := strings.TrimPrefix(s, "-")
	exp := 0
	if i := strings.IndexAny(m, "eE"); i >= 0 {
		e, err := strconv.Atoi(m[i+1:])
		if err != nil || e > maxNumberExponent || e < -maxNumberExponent {
			return s, false
		}
		m, exp = m[:i], e
	}
	intPart, frac, _ := strings.Cut(m, ".")
	if intPart == "" || strings.Trim(intPart+frac, "0123456789") != "" {
		return s, false
	}
	// The value is 0.digits × 10^point.
	digits, point := intPart+frac, len(intPart)+exp
	trimmed := strings.TrimLeft(digits, "0")
	point -= len(digits) - len(trimmed)
	digits = strings.TrimRight(trimmed, "0")
	if digits == "" {
		return "0", true
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	switch {
	case point > 21 || point <= -6:
		b.WriteString(digits[:1])
		if len(digits) > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if point-1 >= 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.Itoa(point - 1))
	case point <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -point))
		b.WriteString(digits)
	case point >= len(digits):
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", point-len(digits)))
	default:
		b.WriteString(digits[:point])
		b.WriteByte('.')
		b.WriteString(digits[point:])
	}
	return b.String(), true
}
