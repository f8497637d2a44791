package controlplane

import (
	"fmt"
	"testing"
)

// TestAuditDictBounded keeps the cache bounded however many distinct
// strings (made-up tool names) it sees.
func TestAuditDictBounded(t *testing.T) {
	d := newAuditDict()
	for i := range maxCached + 10 {
		d.strings.add(int64(i), fmt.Sprint("tool", i))
		d.callers.add(int64(i), auditCaller{UserID: "u", AgentName: fmt.Sprint("agent", i)})
	}
	if len(d.strings.ids) > maxCached || len(d.strings.value) > maxCached || len(d.callers.ids) > maxCached || len(d.callers.value) > maxCached {
		t.Errorf("cache holds %d strings, %d callers; want at most %d", len(d.strings.ids), len(d.callers.ids), maxCached)
	}
	if d.strings.ids["tool"+fmt.Sprint(maxCached+9)] != int64(maxCached+9) {
		t.Error("the newest entry is not cached")
	}
}

func TestRequestIDs(t *testing.T) {
	for _, s := range []*Store{{dialect: "sqlite"}, {dialect: "postgres"}} {
		for _, id := range []string{"trace_0123456789abcdef", "trace_0000000000000000", "trace_ABCDEF0123456789", "trace_0123",
			"req-1", "", "12345678", "\x00\x01", "trace_0123456789abcdefg"} {
			got, err := s.unpackRequest(roundTrip(s.packRequest(id)))
			if err != nil || got != id {
				t.Errorf("%s: %q read back as %q, %v", s.dialect, id, got, err)
			}
		}
		if b, ok := s.packRequest("trace_0123456789abcdef").([]byte); !ok || len(b) > 9 {
			t.Errorf("%s: a trace id packs to %v", s.dialect, s.packRequest("trace_0123456789abcdef"))
		}
	}
}

// roundTrip is what a driver gives back: bytes stay bytes, text stays
// text.
func roundTrip(v any) any {
	if b, ok := v.([]byte); ok {
		return append([]byte(nil), b...)
	}
	return v
}
