package controlplane

import (
	"context"
	"time"

	"github.com/cairnkg/cairn/consent"
)

// HitRate implements consent.RateStore with one atomic upsert, so that
// concurrent callers, in one process or several, never lose a hit.
func (s *Store) HitRate(ctx context.Context, keyID string, class consent.RateClass, windowStart time.Time) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `INSERT INTO rate_limits (key_id, class, window_start, hits) VALUES ($1, $2, $3, 1)
		ON CONFLICT (key_id, class, window_start) DO UPDATE SET hits = rate_limits.hits + 1
		RETURNING hits`, keyID, string(class), micros(windowStart)).Scan(&n)
	return n, wrap("rate limit", err)
}

// PruneRates implements consent.RateStore.
func (s *Store) PruneRates(ctx context.Context, before time.Time) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM rate_limits WHERE window_start < $1`, micros(before))
	return wrap("prune rate limits", err)
}
