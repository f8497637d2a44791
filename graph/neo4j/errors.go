package neo4j

import (
	"errors"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/cairnkg/cairn/graph"
)

// Neo4j status codes the driver maps onto the graph package's sentinels.
const (
	// codeConstraintFailed: a write broke a uniqueness constraint, which
	// is how a concurrent insert of the same id (or a source of the same
	// content) shows when the no-row check of the statement could not see
	// it.
	codeConstraintFailed = "Neo.ClientError.Schema.ConstraintValidationFailed"
	// codeDeadlock: two transactions waited for each other's locks (two
	// users locked in opposite orders). It is a TransientError, which the
	// Neo4j driver retries.
	codeDeadlock = "Neo.TransientError.Transaction.DeadlockDetected"
)

// mapError wraps an error of the statement name with what the driver was
// doing, adding graph.ErrConflict when Neo4j refused a duplicate. The Neo4j
// error stays reachable with errors.As, which is how the Neo4j driver's
// managed transactions tell a transient error to retry. A lost connection
// is returned as it is: the managed transactions recognise it by its type,
// not through wrapping, and would not retry it wrapped.
func mapError(name string, err error) error {
	var neoErr *neo4j.Neo4jError
	if !errors.As(err, &neoErr) || neoErr == nil {
		if neo4j.IsRetryable(err) {
			return err
		}
		return fmt.Errorf("graph/neo4j: %s: %w", name, err)
	}
	if neoErr.Code == codeConstraintFailed {
		return fmt.Errorf("graph/neo4j: %s: %w: %w", name, graph.ErrConflict, err)
	}
	return fmt.Errorf("graph/neo4j: %s: %w", name, err)
}

// retryable reports whether running the transaction again may succeed: a
// transient error (a deadlock, a lock wait that timed out, a leader that
// stepped down) or a lost connection. The Neo4j driver's ExecuteRead and
// ExecuteWrite retry these by themselves; the outbox calls, which are
// managed transactions too, rely on the same rule.
func retryable(err error) bool {
	var connErr *neo4j.ConnectivityError
	return neo4j.IsRetryable(err) || errors.As(err, &connErr)
}

func notFound(what, id string) error { return &graph.NotFoundError{What: what, ID: id} }

func conflict(what, id string) error {
	return fmt.Errorf("graph/neo4j: %s %s: %w", what, id, graph.ErrConflict)
}
