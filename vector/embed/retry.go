package embed

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Backoff bounds. Retry-After is honoured up to maxRetryAfter so that a
// misbehaving server cannot stall a write for minutes.
const (
	backoffBase   = 500 * time.Millisecond
	backoffCap    = 8 * time.Second
	maxRetryAfter = 30 * time.Second
)

// retryInfo says whether a failed attempt may be retried and, when the
// server sent Retry-After, how long to wait first.
type retryInfo struct {
	ok       bool
	after    time.Duration
	hasAfter bool
}

// retryInfoFor classifies a non-2xx response: 429 and 5xx are transient,
// every other status (400, 401, 403, 404, …) is final.
func retryInfoFor(resp *http.Response) retryInfo {
	c := resp.StatusCode
	if c != http.StatusTooManyRequests && (c < 500 || c > 599) {
		return retryInfo{}
	}
	after, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	return retryInfo{ok: true, after: after, hasAfter: ok}
}

// parseRetryAfter reads a Retry-After value in seconds or as an HTTP date,
// capped at maxRetryAfter.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		d = maxRetryAfter
		if secs < int64(maxRetryAfter/time.Second) {
			d = time.Duration(secs) * time.Second
		}
	} else if t, err := http.ParseTime(v); err == nil {
		d = max(t.Sub(now), 0)
	} else {
		return 0, false
	}
	return min(d, maxRetryAfter), true
}

// backoff returns the wait before retry number attempt+1: exponential from
// backoffBase, capped at backoffCap, with "equal jitter" (half fixed, half
// random) so that concurrent clients do not retry in lock-step.
func (o *OpenAI) backoff(attempt int) time.Duration {
	d := backoffCap
	if attempt < 5 {
		d = min(backoffBase<<attempt, backoffCap)
	}
	half := d / 2
	o.mu.Lock()
	j := time.Duration(o.rng.Int64N(int64(half) + 1))
	o.mu.Unlock()
	return half + j
}

// sleepCtx waits for d or until ctx is done, whichever comes first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
