package knowledge_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/migrations"
)

// newFullService returns a service on a fresh embedded store with the
// control plane of the same file as its profile and contradiction store,
// as cmd/cairn wires it, and its clock.
func newFullService(t *testing.T, opts knowledge.Options) (*knowledge.Service, *clock) {
	t.Helper()
	db, g := openEmbedded(t)
	c := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	control := controlplane.New(db.Write, migrations.SQLite)
	opts.Now = c.Now
	opts.Profiles, opts.Contradictions = control, control.WithReader(db.Read)
	return knowledge.NewService(g, schema.NewRegistry(), opts), c
}

// only returns alice allowed exactly the given (action, resource) pairs,
// written "read:profile".
func only(grants ...string) knowledge.Caller {
	c := alice
	c.Allowed = func(a knowledge.Action, r string) bool {
		for _, g := range grants {
			if g == string(a)+":"+r {
				return true
			}
		}
		return false
	}
	return c
}

func TestUpdateProfileMergesAndRecords(t *testing.T) {
	s, clk := newFullService(t, knowledge.Options{})
	ctx := t.Context()
	if _, _, err := s.UpdateProfile(ctx, alice, map[string]any{"name": "Alice", "preferences": map[string]any{"dietary": []any{"vegan"}, "coffee": "black"}}, "first chat"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	p, ch, err := s.UpdateProfile(ctx, alice, map[string]any{"preferences": map[string]any{"coffee": nil, "tea": "green"}}, "switched to tea")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "Alice", "preferences": map[string]any{"dietary": []any{"vegan"}, "tea": "green"}}
	if diff := cmp.Diff(want, p.Data); diff != "" {
		t.Errorf("profile (-want +got):\n%s", diff)
	}
	if p.Version != 2 || ch.Reason != "switched to tea" || ch.AgentID != "claude" || !ch.ChangedAt.Equal(clk.Now()) {
		t.Errorf("change = %+v (profile version %d)", ch, p.Version)
	}
	h, err := s.ProfileHistory(ctx, alice, 10)
	if err != nil || len(h) != 2 || h[1].Reason != "first chat" {
		t.Errorf("history = %+v, %v", h, err)
	}
	if got, err := s.Profile(ctx, bob); err != nil || len(got.Data) != 0 {
		t.Errorf("bob sees %+v, %v; want an empty profile", got, err)
	}
}

func TestProfileConsent(t *testing.T) {
	s, _ := newFullService(t, knowledge.Options{})
	ctx := t.Context()
	var access *knowledge.AccessError
	if _, _, err := s.UpdateProfile(ctx, only("read:profile"), map[string]any{"a": 1}, ""); !errors.As(err, &access) ||
		access.Resource != knowledge.ResourceProfile || access.Action != knowledge.Write || !errors.Is(err, knowledge.ErrForbidden) {
		t.Errorf("update without write: err = %v, want an AccessError on profile/write", err)
	}
	if _, err := s.Profile(ctx, only("write:profile")); !errors.As(err, &access) || access.Action != knowledge.Read {
		t.Errorf("read without read: err = %v, want an AccessError on profile/read", err)
	}
	if _, _, err := s.UpdateProfile(ctx, only("write:profile"), map[string]any{"a": 1}, "ok"); err != nil {
		t.Errorf("update with write: %v", err)
	}
}

func TestUpdateProfileValidation(t *testing.T) {
	s, _ := newFullService(t, knowledge.Options{})
	ctx := t.Context()
	tests := []struct {
		name   string
		patch  map[string]any
		reason string
		field  string
	}{
		{"no data", nil, "", "data"},
		{"reason too long", map[string]any{"a": 1}, strings.Repeat("x", knowledge.MaxProfileReasonLen+1), "reason"},
		{"profile too big", map[string]any{"blob": strings.Repeat("x", knowledge.MaxProfileBytes)}, "", "data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := s.UpdateProfile(ctx, alice, tt.patch, tt.reason)
			var verr *knowledge.ValidationError
			if !errors.As(err, &verr) || verr.Field != tt.field {
				t.Errorf("err = %v, want a validation error on %s", err, tt.field)
			}
		})
	}
	if p, err := s.Profile(ctx, alice); err != nil || p.Version != 0 {
		t.Errorf("rejected updates changed the profile: %+v, %v", p, err)
	}
	if _, err := knowledge.NewService(nil, schema.NewRegistry(), knowledge.Options{}).Profile(ctx, alice); !errors.Is(err, knowledge.ErrUnavailable) {
		t.Errorf("no profile store: err = %v, want ErrUnavailable", err)
	}
}
