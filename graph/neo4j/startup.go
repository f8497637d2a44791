package neo4j

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// StartupKind says why a Neo4j connection could not be set up.
type StartupKind int

// The kinds of startup error.
const (
	// Other is anything the kinds below do not cover.
	Other StartupKind = iota
	// Unreachable: no server answered at the URI, or the database is
	// not available.
	Unreachable
	// BadCredentials: the server refused the user and password.
	BadCredentials
	// UnknownDatabase: the server has no database of that name.
	UnknownDatabase
	// TooOld: the server is older than Neo4j 5.
	TooOld
)

// StartupError is a failure to set up the connection to Neo4j. Its message
// is one line that says what to check, and never holds the password.
type StartupError struct {
	Kind     StartupKind
	URI      string // without user information
	Database string
	Version  string // the server's version, when Kind is TooOld and it is known
	Err      error  // the driver's error, if any
}

func (e *StartupError) Error() string {
	cause := ""
	if e.Err != nil {
		cause = firstLine(e.Err.Error())
	}
	switch e.Kind {
	case Unreachable:
		return fmt.Sprintf("neo4j: cannot reach %s (database %q): %s; check the URI and that Neo4j is running", e.URI, e.Database, cause)
	case BadCredentials:
		return fmt.Sprintf("neo4j: %s refused the user and password (%s); check them", e.URI, cause)
	case UnknownDatabase:
		return fmt.Sprintf("neo4j: %s has no database %q; create it or name another (Community Edition has only %q)", e.URI, e.Database, DefaultDatabase)
	case TooOld:
		if e.Version != "" {
			return fmt.Sprintf("neo4j: %s runs Neo4j %s; Cairn needs Neo4j 5 or newer", e.URI, e.Version)
		}
		return fmt.Sprintf("neo4j: %s is older than Neo4j 5, which Cairn needs (%s)", e.URI, cause)
	default:
		return fmt.Sprintf("neo4j: %s (database %q): %s", e.URI, e.Database, cause)
	}
}

func (e *StartupError) Unwrap() error { return e.Err }

// firstLine returns the first line of s, trimmed: driver errors may run to
// several lines, and a startup error is one.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(s)
}

// Neo4j status codes that startup errors are classified by.
const (
	codeUnauthorized        = "Neo.ClientError.Security.Unauthorized"
	codeAuthRateLimit       = "Neo.ClientError.Security.AuthenticationRateLimit"
	codeCredentialsExpired  = "Neo.ClientError.Security.CredentialsExpired"
	codeDatabaseNotFound    = "Neo.ClientError.Database.DatabaseNotFound"
	codeDatabaseUnavailable = "Neo.TransientError.General.DatabaseUnavailable"
)

// classify turns an error of the driver at startup into a *StartupError.
func classify(err error, c Config) error {
	e := &StartupError{Kind: Other, URI: redact(c.URI), Database: c.Database, Err: err}
	var neoErr *neo4j.Neo4jError
	var tokenErr *neo4j.TokenExpiredError
	var authErr *neo4j.InvalidAuthenticationError
	var connErr *neo4j.ConnectivityError
	var netErr net.Error
	switch {
	// Before Neo4jError: a TokenExpiredError unwraps to its cause, which may
	// be a nil *Neo4jError.
	case errors.As(err, &tokenErr), errors.As(err, &authErr):
		e.Kind = BadCredentials
	case errors.As(err, &neoErr) && neoErr != nil:
		switch neoErr.Code {
		case codeUnauthorized, codeAuthRateLimit, codeCredentialsExpired:
			e.Kind = BadCredentials
		case codeDatabaseNotFound:
			e.Kind = UnknownDatabase
		case codeDatabaseUnavailable:
			e.Kind = Unreachable
		}
	case oldProtocol(err.Error()):
		e.Kind = TooOld
	case errors.As(err, &connErr), errors.As(err, &netErr):
		e.Kind = Unreachable
	}
	return e
}

// oldProtocol reports whether a driver message says that the server speaks
// none of the Bolt versions the driver offers in its handshake. Servers
// that speak one of them (Neo4j 3.5 and 4.x do) connect, and Connect then
// reads their version.
func oldProtocol(msg string) bool {
	return strings.Contains(msg, "did not accept any of the requested Bolt versions") ||
		strings.Contains(msg, "unsupported version") ||
		strings.Contains(msg, "none of the server offered Bolt versions are supported")
}
