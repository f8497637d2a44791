package mcp

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Progress. A client that sends a progressToken with a tools/call hears how
// the call goes: tools that know their progress report it (arkiver's wait
// for a job, in percent), and every call that runs longer than the
// server's ProgressEvery says, every ProgressEvery, that it is still
// working, so that a host can show it and keep its own timeout from
// firing (the TypeScript SDK resets its request timeout on progress when
// asked to). MCP requires a call's progress values to increase; a tool's
// values that would not are dropped. The beats count up towards 1 without
// reaching it (n/(n+1)) and carry no total, so a tool's first report of
// one item or more always continues them; once a tool reports, the beats
// stop.

// DefaultProgressEvery is how often a long call reports that it is still
// working, unless Options.ProgressEvery says otherwise.
const DefaultProgressEvery = time.Second

// progressKey carries a progress reporter in a call's context.
type progressKey struct{}

// progressFunc reports progress to the client that asked for it (a
// progressToken); it does nothing otherwise.
type progressFunc func(progress, total float64, message string)

func withProgress(ctx context.Context, f progressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

func progressFrom(ctx context.Context) progressFunc {
	if f, ok := ctx.Value(progressKey{}).(progressFunc); ok {
		return f
	}
	return func(float64, float64, string) {}
}

// progressReporter sends one call's progress notifications, in increasing
// order, and the beats of a call whose tool reports none.
type progressReporter struct {
	send func(progress, total float64, message string)

	mu    sync.Mutex
	last  float64
	beats int
	own   bool // the tool reported progress of its own
	done  bool
}

// report is the tool's progressFunc.
func (r *progressReporter) report(progress, total float64, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.own = true
	if r.done || progress <= r.last {
		return
	}
	r.last = progress
	r.send(progress, total, message)
}

// beat says the call is still working after elapsed, unless its tool
// reports progress of its own.
func (r *progressReporter) beat(elapsed time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done || r.own {
		return
	}
	r.beats++
	r.last = float64(r.beats) / float64(r.beats+1)
	r.send(r.last, 0, fmt.Sprintf("working (%s)", elapsed.Round(time.Second)))
}

// run beats every interval until stop is called, and returns stop, which
// also ends the reports: none is sent after the call's answer.
func (r *progressReporter) run(interval time.Duration) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		start := time.Now()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				r.beat(time.Since(start))
			}
		}
	})
	return func() {
		close(quit)
		wg.Wait()
		r.mu.Lock()
		r.done = true
		r.mu.Unlock()
	}
}
