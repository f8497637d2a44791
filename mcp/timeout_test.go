package mcp

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cairnkg/cairn/consent"
)

// TestCallTimeout: a call that runs past --call-timeout has its context
// cancelled and answers TIMEOUT; a call within it is unaffected.
func TestCallTimeout(t *testing.T) {
	s, err := NewServer(Deps{}, Options{CallTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	type in struct {
		Sleep string `json:"sleep"`
	}
	type out struct {
		Slept bool `json:"slept"`
	}
	cancelled := make(chan error, 1)
	slow := newTool(toolSpec{name: "slow", title: "Slow", description: "sleeps", toolset: ToolsetEntities, ann: readOnly, budget: BudgetList},
		func(ctx context.Context, _ *Call, in in) (out, error) {
			d, _ := time.ParseDuration(in.Sleep)
			select {
			case <-time.After(d):
				return out{Slept: true}, nil
			case <-ctx.Done():
				cancelled <- ctx.Err()
				return out{}, ctx.Err()
			}
		})
	s.tools = append(s.tools, slow)
	s.byName["slow"] = slow

	p := consent.Principal{UserID: "u", AgentName: "owner", Owner: true}
	if _, e := s.Invoke(t.Context(), p, "slow", json.RawMessage(`{"sleep":"1ms"}`)); e != nil {
		t.Fatalf("a quick call: %+v", e)
	}
	start := time.Now()
	_, e := s.Invoke(t.Context(), p, "slow", json.RawMessage(`{"sleep":"1h"}`))
	if e == nil || e.Body.Code != CodeTimeout || e.Status != 504 || e.Body.Details["timeout_seconds"] != 0.05 {
		t.Fatalf("a call past its deadline = %+v, want TIMEOUT (504) with timeout_seconds 0.05", e)
	}
	if err := <-cancelled; err != context.DeadlineExceeded {
		t.Errorf("the handler saw %v, want its context cancelled by the deadline", err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the timed-out call took %v", took)
	}
	if _, err := NewServer(Deps{}, Options{CallTimeout: -time.Second}); err == nil {
		t.Error("a negative call timeout was accepted")
	}
}
