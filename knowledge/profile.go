package knowledge

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"
)

// Limits of update_profile.
const (
	// MaxProfileBytes bounds the canonical JSON of a profile after a
	// change, so that a profile always fits in a context load.
	MaxProfileBytes = 64 << 10
	// MaxProfileReasonLen bounds the reason of a change, in characters.
	MaxProfileReasonLen = 1000
)

// Profile is a user's profile document: a JSON object that agents keep up
// to date with update_profile (preferences, facts about the user).
type Profile struct {
	Data map[string]any
	// Version counts the changes; 0 means the profile was never written.
	Version   int64
	UpdatedAt time.Time
}

// ProfileChange is one recorded change to a profile.
type ProfileChange struct {
	Version   int64
	Patch     map[string]any // the RFC 7396 merge patch that was applied
	Reason    string
	AgentID   string
	ChangedAt time.Time
}

// ProfileStore keeps profiles and their history. controlplane.Store
// implements it on SQLite and PostgreSQL.
type ProfileStore interface {
	// Profile returns the user's profile; a user without one has an empty
	// Data object and Version 0.
	Profile(ctx context.Context, userID string) (Profile, error)
	// UpdateProfile replaces the user's profile data with apply(current)
	// and records change (whose Version and ChangedAt it fills), atomically
	// with respect to other updates of the same profile. An error from
	// apply aborts the update and is returned as is.
	UpdateProfile(ctx context.Context, userID string, change ProfileChange,
		apply func(current map[string]any) (map[string]any, error)) (Profile, ProfileChange, error)
	// ProfileHistory returns up to limit changes, newest first.
	ProfileHistory(ctx context.Context, userID string, limit int) ([]ProfileChange, error)
}

// Profile returns the caller's profile. It needs read access to the
// profile resource.
func (s *Service) Profile(ctx context.Context, c Caller) (Profile, error) {
	if err := c.need(Read, ResourceProfile); err != nil {
		return Profile{}, err
	}
	if s.profiles == nil {
		return Profile{}, unavailable("profile store")
	}
	p, err := s.profiles.Profile(ctx, c.UserID)
	if err != nil {
		return Profile{}, fmt.Errorf("knowledge: profile: %w", err)
	}
	return p, nil
}

// UpdateProfile deep-merges patch into the caller's profile as RFC 7396
// says (null deletes a member, objects merge recursively, anything else
// replaces) and records the change with its reason, the caller's agent and
// the time. It needs write access to the profile resource.
func (s *Service) UpdateProfile(ctx context.Context, c Caller, patch map[string]any, reason string) (Profile, ProfileChange, error) {
	if err := c.need(Write, ResourceProfile); err != nil {
		return Profile{}, ProfileChange{}, err
	}
	if s.profiles == nil {
		return Profile{}, ProfileChange{}, unavailable("profile store")
	}
	if patch == nil {
		return Profile{}, ProfileChange{}, invalid("data", "object", "null", "is required: the members to merge into the profile")
	}
	if n := utf8.RuneCountInString(reason); n > MaxProfileReasonLen {
		return Profile{}, ProfileChange{}, invalid("reason", fmt.Sprintf("at most %d characters", MaxProfileReasonLen), "string",
			"is %d characters long", n)
	}
	change := ProfileChange{Patch: patch, Reason: reason, AgentID: c.AgentID, ChangedAt: s.clock()}
	p, rec, err := s.profiles.UpdateProfile(ctx, c.UserID, change, func(current map[string]any) (map[string]any, error) {
		merged, _ := MergePatch(current, patch).(map[string]any)
		b, err := canonicalJSON(merged)
		if err != nil {
			return nil, invalid("data", "JSON values", "object", "cannot be encoded: %v", err)
		}
		if len(b) > MaxProfileBytes {
			return nil, invalid("data", fmt.Sprintf("a profile of at most %d bytes of JSON", MaxProfileBytes), "object",
				"the merged profile would be %d bytes; remove members with null to make room", len(b))
		}
		return merged, nil
	})
	if err != nil {
		return Profile{}, ProfileChange{}, fmt.Errorf("knowledge: update profile: %w", err)
	}
	return p, rec, nil
}

// ProfileHistory returns the latest changes to the caller's profile, newest
// first. It needs read access to the profile resource.
func (s *Service) ProfileHistory(ctx context.Context, c Caller, limit int) ([]ProfileChange, error) {
	if err := c.need(Read, ResourceProfile); err != nil {
		return nil, err
	}
	if s.profiles == nil {
		return nil, unavailable("profile store")
	}
	h, err := s.profiles.ProfileHistory(ctx, c.UserID, limit)
	if err != nil {
		return nil, fmt.Errorf("knowledge: profile history: %w", err)
	}
	return h, nil
}
