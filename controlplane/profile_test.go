package controlplane_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/knowledge"
)

// setKeys is an apply function that merges m into the profile.
func setKeys(m map[string]any) func(map[string]any) (map[string]any, error) {
	return func(cur map[string]any) (map[string]any, error) {
		out, _ := knowledge.MergePatch(cur, m).(map[string]any)
		return out, nil
	}
}

func TestProfileUpdateAndHistory(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		ctx := t.Context()
		p, err := s.Profile(ctx, "u1")
		if err != nil || p.Version != 0 || len(p.Data) != 0 {
			t.Fatalf("empty profile = %+v, %v; want version 0, no data", p, err)
		}
		at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
		first := map[string]any{"name": "Ada", "preferences": map[string]any{"dietary": []any{"vegetarian"}}}
		p, ch, err := s.UpdateProfile(ctx, "u1", knowledge.ProfileChange{Patch: first, Reason: "introduced herself", AgentID: "claude", ChangedAt: at}, setKeys(first))
		if err != nil {
			t.Fatal(err)
		}
		if p.Version != 1 || ch.Version != 1 || !p.UpdatedAt.Equal(at) {
			t.Errorf("after one change: version %d/%d at %v, want 1 at %v", p.Version, ch.Version, p.UpdatedAt, at)
		}
		second := map[string]any{"name": nil, "preferences": map[string]any{"coffee": "black"}}
		if _, _, err := s.UpdateProfile(ctx, "u1", knowledge.ProfileChange{Patch: second, Reason: "forget the name", AgentID: "cursor", ChangedAt: at.Add(time.Hour)}, setKeys(second)); err != nil {
			t.Fatal(err)
		}
		p, err = s.Profile(ctx, "u1")
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"preferences": map[string]any{"dietary": []any{"vegetarian"}, "coffee": "black"}}
		if diff := cmp.Diff(want, p.Data); diff != "" || p.Version != 2 {
			t.Errorf("profile version %d (-want +got):\n%s", p.Version, diff)
		}
		h, err := s.ProfileHistory(ctx, "u1", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != 2 || h[0].Version != 2 || h[0].Reason != "forget the name" || h[0].AgentID != "cursor" ||
			!h[0].ChangedAt.Equal(at.Add(time.Hour)) || h[1].Reason != "introduced herself" {
			t.Errorf("history = %+v", h)
		}
		if diff := cmp.Diff(second, h[0].Patch); diff != "" {
			t.Errorf("recorded patch (-want +got):\n%s", diff)
		}
		// Users are isolated.
		if other, err := s.Profile(ctx, "u2"); err != nil || other.Version != 0 {
			t.Errorf("another user's profile = %+v, %v", other, err)
		}
	})
}

func TestProfileApplyErrorChangesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		boom := errors.New("too big")
		_, _, err := s.UpdateProfile(t.Context(), "u1", knowledge.ProfileChange{ChangedAt: time.Now()},
			func(map[string]any) (map[string]any, error) { return nil, boom })
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v, want the apply error", err)
		}
		p, err := s.Profile(t.Context(), "u1")
		if err != nil || p.Version != 0 {
			t.Errorf("profile after a failed update = %+v, %v; want none", p, err)
		}
		if h, _ := s.ProfileHistory(t.Context(), "u1", 0); len(h) != 0 {
			t.Errorf("history after a failed update = %+v", h)
		}
	})
}

func TestProfileConcurrentUpdatesAllLand(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		const n = 8
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				m := map[string]any{fmt.Sprintf("k%d", i): i}
				_, _, err := s.UpdateProfile(context.WithoutCancel(t.Context()), "u1",
					knowledge.ProfileChange{Patch: m, ChangedAt: time.Now()}, setKeys(m))
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		p, err := s.Profile(t.Context(), "u1")
		if err != nil || p.Version != n || len(p.Data) != n {
			t.Errorf("after %d concurrent updates: version %d, %d keys, %v", n, p.Version, len(p.Data), err)
		}
	})
}
