package postgres

import (
	"strings"
	"testing"
)

// TestSuccessor checks the end of a completion's key range: after every
// text that begins with the prefix, before every other text after it.
func TestSuccessor(t *testing.T) {
	for _, tc := range []struct {
		p, want string
		ok      bool
	}{
		{"acme", "acmf", true},
		{"émi", "émj", true},
		{"a\u007f", "a\u0080", true},
		{"z\uD7FF", "z\uE000", true},
		{"ab\U0010FFFF", "ac", true},
		{"\U0010FFFF\U0010FFFF", "", false},
	} {
		got, ok := successor(tc.p)
		if got != tc.want || ok != tc.ok {
			t.Errorf("successor(%q) = %q, %v; want %q, %v", tc.p, got, ok, tc.want, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		for _, s := range []string{tc.p, tc.p + "\U0010FFFF\U0010FFFF", tc.p + " smith", tc.p + "\x00"} {
			if s >= got {
				t.Errorf("%q begins with %q but is not before %q", s, tc.p, got)
			}
		}
		if strings.HasPrefix(got, tc.p) {
			t.Errorf("successor(%q) = %q begins with it", tc.p, got)
		}
	}
}
