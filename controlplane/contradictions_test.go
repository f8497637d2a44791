package controlplane_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/knowledge"
)

func TestContradictionStore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		ctx := t.Context()
		at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
		var cs []knowledge.Contradiction
		for i := range 4 {
			typ := "company"
			if i == 3 {
				typ = "task"
			}
			cs = append(cs, knowledge.Contradiction{
				ID: fmt.Sprintf("ctr_%d", i), UserID: "u1", EntityID: fmt.Sprintf("ent_%d", i), EntityType: typ, Field: "industry",
				CurrentValue: map[string]any{"v": json.Number("1.50")}, CurrentObservationID: "obs_old", CurrentSourceID: "src_old",
				NewValue: "rockets", NewObservationID: fmt.Sprintf("obs_new%d", i), NewSourceID: "src_new",
				DetectedAt: at.Add(time.Duration(i) * time.Second), Status: knowledge.ContradictionOpen,
			})
		}
		if err := s.AddContradictions(ctx, cs); err != nil {
			t.Fatal(err)
		}
		if err := s.AddContradictions(ctx, cs[:1]); err != nil {
			t.Fatalf("adding a recorded contradiction again: %v", err)
		}
		got, err := s.OpenContradictions(ctx, "u1", nil, 2)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(cs[:2], got); diff != "" {
			t.Errorf("oldest two open (-want +got):\n%s", diff)
		}
		if got, _ := s.OpenContradictions(ctx, "u1", []string{"task"}, 5); len(got) != 1 || got[0].ID != "ctr_3" {
			t.Errorf("tasks only: %+v", got)
		}
		if got, _ := s.OpenContradictions(ctx, "u1", []string{}, 5); len(got) != 0 {
			t.Errorf("no readable types: %+v", got)
		}
		if got, _ := s.OpenContradictions(ctx, "u2", nil, 5); len(got) != 0 {
			t.Errorf("another user: %+v", got)
		}

		r := cs[1]
		r.Status, r.Resolution, r.ResolvedAt, r.ResolvedBy = knowledge.ContradictionResolved, knowledge.Reject, at.Add(time.Hour), "claude"
		if err := s.ResolveContradiction(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := s.ResolveContradiction(ctx, r); !errors.Is(err, knowledge.ErrContradictionResolved) {
			t.Errorf("resolving twice: err = %v, want ErrContradictionResolved", err)
		}
		other := r
		other.ID = "ctr_missing"
		if err := s.ResolveContradiction(ctx, other); !errors.Is(err, knowledge.ErrContradictionNotFound) {
			t.Errorf("resolving a missing one: err = %v, want ErrContradictionNotFound", err)
		}
		back, err := s.Contradiction(ctx, "u1", r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(r, back); diff != "" {
			t.Errorf("resolved contradiction (-want +got):\n%s", diff)
		}
		if _, err := s.Contradiction(ctx, "u2", r.ID); !errors.Is(err, knowledge.ErrContradictionNotFound) {
			t.Errorf("another user's contradiction: err = %v", err)
		}
		ids := []string{"obs_new0", "obs_new1", "obs_old"}
		for i := range 600 { // more than one query's worth of ids
			ids = append(ids, fmt.Sprintf("obs_x%d", i))
		}
		rej, err := s.RejectedObservations(ctx, "u1", ids)
		if err != nil || len(rej) != 1 || !rej["obs_new1"] {
			t.Errorf("rejected = %v, %v; want only obs_new1", rej, err)
		}
		if rej, err := s.WithReader(s.DB()).RejectedObservations(ctx, "u1", ids); err != nil || len(rej) != 1 || !rej["obs_new1"] {
			t.Errorf("rejected through a reader = %v, %v; want only obs_new1", rej, err)
		}
		if rej, _ := s.RejectedObservations(ctx, "u2", ids); len(rej) != 0 {
			t.Errorf("another user's rejections: %v", rej)
		}
		if got, _ := s.OpenContradictions(ctx, "u1", nil, 5); len(got) != 3 {
			t.Errorf("open after one resolution: %d, want 3", len(got))
		}
	})
}
