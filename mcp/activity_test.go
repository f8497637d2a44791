package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/cairnkg/cairn/consent"
)

// TestActivityWaitsForALull runs a tool call that blocks and checks that
// WaitIdle does not return while it is in flight, returns once it has
// ended and the server stayed quiet, gives up waiting after its patience,
// and ends with its context.
func TestActivityWaitsForALull(t *testing.T) {
	act := &Activity{}
	if err := act.WaitIdle(t.Context(), time.Hour, time.Hour); err != nil {
		t.Fatalf("a server that has answered nothing: %v", err)
	}
	s, err := NewServer(Deps{Activity: act}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type in struct{}
	type out struct {
		Done bool `json:"done"`
	}
	release, started := make(chan struct{}), make(chan struct{})
	block := newTool(toolSpec{name: "block", title: "Block", description: "blocks", toolset: ToolsetEntities, ann: readOnly, budget: BudgetList},
		func(ctx context.Context, _ *Call, _ in) (out, error) {
			close(started)
			<-release
			return out{Done: true}, nil
		})
	s.tools = append(s.tools, block)
	s.byName["block"] = block
	p := consent.Principal{UserID: "u", AgentName: "owner", Owner: true}
	called := make(chan *Error, 1)
	go func() {
		_, e := s.Invoke(context.WithoutCancel(t.Context()), p, "block", json.RawMessage(`{}`))
		called <- e
	}()
	<-started

	// Busy: patience ends the wait.
	if err := act.WaitIdle(t.Context(), time.Hour, 10*time.Millisecond); err != nil {
		t.Fatalf("waiting past patience: %v", err)
	}
	// Busy: the context ends the wait.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if err := act.WaitIdle(ctx, time.Millisecond, time.Hour); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting with a call in flight until the context ends: %v", err)
	}
	// Busy until released.
	idle := make(chan error, 1)
	go func() { idle <- act.WaitIdle(t.Context(), 5*time.Millisecond, time.Hour) }()
	select {
	case err := <-idle:
		t.Fatalf("WaitIdle returned (%v) with a call in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if e := <-called; e != nil {
		t.Fatalf("the blocking call: %+v", e)
	}
	if err := <-idle; err != nil {
		t.Fatalf("waiting for the call to end: %v", err)
	}

	var none *Activity
	if err := none.WaitIdle(t.Context(), time.Hour, time.Hour); err != nil {
		t.Fatalf("a nil Activity: %v", err)
	}
	none.Begin()()
}
