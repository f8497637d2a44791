package schema

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid means a definition, a field value or a filter breaks a schema
// rule; the error is an *InvalidError naming the part. It is the same
// sentinel as knowledge.ErrValidation, so a rule's error is a validation
// error wherever it surfaces.
var ErrInvalid = errors.New("validation error")

// InvalidError names the part that breaks a schema rule and what was
// expected. The knowledge service reports it as a *knowledge.ValidationError
// with the same fields.
type InvalidError struct {
	Field    string // a path such as "schema_definition.fields.amount"
	Expected string // e.g. "number", "one of: a, b"
	Got      string // the JSON type or a short description of what was given
	Message  string
}

func (e *InvalidError) Error() string {
	var b strings.Builder
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *InvalidError) Unwrap() error { return ErrInvalid }

func invalid(field, expected, got, format string, args ...any) *InvalidError {
	return &InvalidError{Field: field, Expected: expected, Got: got, Message: fmt.Sprintf(format, args...)}
}
