package vector

import (
	"errors"
	"fmt"
)

// Sentinel errors. Drivers return (wrapped) ErrConflict; the Store returns
// the others. Callers test with errors.Is and errors.As only.
var (
	// ErrInvalid means the request is malformed; the error is an
	// *InvalidError naming the field.
	ErrInvalid = errors.New("vector: invalid request")
	// ErrConflict means a memory with the same id exists already.
	ErrConflict = errors.New("vector: already exists")
	// ErrNotFound means the memory is not live for the user (it never
	// was, or it was retracted or erased); the error is a *NotFoundError.
	ErrNotFound = errors.New("vector: memory not found")
	// ErrDimensionMismatch means a vector's length differs from the
	// dimension recorded for its collection; the error is a *SpaceError.
	ErrDimensionMismatch = errors.New("vector: dimension mismatch")
	// ErrEmbedderMismatch means a vector comes from another embedder than
	// the one recorded for its collection; the error is a *SpaceError.
	ErrEmbedderMismatch = errors.New("vector: embedder mismatch")
)

// InvalidError names the field that is wrong.
type InvalidError struct {
	Field   string
	Message string
}

func (e *InvalidError) Error() string { return "vector: " + e.Field + ": " + e.Message }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *InvalidError) Unwrap() error { return ErrInvalid }

// NotFoundError names the memory that is not live.
type NotFoundError struct{ ID string }

func (e *NotFoundError) Error() string { return "vector: memory " + e.ID + " not found" }

// Unwrap makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

func notFound(id string) error { return &NotFoundError{ID: id} }

func invalid(field, format string, args ...any) error {
	return &InvalidError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// SpaceError reports a vector that does not belong to its collection's
// embedding space: another dimension, or another embedder of the same
// dimension. It says what the collection has and what was given, so that
// the fix (configure the recorded embedder, or `cairn reembed`) is clear.
type SpaceError struct {
	Collection string
	Recorded   Space
	Given      Space
}

func (e *SpaceError) Error() string {
	if e.Recorded.Dimension != e.Given.Dimension {
		return fmt.Sprintf("vector: collection %q holds %d-dimensional vectors of %s, but got %d dimensions from %s; "+
			"configure the same embedder or rebuild the collection with `cairn reembed`",
			e.Collection, e.Recorded.Dimension, e.Recorded.Embedder, e.Given.Dimension, e.Given.Embedder)
	}
	return fmt.Sprintf("vector: collection %q was embedded with %s, but the vectors come from %s; "+
		"configure the same embedder or rebuild the collection with `cairn reembed`",
		e.Collection, e.Recorded.Embedder, e.Given.Embedder)
}

// Unwrap makes errors.Is true for ErrDimensionMismatch or
// ErrEmbedderMismatch, whichever applies.
func (e *SpaceError) Unwrap() error {
	if e.Recorded.Dimension != e.Given.Dimension {
		return ErrDimensionMismatch
	}
	return ErrEmbedderMismatch
}
