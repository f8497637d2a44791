package neo4j

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/migrations"
)

// Statements of the runner's bookkeeping.
var (
	migrationConstraint     = cypher.Must("migration_constraint")
	migrationLockConstraint = cypher.Must("migration_lock_constraint")
	migrationLockAcquire    = cypher.Must("migration_lock_acquire")
	migrationLockRelease    = cypher.Must("migration_lock_release")
	migrationApplied        = cypher.Must("migration_applied")
	migrationRecord         = cypher.Must("migration_record")
)

// runner runs one statement in a transaction of its own and returns its
// records as maps. Tests give the runner a fake.
type runner interface {
	run(ctx context.Context, write bool, query string, params map[string]any) ([]map[string]any, error)
}

// driverRunner runs statements with neo4j.ExecuteQuery in one database.
type driverRunner struct {
	d        neo4j.DriverWithContext
	database string
}

func (r driverRunner) run(ctx context.Context, write bool, query string, params map[string]any) ([]map[string]any, error) {
	routing := neo4j.ExecuteQueryWithReadersRouting()
	if write {
		routing = neo4j.ExecuteQueryWithWritersRouting()
	}
	res, err := neo4j.ExecuteQuery(ctx, r.d, query, params, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(r.database), routing)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(res.Records))
	for i, rec := range res.Records {
		out[i] = rec.AsMap()
	}
	return out, nil
}

// MigrateOptions tunes Migrate. The zero value is what production uses.
type MigrateOptions struct {
	// Lease is how long the migration lease lasts before another runner
	// may take it; it is renewed before each file. Zero means 2 minutes.
	Lease time.Duration
	// Poll is how often a runner that waits for the lease tries again.
	// Zero means 250 ms.
	Poll time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Migrate applies the Neo4j migrations that database has not had yet and
// returns those it applied.
//
// Concurrent runners, in this process or others, are safe. The first
// statements create the uniqueness constraints of the version node and of
// the lock node (IF NOT EXISTS); then a runner takes a lease on the lock
// node (a transaction cannot hold Neo4j's own lock across schema commands,
// which each need a transaction of their own), reads the applied versions,
// and applies each pending file one statement per transaction, renewing
// the lease before each file. A runner that dies leaves a lease that ends
// by itself. Every statement of a migration is idempotent, so a file that
// was interrupted runs again from its start.
func Migrate(ctx context.Context, d neo4j.DriverWithContext, database string, opts MigrateOptions) ([]migrations.CypherMigration, error) {
	if database == "" {
		database = DefaultDatabase
	}
	return migrate(ctx, driverRunner{d: d, database: database}, opts)
}

func migrate(ctx context.Context, r runner, opts MigrateOptions) ([]migrations.CypherMigration, error) {
	all, err := migrations.LoadCypher()
	if err != nil {
		return nil, err
	}
	if opts.Lease <= 0 {
		opts.Lease = 2 * time.Minute
	}
	if opts.Poll <= 0 {
		opts.Poll = 250 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	for _, s := range []cypher.Statement{migrationConstraint, migrationLockConstraint} {
		if err := runSchema(ctx, r, s.Text()); err != nil {
			return nil, fmt.Errorf("neo4j: migrate: %s: %w", s.Name(), err)
		}
	}
	holder, err := newHolder()
	if err != nil {
		return nil, err
	}
	l := lease{r: r, holder: holder, opts: opts}
	if err := l.acquire(ctx); err != nil {
		return nil, err
	}
	defer l.release(ctx)

	rows, err := r.run(ctx, false, migrationApplied.Text(), nil)
	if err != nil {
		return nil, fmt.Errorf("neo4j: migrate: read applied versions: %w", err)
	}
	done := map[int64]bool{}
	for _, row := range rows {
		if v, ok := row["version"].(int64); ok {
			done[v] = true
		}
	}
	var applied []migrations.CypherMigration
	for _, m := range all {
		if done[int64(m.Version)] {
			continue
		}
		if err := l.renew(ctx); err != nil {
			return applied, err
		}
		for i, stmt := range m.Statements {
			if err := runSchema(ctx, r, stmt); err != nil {
				return applied, fmt.Errorf("neo4j: migrate: %03d_%s statement %d: %w", m.Version, m.Name, i+1, err)
			}
		}
		if _, err := r.run(ctx, true, migrationRecord.Text(), map[string]any{
			"version": int64(m.Version), "name": m.Name, "appliedAt": opts.Now().UTC(),
		}); err != nil {
			return applied, fmt.Errorf("neo4j: migrate: record %03d_%s: %w", m.Version, m.Name, err)
		}
		applied = append(applied, m)
	}
	return applied, nil
}

// Codes of a schema command that lost a race with an equivalent one that
// another runner ran between its IF NOT EXISTS check and its commit: the
// rule exists, which is what was wanted.
var equivalentSchemaCodes = []string{
	"Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
	"Neo.ClientError.Schema.ConstraintAlreadyExists",
	"Neo.ClientError.Schema.IndexAlreadyExists",
}

// runSchema runs a schema command, taking a lost race for an equivalent
// rule as success.
func runSchema(ctx context.Context, r runner, stmt string) error {
	_, err := r.run(ctx, true, stmt, nil)
	var neoErr *neo4j.Neo4jError
	if errors.As(err, &neoErr) && neoErr != nil {
		for _, c := range equivalentSchemaCodes {
			if neoErr.Code == c {
				return nil
			}
		}
	}
	return err
}

// lease is one runner's hold on the migration lock node.
type lease struct {
	r      runner
	holder string
	opts   MigrateOptions
}

// newHolder names this runner: host, process and a random part, so that
// two runners of one process differ too.
func newHolder() (string, error) {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("neo4j: migrate: %w", err)
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b)), nil
}

// try takes or renews the lease and reports whether this runner holds it.
func (l *lease) try(ctx context.Context) (bool, error) {
	now := l.opts.Now().UTC()
	rows, err := l.r.run(ctx, true, migrationLockAcquire.Text(), map[string]any{
		"holder": l.holder, "now": now, "until": now.Add(l.opts.Lease),
	})
	if err != nil {
		return false, fmt.Errorf("neo4j: migrate: take the migration lease: %w", err)
	}
	return len(rows) == 1 && rows[0]["holder"] == l.holder, nil
}

// acquire waits until this runner holds the lease, or ctx ends.
func (l *lease) acquire(ctx context.Context) error {
	for {
		held, err := l.try(ctx)
		if err != nil || held {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("neo4j: migrate: waiting for another runner's migration lease: %w", ctx.Err())
		case <-time.After(l.opts.Poll):
		}
	}
}

// renew extends the lease; losing it (it ran out and another runner took
// it) stops this runner.
func (l *lease) renew(ctx context.Context) error {
	held, err := l.try(ctx)
	if err != nil {
		return err
	}
	if !held {
		return errors.New("neo4j: migrate: the migration lease ran out and another runner took it")
	}
	return nil
}

// release ends the lease. It runs with a context of its own: the caller's
// may be cancelled, and a lease left to run out holds other runners back.
func (l *lease) release(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, _ = l.r.run(ctx, true, migrationLockRelease.Text(), map[string]any{"holder": l.holder})
}
