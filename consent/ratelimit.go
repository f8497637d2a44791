package consent

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// RateClass names a group of tools that share a rate limit.
type RateClass string

// The rate classes. Each key has one independent limit per class.
const (
	RateClassDefault RateClass = "default"
	RateClassStore   RateClass = "store"
	RateClassUpload  RateClass = "upload"
)

// DefaultLimits are the per-key limits per minute: 120 calls, 100 stores,
// 10 uploads.
var DefaultLimits = map[RateClass]int{RateClassDefault: 120, RateClassStore: 100, RateClassUpload: 10}

// RateStore keeps rate-limit counters where every process serving the same
// database sees them.
type RateStore interface {
	// HitRate adds one to the counter of (key, class, window) and returns
	// the new count, atomically.
	HitRate(ctx context.Context, keyID string, class RateClass, windowStart time.Time) (int, error)
	// PruneRates deletes the counters of windows that started before a
	// time.
	PruneRates(ctx context.Context, before time.Time) error
}

// Limiter enforces per-key limits in fixed windows (one minute by default):
// at most Limit calls of a class are admitted per key in a window, and the
// window resets at its end, as ValueRank's specification asks ("resets
// after 1 minute, not rolling"). Counters live in a RateStore so that
// several processes on one database share them.
type Limiter struct {
	store  RateStore
	limits map[RateClass]int
	window time.Duration
	now    func() time.Time
	hits   atomic.Int64
}

// LimiterOptions configure a Limiter. The zero value gives DefaultLimits
// per minute on the wall clock.
type LimiterOptions struct {
	// Limits per class; classes not named keep their default. A limit of
	// 0 or less disables limiting for that class.
	Limits map[RateClass]int
	// Window is the length of a window; 0 means a minute.
	Window time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// NewLimiter returns a limiter over a store.
func NewLimiter(store RateStore, opts LimiterOptions) *Limiter {
	l := &Limiter{store: store, limits: map[RateClass]int{}, window: opts.Window, now: opts.Now}
	for c, n := range DefaultLimits {
		l.limits[c] = n
	}
	for c, n := range opts.Limits {
		l.limits[c] = n
	}
	if l.window <= 0 {
		l.window = time.Minute
	}
	if l.now == nil {
		l.now = time.Now
	}
	return l
}

// RateVerdict is the outcome of one admission check, with what the
// X-RateLimit-* headers report.
type RateVerdict struct {
	Allowed   bool
	Limit     int
	Remaining int
	// Reset is when the current window ends.
	Reset time.Time
	// RetryAfter is how long to wait before a retry can succeed; zero when
	// allowed.
	RetryAfter time.Duration
}

// Limited reports whether the verdict comes from an enforced limit (false
// for classes without one, whose verdict has no headers to report).
func (v RateVerdict) Limited() bool { return v.Limit > 0 }

// Limit returns the configured limit of a class (0: unlimited).
func (l *Limiter) Limit(class RateClass) int { return l.limits[class] }

// Allow counts one call of a class by a key and says whether it is
// admitted. Refused calls count too, so hammering does not pay.
func (l *Limiter) Allow(ctx context.Context, keyID string, class RateClass) (RateVerdict, error) {
	limit, ok := l.limits[class]
	if !ok {
		limit = l.limits[RateClassDefault]
	}
	if limit <= 0 || keyID == "" {
		return RateVerdict{Allowed: true}, nil
	}
	now := l.now()
	start := now.Truncate(l.window)
	reset := start.Add(l.window)
	n, err := l.store.HitRate(ctx, keyID, class, start)
	if err != nil {
		return RateVerdict{}, fmt.Errorf("consent: rate limit: %w", err)
	}
	if l.hits.Add(1)%1024 == 0 {
		// Old windows are never read again; prune now and then.
		_ = l.store.PruneRates(ctx, start.Add(-l.window))
	}
	v := RateVerdict{Allowed: n <= limit, Limit: limit, Remaining: max(0, limit-n), Reset: reset}
	if !v.Allowed {
		v.RetryAfter = reset.Sub(now)
	}
	return v, nil
}
