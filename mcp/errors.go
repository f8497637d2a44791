package mcp

import (
	"context"
	"errors"
	"net/http"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/vector"
)

// Canonical error codes of the specifications.
const (
	CodeValidation         = "VALIDATION_ERROR"
	CodeEntityNotFound     = "ENTITY_NOT_FOUND"
	CodeSourceNotFound     = "SOURCE_NOT_FOUND"
	CodeFieldNotFound      = "FIELD_NOT_FOUND"
	CodeNotFound           = "NOT_FOUND"
	CodeEntityMerged       = "ENTITY_ALREADY_MERGED"
	CodeInvalidRelType     = "INVALID_RELATIONSHIP_TYPE"
	CodeCycle              = "CYCLE_DETECTED"
	CodeConsentDenied      = "CONSENT_DENIED"
	CodeUnauthorized       = "UNAUTHORIZED"
	CodeForbidden          = "FORBIDDEN"
	CodeRateLimited        = "RATE_LIMIT_EXCEEDED"
	CodeUnknownTool        = "TOOL_NOT_FOUND"
	CodeRequestTooLarge    = "REQUEST_TOO_LARGE"
	CodeDBQueryFailed      = "DB_QUERY_FAILED"
	CodeServiceUnavailable = "SERVICE_UNAVAILABLE"
	CodeInternal           = "INTERNAL_ERROR"
	// CodeTimeout: the call ran past its deadline (--call-timeout) and
	// was cancelled.
	CodeTimeout = "TIMEOUT"
	// A vector does not fit its collection's recorded embedding space.
	CodeDimensionMismatch = "DIMENSION_MISMATCH"
	CodeEmbedderMismatch  = "EMBEDDER_MISMATCH"
)

// ErrorBody is the error of the envelope {error: {code, message, details,
// trace_id}}. Details never hold stored values (no PII), only what names
// the problem: the field, the expected type, the id that was not found.
type ErrorBody struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
	TraceID string         `json:"trace_id,omitempty"`
}

// Envelope is what every failure returns.
type Envelope struct {
	Error ErrorBody `json:"error"`
}

// Error is a failure with its code and HTTP status, ready to be sent.
type Error struct {
	Status int
	Body   ErrorBody
}

func (e *Error) Error() string { return e.Body.Code + ": " + e.Body.Message }

// Envelope returns the wire form of the error.
func (e *Error) Envelope() Envelope { return Envelope{Error: e.Body} }

func newError(status int, code, message string, details map[string]any) *Error {
	return &Error{Status: status, Body: ErrorBody{Code: code, Message: message, Details: details}}
}

