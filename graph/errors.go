package graph

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Drivers return (wrapped) ErrNotFound and ErrConflict;
// callers test with errors.Is and errors.As only.
var (
	// ErrNotFound means the row does not exist for this user. A row of
	// another user is reported the same way.
	ErrNotFound = errors.New("graph: not found")
	// ErrConflict means an insert collided with an existing id.
	ErrConflict = errors.New("graph: already exists")
	// ErrInvalidRelationshipType means the type is neither built in nor
	// registered by a schema, or is not a well-formed type name.
	ErrInvalidRelationshipType = errors.New("graph: invalid relationship type")
	// ErrCycle means an edge of an acyclic type would close a cycle; the
	// error is a *CycleError that carries the path.
	ErrCycle = errors.New("graph: cycle detected")
)

// CycleError reports the cycle that a refused edge would have closed. Path
// starts at the new edge's target and ends at its source, so that with the
// new edge it forms the cycle source → target → … → source.
type CycleError struct {
	RelationshipType string
	Path             []string
}

func (e *CycleError) Error() string {
	return fmt.Sprintf("graph: %s edge would close the cycle %s", e.RelationshipType, strings.Join(e.Cycle(), " → "))
}

// Cycle returns the full cycle, source first and last.
func (e *CycleError) Cycle() []string {
	if len(e.Path) == 0 {
		return nil
	}
	out := append([]string{e.Path[len(e.Path)-1]}, e.Path...)
	return out
}

// Unwrap makes errors.Is(err, ErrCycle) true.
func (e *CycleError) Unwrap() error { return ErrCycle }

// NotFoundError says which kind of row was missing. It unwraps to
// ErrNotFound, so callers that only care about absence use errors.Is.
type NotFoundError struct {
	What string // "entity", "source", "relationship", "observation", …
	ID   string
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("graph: %s %s not found", e.What, e.ID) }

// Unwrap makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Unwrap() error { return ErrNotFound }
