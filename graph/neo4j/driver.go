package neo4j

import (
	"context"
	"fmt"
	"slices"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
)

// Driver implements graph.Driver on a Neo4j database.
type Driver struct {
	d        neo4j.DriverWithContext
	database string
	// bookmarks chains every session of this Driver causally: a View that
	// starts after an Update committed sees its writes, even when a cluster
	// serves the read from another member.
	bookmarks neo4j.BookmarkManager
	// stats caches what read transactions' ListEntityStats answered
	// (statsCache).
	stats *statsCache
	// types caches what read transactions' EntityTypes and
	// EntityTypeCounts answered (typeCache).
	types *typeCache
}

var _ graph.Driver = (*Driver)(nil)

// New returns a graph driver on database (empty means DefaultDatabase)
// through d, the process's one Neo4j driver, whose database must be
// migrated (Migrate). The caller keeps ownership of d: Close does not close
// it.
func New(d neo4j.DriverWithContext, database string) *Driver {
	if database == "" {
		database = DefaultDatabase
	}
	return &Driver{d: d, database: database, bookmarks: neo4j.NewBookmarkManager(neo4j.BookmarkManagerConfig{}),
		stats: newStatsCache(statsCacheEntries), types: newTypeCache(typeCacheUsers)}
}

// session opens a session in the driver's database, always named.
func (d *Driver) session(ctx context.Context, mode neo4j.AccessMode) neo4j.SessionWithContext {
	// Every statement's records are read whole (managedRunner.run): fetched
	// at once, rather than a thousand at a time, a listing of 10,000 rows
	// saves nine round trips.
	return d.d.NewSession(ctx, neo4j.SessionConfig{
		AccessMode: mode, DatabaseName: d.database, BookmarkManager: d.bookmarks, FetchSize: neo4j.FetchAll,
	})
}

// Update implements graph.Driver with a managed write transaction, which
// the Neo4j driver runs again when it fails with a transient error (a
// deadlock between two users' locks, a leader switch): fn may be called
// more than once, as graph.Driver allows.
func (d *Driver) Update(ctx context.Context, fn func(graph.DriverTx) error) error {
	return d.execute(ctx, neo4j.AccessModeWrite, func(r txRunner) error {
		return fn(&tx{r: r, write: true})
	})
}

// View implements graph.Driver with a managed read transaction.
func (d *Driver) View(ctx context.Context, fn func(graph.DriverTx) error) error {
	return d.execute(ctx, neo4j.AccessModeRead, func(r txRunner) error {
		return fn(&tx{r: r, stats: d.stats, types: d.types})
	})
}

// execute runs work in one managed transaction of mode in a session of its
// own. The error work returns comes back as it is (wrapped or not).
func (d *Driver) execute(ctx context.Context, mode neo4j.AccessMode, work func(txRunner) error) error {
	s := d.session(ctx, mode)
	defer func() { _ = s.Close(context.WithoutCancel(ctx)) }()
	fn := func(mt neo4j.ManagedTransaction) (struct{}, error) {
		return struct{}{}, work(managedRunner{mt})
	}
	var err error
	if mode == neo4j.AccessModeWrite {
		_, err = neo4j.ExecuteWrite(ctx, s, fn)
	} else {
		_, err = neo4j.ExecuteRead(ctx, s, fn)
	}
	return err
}

// Close implements graph.Driver. The Neo4j driver belongs to the caller.
func (d *Driver) Close() error { return nil }

// txRunner runs one statement in the current transaction and returns its
// records as maps, keyed by the names the statement returns. It is the
// seam the unit tests replace with a fake that records what ran.
type txRunner interface {
	run(ctx context.Context, name, query string, params map[string]any) ([]map[string]any, error)
}

// managedRunner runs statements in a managed transaction.
type managedRunner struct{ tx neo4j.ManagedTransaction }

func (r managedRunner) run(ctx context.Context, _ string, query string, params map[string]any) ([]map[string]any, error) {
	res, err := r.tx.Run(ctx, query, params)
	if err != nil {
		return nil, err
	}
	recs, err := res.Collect(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(recs))
	for i, rec := range recs {
		out[i] = rec.AsMap()
	}
	return out, nil
}

// tx implements graph.DriverTx and graph.Reacher on one Neo4j transaction.
type tx struct {
	r     txRunner
	write bool
	// locked holds the users whose lock node this transaction wrote.
	locked []string
	// userWrites holds, by user, the count of the user's write that this
	// transaction is (user_lock), which it stamps on the entities whose
	// statistics it changes (user_write).
	userWrites map[string]int64
	// totals holds what entity_total counted per user, for Reach's bound,
	// until the transaction writes an entity: a batch of cycle checks
	// counts once.
	totals map[string]int
	// stats is the Driver's cache of entity statistics, in read
	// transactions; nil in write transactions.
	stats *statsCache
	// types is the Driver's cache of entity types, in read transactions;
	// nil in write transactions.
	types *typeCache
}

var (
	_ graph.DriverTx                = (*tx)(nil)
	_ graph.Reacher                 = (*tx)(nil)
	_ graph.Expander                = (*tx)(nil)
	_ graph.TypedRelationshipGetter = (*tx)(nil)
)

var userLock = cypher.Must("user_lock")

// enter is called first by every method. In a write transaction, at the
// first call for a user, it writes the user's lock node (user_lock): Neo4j
// holds the node's exclusive lock until the transaction ends, so the
// user's write transactions run one at a time, and, since Neo4j reads what
// committed before each statement, every one of them reads what its
// predecessors wrote. A cycle check and the edge it guards are then atomic
// with respect to concurrent writers. Two transactions that lock two users
// in opposite orders deadlock; Neo4j detects it, and Update runs the loser
// again. Read transactions take no lock.
func (t *tx) enter(ctx context.Context, userID string) error {
	if !t.write || slices.Contains(t.locked, userID) {
		return nil
	}
	rows, err := t.run(ctx, userLock, cypher.Fill{}, map[string]any{"userId": userID})
	if err != nil {
		return err
	}
	if len(rows) == 1 {
		r := record{m: rows[0]}
		if w := r.int64("writes"); r.err == nil {
			if t.userWrites == nil {
				t.userWrites = map[string]int64{}
			}
			t.userWrites[userID] = w
		}
	}
	t.locked = append(t.locked, userID)
	return nil
}

// LockUser implements graph.DriverTx: the lock that every write
// transaction takes at its first call for the user.
func (t *tx) LockUser(ctx context.Context, userID string) error { return t.enter(ctx, userID) }

// run renders s with f and runs it with params, mapping Neo4j's errors onto
// the graph package's sentinels (mapError).
func (t *tx) run(ctx context.Context, s cypher.Statement, f cypher.Fill, params map[string]any) ([]map[string]any, error) {
	text, err := s.Render(f)
	if err != nil {
		return nil, fmt.Errorf("graph/neo4j: %w", err)
	}
	rows, err := t.r.run(ctx, s.Name(), text, params)
	if err != nil {
		return nil, mapError(s.Name(), err)
	}
	return rows, nil
}
