package graphtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
)

// enqueue enqueues entities of user in a transaction of its own.
func enqueue(t *testing.T, s *graph.Store, user string, when time.Time, ids ...string) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx *graph.Tx) error { return tx.EnqueueOutbox(ctx, user, ids, when) })
}

// claim claims a batch, failing the test on error.
func claim(t *testing.T, s *graph.Store, limit int, lease time.Duration, now time.Time) []graph.OutboxEntry {
	t.Helper()
	es, err := s.ClaimOutbox(t.Context(), graph.OutboxClaim{Limit: limit, Lease: lease, Now: now})
	if err != nil {
		t.Fatalf("claim outbox: %v", err)
	}
	return es
}

func ack(t *testing.T, s *graph.Store, es ...graph.OutboxEntry) {
	t.Helper()
	if err := s.AckOutbox(t.Context(), es); err != nil {
		t.Fatalf("ack outbox: %v", err)
	}
}

// outboxKeys is user/entity@seq of each entry, in order.
func outboxKeys(es []graph.OutboxEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = fmt.Sprintf("%s/%s@%d", e.UserID, e.EntityID, e.Seq)
	}
	return out
}

func testOutbox(t *testing.T, newStore Harness) {
	const lease = time.Minute
	t.Run("ClaimOldestFirstAndAck", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		enqueue(t, s, bob, at(epoch, 2), "bob_c")
		enqueue(t, s, alice, at(epoch, 1), "alice_b", "alice_a")
		now := at(epoch, 10)
		got := claim(t, s, 2, lease, now)
		diff(t, "first claim", []string{"alice/alice_a@1", "alice/alice_b@1"}, outboxKeys(got))
		if !got[0].EnqueuedAt.Equal(at(epoch, 1)) {
			t.Errorf("EnqueuedAt = %v, want %v", got[0].EnqueuedAt, at(epoch, 1))
		}
		rest := claim(t, s, 10, lease, now)
		diff(t, "second claim", []string{"bob/bob_c@1"}, outboxKeys(rest))
		diff(t, "claim while everything is leased", []string{}, outboxKeys(claim(t, s, 10, lease, now)))
		ack(t, s, append(got, rest...)...)
		diff(t, "claim after ack, lease over", []string{}, outboxKeys(claim(t, s, 10, lease, now.Add(2*lease))))
		// Acknowledging again, or an entry that never existed, is harmless.
		ack(t, s, append(got, graph.OutboxEntry{UserID: alice, EntityID: "alice_none", Seq: 1})...)
	})
	t.Run("RolledBackEnqueue", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		boom := errors.New("boom")
		err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error {
			if err := tx.PutEntity(ctx, newEntity(alice, "alice_a", "person", epoch)); err != nil {
				return err
			}
			if err := tx.EnqueueOutbox(ctx, alice, []string{"alice_a"}, epoch); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("update = %v, want boom", err)
		}
		diff(t, "claim after a rolled back enqueue", []string{}, outboxKeys(claim(t, s, 10, lease, at(epoch, 1))))
		// Committed with the graph write, the entry is there.
		update(t, s, func(ctx context.Context, tx *graph.Tx) error {
			if err := tx.PutEntity(ctx, newEntity(alice, "alice_a", "person", epoch)); err != nil {
				return err
			}
			return tx.EnqueueOutbox(ctx, alice, []string{"alice_a"}, epoch)
		})
		diff(t, "claim after a committed enqueue", []string{"alice/alice_a@1"}, outboxKeys(claim(t, s, 10, lease, at(epoch, 1))))
	})
	t.Run("EnqueuedAgainWhileClaimed", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		enqueue(t, s, alice, at(epoch, 1), "alice_a")
		now := at(epoch, 10)
		first := claim(t, s, 10, lease, now)
		diff(t, "first claim", []string{"alice/alice_a@1"}, outboxKeys(first))
		enqueue(t, s, alice, at(epoch, 11), "alice_a")
		diff(t, "claim while leased", []string{}, outboxKeys(claim(t, s, 10, lease, now)))
		// The stale acknowledgement keeps the entry and frees it at once.
		ack(t, s, first...)
		again := claim(t, s, 10, lease, now)
		diff(t, "claim after a stale ack", []string{"alice/alice_a@2"}, outboxKeys(again))
		if !again[0].EnqueuedAt.Equal(at(epoch, 1)) {
			t.Errorf("EnqueuedAt = %v, want the first enqueue's %v", again[0].EnqueuedAt, at(epoch, 1))
		}
		ack(t, s, again...)
		diff(t, "claim after the ack", []string{}, outboxKeys(claim(t, s, 10, lease, now.Add(2*lease))))
	})
	t.Run("LeaseExpires", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		enqueue(t, s, alice, epoch, "alice_a")
		now := at(epoch, 10)
		diff(t, "claim", []string{"alice/alice_a@1"}, outboxKeys(claim(t, s, 10, lease, now)))
		diff(t, "claim before the lease ends", []string{}, outboxKeys(claim(t, s, 10, lease, now.Add(lease-time.Second))))
		diff(t, "claim once the lease ended", []string{"alice/alice_a@1"}, outboxKeys(claim(t, s, 10, lease, now.Add(lease))))
	})
	t.Run("Release", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		enqueue(t, s, alice, epoch, "alice_a", "alice_b")
		now := at(epoch, 10)
		got := claim(t, s, 10, lease, now)
		if err := s.ReleaseOutbox(t.Context(), got[:1]); err != nil {
			t.Fatalf("release: %v", err)
		}
		diff(t, "claim after releasing one", []string{"alice/alice_a@1"}, outboxKeys(claim(t, s, 10, lease, now)))
	})
	t.Run("NotifiesAfterCommit", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		var calls atomic.Int32
		s.OnOutbox(func() { calls.Add(1) })
		enqueue(t, s, alice, epoch, "alice_a")
		_ = tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error {
			if err := tx.EnqueueOutbox(ctx, alice, []string{"alice_b"}, epoch); err != nil {
				return err
			}
			return errors.New("roll back")
		})
		putEntities(t, s, newEntity(alice, "alice_c", "person", epoch))
		if got := calls.Load(); got != 1 {
			t.Errorf("OnOutbox called %d times, want once (one committed enqueue)", got)
		}
	})
	t.Run("Validation", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		for _, c := range []graph.OutboxClaim{{Limit: 0, Lease: lease}, {Limit: 1, Lease: 0}} {
			if _, err := s.ClaimOutbox(t.Context(), c); err == nil {
				t.Errorf("ClaimOutbox(%+v) succeeded, want an error", c)
			}
		}
	})
	t.Run("AckRacesEnqueue", func(t *testing.T) {
		// A writer enqueues the same entities, in reverse order, while a
		// consumer claims and acknowledges them: the two lock the same rows
		// in different orders, which a driver must resolve (retrying a
		// deadlock) rather than fail. (That a stale acknowledgement keeps a
		// newer enqueue is EnqueuedAgainWhileClaimed's part.)
		t.Parallel()
		s := newStore(t)
		ids := []string{"alice_a", "alice_b", "alice_c", "alice_d", "alice_e", "alice_f"}
		reversed := slices.Clone(ids)
		slices.Reverse(reversed)
		const rounds = 15
		var wg sync.WaitGroup
		var writeErr, readErr error
		wg.Go(func() {
			for r := range rounds {
				if writeErr = tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error {
					return tx.EnqueueOutbox(ctx, alice, reversed, at(epoch, r))
				}); writeErr != nil {
					return
				}
			}
		})
		wg.Go(func() {
			for range rounds {
				es, err := s.ClaimOutbox(t.Context(), graph.OutboxClaim{Limit: 4, Lease: time.Hour, Now: epoch})
				if err == nil {
					err = s.AckOutbox(t.Context(), es)
				}
				if err != nil {
					readErr = err
					return
				}
			}
		})
		wg.Wait()
		if err := errors.Join(writeErr, readErr); err != nil {
			t.Fatalf("concurrent enqueue and ack: %v", err)
		}
		// Everything left can be claimed and settled.
		left := claim(t, s, 100, lease, epoch.Add(2*time.Hour))
		ack(t, s, left...)
		diff(t, "claim after settling everything", []string{}, outboxKeys(claim(t, s, 100, lease, epoch.Add(4*time.Hour))))
	})
	t.Run("ConcurrentClaims", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		const n, workers = 60, 4
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("alice_%03d", i)
		}
		enqueue(t, s, alice, epoch, ids...)
		var mu sync.Mutex
		seen := map[string]int{}
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for range workers {
			wg.Go(func() {
				for {
					es, err := s.ClaimOutbox(t.Context(), graph.OutboxClaim{Limit: 7, Lease: time.Hour, Now: at(epoch, 1)})
					if err != nil {
						errs <- err
						return
					}
					if len(es) == 0 {
						return
					}
					mu.Lock()
					for _, e := range es {
						seen[e.EntityID]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("claim: %v", err)
		}
		for _, id := range ids {
			if seen[id] != 1 {
				t.Errorf("%s claimed %d times, want once", id, seen[id])
			}
		}
	})
}
