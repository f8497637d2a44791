package mcp

import (
	"context"
	"sync"
	"time"
)

// Activity tracks the tool calls a server is answering, so that work
// beside them can wait for a lull instead of taking the cores the calls
// need: on a small machine the built-in sentence model, embedding a bulk
// load's entities in the background, slowed the load itself by about a
// sixth (docs/performance.md, "Background embedding waits for a lull").
// Every call through Server.Handle counts, whatever its transport. The
// zero value is ready; a nil *Activity counts nothing and never waits.
type Activity struct {
	mu       sync.Mutex
	inFlight int
	lastEnd  time.Time
}

// Begin counts a call in flight until end is called; Server.Handle calls
// it for every call.
func (a *Activity) Begin() (end func()) {
	if a == nil {
		return func() {}
	}
	a.mu.Lock()
	a.inFlight++
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		a.inFlight--
		a.lastEnd = time.Now()
		a.mu.Unlock()
	}
}

// WaitIdle returns once no call has been in flight for quiet, or once it
// has waited patience (so that work waiting for a lull still gets on
// under steady traffic), or with ctx's error when ctx ends first.
func (a *Activity) WaitIdle(ctx context.Context, quiet, patience time.Duration) error {
	if a == nil {
		return ctx.Err()
	}
	deadline := time.Now().Add(patience)
	for {
		a.mu.Lock()
		now := time.Now()
		wait := quiet
		if a.inFlight == 0 {
			wait = quiet - now.Sub(a.lastEnd)
		}
		a.mu.Unlock()
		if wait <= 0 || !now.Before(deadline) {
			return ctx.Err()
		}
		t := time.NewTimer(min(wait, deadline.Sub(now)))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
