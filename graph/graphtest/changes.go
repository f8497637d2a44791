package graphtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
)

// testChanges checks that a transaction's changes are told in-process
// after it commits, and, on a driver with a change log, logged in commit
// order for other processes.
func testChanges(t *testing.T, newStore Harness) {
	s := newStore(t)
	ctx := t.Context()
	var mu sync.Mutex
	var told []graph.Change
	s.OnChange(func(cs []graph.Change) {
		mu.Lock()
		told = append(told, cs...)
		mu.Unlock()
	})
	before, err := s.LastChange(ctx)
	if err != nil {
		t.Fatal(err)
	}
	putEntities(t, s, newEntity(alice, "alice_chg_a", "person", epoch), newEntity(alice, "alice_chg_b", "person", epoch))
	createLink(t, s, alice, link{"REFERS_TO", "alice_chg_a", "alice_chg_b", epoch})
	update(t, s, func(ctx context.Context, tx *graph.Tx) error {
		return tx.ReplaceTimelineEvents(ctx, alice, "alice_chg_a", []graph.TimelineEvent{{
			ID: "alice_chg_ev", UserID: alice, EntityID: "alice_chg_a", EventType: "born", Timestamp: "2024-03-05", Time: epoch,
		}})
	})
	// A failed transaction changes nothing.
	_ = tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error {
		if err := tx.PutEntity(ctx, newEntity(alice, "alice_chg_c", "person", epoch)); err != nil {
			return err
		}
		return context.Canceled
	})
	period := epoch.UTC().Format("2006-01")
	want := []graph.Change{
		{UserID: alice, EntityID: "alice_chg_a", EntityType: "person", Kind: graph.ChangeEntity},
		{UserID: alice, EntityID: "alice_chg_b", EntityType: "person", Kind: graph.ChangeEntity},
		{UserID: alice, EntityID: "alice_chg_a", RelatedID: "alice_chg_b", Kind: graph.ChangeRelationships},
		{UserID: alice, EntityID: "alice_chg_b", RelatedID: "alice_chg_a", Kind: graph.ChangeRelationships},
		{UserID: alice, EntityID: "alice_chg_a", Kind: graph.ChangeTimeline, Period: period},
	}
	mu.Lock()
	diff(t, "told in-process", want, told)
	mu.Unlock()
	if !s.HasChangeLog() {
		return
	}
	logged, err := s.Changes(ctx, before, 100)
	if err != nil {
		t.Fatal(err)
	}
	var mine []graph.Change
	last := before
	for _, c := range logged {
		if c.Seq <= last || c.At.IsZero() {
			t.Errorf("change %+v: seq not after %d, or no time", c, last)
		}
		last = c.Seq
		if c.UserID == alice && len(c.EntityID) > 10 && c.EntityID[:10] == "alice_chg_" {
			c.Seq, c.At = 0, time.Time{}
			mine = append(mine, c)
		}
	}
	diff(t, "logged", want, mine)
	if err := s.PruneChanges(ctx, graph.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if rest, err := s.Changes(ctx, before, 100); err != nil || len(rest) != 0 {
		t.Errorf("after pruning everything: %d changes, err %v", len(rest), err)
	}
}