// toError maps any error a tool returned onto the envelope. Domain errors
// keep their own message; anything unexpected becomes an internal error whose
// message says nothing of the internals (the cause is logged with the trace
// id instead).
func toError(err error) *Error {
	var (
		e         *Error
		verr      *knowledge.ValidationError
		nf        *knowledge.NotFoundError
		merged    *knowledge.MergedError
		cycle     *graph.CycleError
		relType   *knowledge.RelationshipTypeError
		forbidden *knowledge.ForbiddenError
		resource  *knowledge.AccessError
		space     *vector.SpaceError
		embedder  *knowledge.EmbedderError
	)
	if fe := filesError(err); fe != nil && !errors.As(err, &e) {
		return fe
	}
	if se, ok := schemaError(err); ok {
		return se
	}
	var inv *schema.InvalidError
	if errors.As(err, &inv) { // a schema rule's error that the service did not restate
		err = &knowledge.ValidationError{Field: inv.Field, Expected: inv.Expected, Got: inv.Got, Message: inv.Message}
	}
	switch {
	case errors.As(err, &e):
		return e
	case errors.As(err, &verr):
		d := map[string]any{}
		if verr.Field != "" {
			d["field"] = verr.Field
		}
		if verr.Expected != "" {
			d["expected"] = verr.Expected
		}
		if verr.Got != "" {
			d["got"] = verr.Got
		}
		return newError(http.StatusBadRequest, CodeValidation, verr.Error(), d)
	case errors.As(err, &nf):
		code := map[error]string{
			knowledge.ErrEntityNotFound:       CodeEntityNotFound,
			knowledge.ErrSourceNotFound:       CodeSourceNotFound,
			knowledge.ErrFieldNotFound:        CodeFieldNotFound,
			knowledge.ErrRelationshipNotFound: CodeNotFound,
			knowledge.ErrMemoryNotFound:       CodeNotFound,
			knowledge.ErrObservationNotFound:  CodeNotFound,
		}[nf.Kind]
		d := map[string]any{"id": nf.ID}
		if nf.Field != "" {
			d["field"] = nf.Field
		}
		return newError(http.StatusNotFound, code, nf.Error(), d)
	case errors.As(err, &merged):
		return newError(http.StatusBadRequest, CodeEntityMerged, merged.Error(),
			map[string]any{"entity_id": merged.EntityID, "merged_into": merged.MergedInto})
	case errors.As(err, &cycle):
		d := map[string]any{"relationship_type": cycle.RelationshipType}
		if path := cycle.Cycle(); path != nil { // nil when the caller may not read it
			d["path"] = path
		}
		return newError(http.StatusBadRequest, CodeCycle,
			"a "+cycle.RelationshipType+" relationship must not form a cycle, and this one would close one", d)
	case errors.As(err, &relType):
		return newError(http.StatusBadRequest, CodeInvalidRelType, relType.Error(),
			map[string]any{"relationship_type": relType.Type, "expected": relType.Known})
	case errors.As(err, &forbidden):
		return newError(http.StatusForbidden, CodeConsentDenied, forbidden.Error(),
			map[string]any{"resource": "entities/" + forbidden.EntityType, "action": forbidden.Action})
	case errors.Is(err, consent.ErrInvalidRule):
		return newError(http.StatusBadRequest, CodeValidation, err.Error(), map[string]any{"field": "resource"})
	case errors.Is(err, controlplane.ErrNotFound):
		return newError(http.StatusNotFound, CodeNotFound, err.Error(), nil)
	case errors.As(err, &resource):
		return newError(http.StatusForbidden, CodeConsentDenied, resource.Error(),
			map[string]any{"resource": resource.Resource, "action": string(resource.Action)})
	case errors.As(err, &space):
		code := CodeEmbedderMismatch
		if errors.Is(err, vector.ErrDimensionMismatch) {
			code = CodeDimensionMismatch
		}
		return newError(http.StatusConflict, code, space.Error(), map[string]any{
			"collection":         space.Collection,
			"recorded_embedder":  space.Recorded.Embedder,
			"recorded_dimension": space.Recorded.Dimension,
			"given_embedder":     space.Given.Embedder,
			"given_dimension":    space.Given.Dimension,
		})
	case errors.As(err, &embedder):
		return newError(http.StatusServiceUnavailable, CodeServiceUnavailable,
			"the embedding provider "+embedder.Embedder+" failed; retry later", map[string]any{"embedder": embedder.Embedder})
	case errors.Is(err, knowledge.ErrUnavailable):
		return newError(http.StatusServiceUnavailable, CodeServiceUnavailable, err.Error(), nil)
	case errors.Is(err, context.DeadlineExceeded):
		return newError(http.StatusServiceUnavailable, CodeServiceUnavailable, "the call took too long and was stopped", nil)
	case errors.Is(err, context.Canceled):
		return newError(499, CodeServiceUnavailable, "the call was cancelled", nil)
	case errors.Is(err, consent.ErrMissingKey), errors.Is(err, consent.ErrMalformedKey), errors.Is(err, consent.ErrUnknownKey),
		errors.Is(err, consent.ErrRevokedKey), errors.Is(err, consent.ErrExpiredKey):
		return newError(http.StatusUnauthorized, CodeUnauthorized, err.Error(), nil)
	default:
		return newError(http.StatusInternalServerError, CodeInternal, "internal error; the server log has the cause under this trace id", nil)
	}
}
