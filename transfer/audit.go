package transfer

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cairnkg/cairn/consent"
)

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// auditKey identifies an audit record across stores, whose ids differ.
func auditKey(r consent.AuditRecord) string {
	return fmt.Sprintf("%d\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s", r.At.UnixMicro(), r.RequestID, r.Tool, r.Kind,
		r.Action, r.Resource, r.Decision, r.AgentName, r.ResultCode)
}

// sameJSON returns v's JSON, to tell whether two rows hold the same data
// (times compared as UTC instants).
func sameJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
