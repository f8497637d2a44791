package schema

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Small helpers the package keeps to itself rather than importing from
// knowledge (which imports it). The ids hashID makes are stored (schema
// versions, recommendations): their form must not change.

// hashID derives a short stable id with a prefix from its parts.
func hashID(prefix string, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return prefix + hex.EncodeToString(h.Sum(nil)[:12])
}

// canonicalJSON encodes v with sorted object keys, exact numbers and no HTML
// escaping: the same value always gives the same bytes.
func canonicalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("knowledge: canonical json: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// roundScore rounds a score to four decimals.
func roundScore(f float64) float64 { return float64(int64(f*10000+0.5)) / 10000 }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
