package neo4j

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/cairnkg/cairn/cypher"
)

// Config is how to reach the graph's Neo4j database.
type Config struct {
	// URI is the server's address: neo4j:// (routing, for a cluster) or
	// bolt:// (one server), with +s for TLS or +ssc for TLS with a self-
	// signed certificate.
	URI string
	// User and Password are the basic-auth credentials.
	User     string
	Password string
	// Database is the database the graph lives in. It is always sent, so
	// that no statement depends on the server's default (and a routing
	// driver needs no round trip to learn it). Empty means DefaultDatabase.
	Database string
}

// DefaultDatabase is the database of a Neo4j installation that was not told
// otherwise, and the only one Community Edition has.
const DefaultDatabase = "neo4j"

var (
	uriSchemes   = []string{"neo4j", "neo4j+s", "neo4j+ssc", "bolt", "bolt+s", "bolt+ssc"}
	databaseName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{2,62}$`)
)

// Validate checks the configuration without connecting: a URI of a Bolt
// scheme with a host, a user, and a database name Neo4j accepts. It fills
// in DefaultDatabase.
func (c *Config) Validate() error {
	u, err := url.Parse(c.URI)
	if err != nil || c.URI == "" {
		return errors.New("neo4j: the URI is not a URL (want bolt://host:7687 or neo4j://host:7687)")
	}
	if !slices.Contains(uriSchemes, u.Scheme) {
		return fmt.Errorf("neo4j: URI scheme %q is not one of %s", u.Scheme, strings.Join(uriSchemes, ", "))
	}
	if u.Host == "" {
		return fmt.Errorf("neo4j: URI %s has no host", redact(c.URI))
	}
	if u.User != nil {
		return errors.New("neo4j: put the user and password in their own settings, not in the URI")
	}
	if c.User == "" {
		return errors.New("neo4j: a user is needed")
	}
	if c.Password == "" {
		return errors.New("neo4j: a password is needed")
	}
	if c.Database == "" {
		c.Database = DefaultDatabase
	}
	if !databaseName.MatchString(c.Database) {
		return fmt.Errorf("neo4j: %q is not a Neo4j database name (3 to 63 lower-case letters, digits, dots and dashes)", c.Database)
	}
	return nil
}

// redact returns a URI without its user information.
func redact(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return "(unparsable URI)"
	}
	u.User = nil
	return u.String()
}

// Connect opens the process's one Neo4j driver, checks that the server
// answers with these credentials, that the database exists, and that it is
// Neo4j 5 or newer. Its errors are *StartupError, one line each. The
// caller closes the driver.
func Connect(ctx context.Context, c Config) (neo4j.DriverWithContext, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	d, err := neo4j.NewDriverWithContext(c.URI, neo4j.BasicAuth(c.User, c.Password, ""))
	if err != nil {
		return nil, classify(err, c)
	}
	if err := check(ctx, d, c); err != nil {
		_ = d.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return d, nil
}

var serverVersion = cypher.Must("server_version")

// check verifies connectivity and credentials, then the database and the
// server's version with one read in the database.
func check(ctx context.Context, d neo4j.DriverWithContext, c Config) error {
	if err := d.VerifyConnectivity(ctx); err != nil {
		return classify(err, c)
	}
	q, err := serverVersion.Cypher()
	if err != nil {
		return err
	}
	res, err := neo4j.ExecuteQuery(ctx, d, q, nil, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(c.Database), neo4j.ExecuteQueryWithReadersRouting())
	if err != nil {
		return classify(err, c)
	}
	if len(res.Records) == 0 {
		return &StartupError{Kind: TooOld, URI: redact(c.URI), Database: c.Database, Err: errors.New("the server did not say its version")}
	}
	version, _, _ := neo4j.GetRecordValue[string](res.Records[0], "version")
	if !atLeast5(version) {
		return &StartupError{Kind: TooOld, URI: redact(c.URI), Database: c.Database, Version: version}
	}
	return nil
}

// atLeast5 reports whether a Neo4j version (5.26.1, 2025.01.0, …) is 5 or
// newer.
func atLeast5(version string) bool {
	major, _, _ := strings.Cut(version, ".")
	n, err := strconv.Atoi(major)
	return err == nil && n >= 5
}
