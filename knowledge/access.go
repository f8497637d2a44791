package knowledge

import (
	"errors"
	"fmt"
)

// ErrUnavailable means a part of the service that the call needs was not
// configured (for example no profile store); the error says which.
var ErrUnavailable = errors.New("not available")

// AccessError says that the caller may not act on a resource that is not an
// entity type (the profile, a memory collection). It wraps ErrForbidden.
type AccessError struct {
	Resource string // as consent names it: "profile", "memories/notes", …
	Action   Action
}

func (e *AccessError) Error() string {
	return fmt.Sprintf("no %s access to %s", e.Action, e.Resource)
}

// Unwrap makes errors.Is(err, ErrForbidden) true.
func (e *AccessError) Unwrap() error { return ErrForbidden }

// need returns an *AccessError unless the caller may act on resource.
func (c Caller) need(action Action, resource string) error {
	if !c.May(action, resource) {
		return &AccessError{Resource: resource, Action: action}
	}
	return nil
}

// unavailable reports that a part of the service is not configured.
func unavailable(what string) error { return fmt.Errorf("knowledge: %s: %w", what, ErrUnavailable) }
