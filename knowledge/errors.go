package knowledge

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cairnkg/cairn/knowledge/schema"
)

// Sentinel errors of the knowledge domain. The MCP layer maps each to the
// specification's error code; tests and callers use errors.Is / errors.As.
var (
	// ErrValidation means the request is malformed; the error is a
	// *ValidationError naming the field. It is schema.ErrInvalid, so that
	// a schema rule's *schema.InvalidError (from a schema.Registry used
	// directly) is a validation error too.
	ErrValidation = schema.ErrInvalid
	// ErrEntityNotFound means the entity does not exist for this user (or
	// the caller may not read it: the two are indistinguishable on purpose).
	ErrEntityNotFound = errors.New("entity not found")
	// ErrSourceNotFound means the source does not exist for this user.
	ErrSourceNotFound = errors.New("source not found")
	// ErrFieldNotFound means the entity's snapshot has no such field.
	ErrFieldNotFound = errors.New("field not found")
	// ErrObservationNotFound means the observation does not exist for this
	// user (or is about an entity the caller may not read).
	ErrObservationNotFound = errors.New("observation not found")
	// ErrRelationshipNotFound means the relationship does not exist.
	ErrRelationshipNotFound = errors.New("relationship not found")
	// ErrMemoryNotFound means the memory does not exist for this user, no
	// longer counts (retracted, erased), or the caller may not read it:
	// the three are indistinguishable on purpose.
	ErrMemoryNotFound = errors.New("memory not found")
	// ErrEntityMerged means the entity was merged into another; the error
	// is a *MergedError that says which.
	ErrEntityMerged = errors.New("entity already merged")
	// ErrInvalidRelationshipType means the type is neither built in nor
	// registered by a schema.
	ErrInvalidRelationshipType = errors.New("invalid relationship type")
	// ErrForbidden means the caller may read the entity but not change it;
	// the error is a *ForbiddenError naming the resource.
	ErrForbidden = errors.New("forbidden")
)

// ForbiddenError names what the caller may not do.
type ForbiddenError struct {
	EntityType string
	Action     string // "write"
}

func (e *ForbiddenError) Error() string {
	return fmt.Sprintf("no %s access to entities of type %s", e.Action, e.EntityType)
}

// Unwrap makes errors.Is(err, ErrForbidden) true.
func (e *ForbiddenError) Unwrap() error { return ErrForbidden }

// ValidationError names the field that is wrong and what was expected.
type ValidationError struct {
	Field    string // a path such as "entities[0].amount"; empty for the request as a whole
	Expected string // e.g. "number", "date (ISO 8601)", "one of: a, b"
	Got      string // the JSON type or a short description of what was given
	Message  string
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Unwrap makes errors.Is(err, ErrValidation) true.
func (e *ValidationError) Unwrap() error { return ErrValidation }

func invalid(field, expected, got, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Expected: expected, Got: got, Message: fmt.Sprintf(format, args...)}
}

// validationError turns a schema rule's *schema.InvalidError into the
// domain's *ValidationError with the same fields; nil and every other
// error pass through.
func validationError(err error) error {
	var inv *schema.InvalidError
	if errors.As(err, &inv) {
		return &ValidationError{Field: inv.Field, Expected: inv.Expected, Got: inv.Got, Message: inv.Message}
	}
	return err
}

// NotFoundError names the missing thing.
type NotFoundError struct {
	Kind error // ErrEntityNotFound, ErrSourceNotFound, ErrFieldNotFound, ErrRelationshipNotFound, ErrMemoryNotFound
	ID   string
	// Field is set for ErrFieldNotFound.
	Field string
}

func (e *NotFoundError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s has no field %q", e.Kind, e.ID, e.Field)
	}
	return fmt.Sprintf("%s: %s", e.Kind, e.ID)
}

// Unwrap makes errors.Is(err, e.Kind) true.
func (e *NotFoundError) Unwrap() error { return e.Kind }

// MergedError says where a merged entity went.
type MergedError struct {
	EntityID   string
	MergedInto string
}

func (e *MergedError) Error() string {
	return fmt.Sprintf("entity %s was merged into %s", e.EntityID, e.MergedInto)
}

// Unwrap makes errors.Is(err, ErrEntityMerged) true.
func (e *MergedError) Unwrap() error { return ErrEntityMerged }
