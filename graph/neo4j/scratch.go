package neo4j

import (
	"context"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/cairnkg/cairn/cypher"
)

// Statements for a scratch database: one that a benchmark or a test was
// given to fill and empty again.
var (
	databaseHoldsData = cypher.Must("database_holds_data")
	databaseClear     = cypher.Must("database_clear")
)

// clearBatch is how many nodes ClearDatabase deletes in one transaction:
// small enough that a graph of any size is emptied within a modest heap.
const clearBatch = 10_000

// HoldsData reports whether database holds any node besides the migration
// runner's bookkeeping.
func HoldsData(ctx context.Context, d neo4j.DriverWithContext, database string) (bool, error) {
	q, err := databaseHoldsData.Cypher()
	if err != nil {
		return false, err
	}
	recs, err := (driverRunner{d, database}).run(ctx, false, q, nil)
	if err != nil {
		return false, fmt.Errorf("neo4j: is %s empty: %w", database, err)
	}
	if len(recs) != 1 {
		return false, fmt.Errorf("neo4j: is %s empty: %d rows", database, len(recs))
	}
	holds, _ := recs[0]["holds"].(bool)
	return holds, nil
}

// ClearDatabase deletes every node of database but the migration runner's
// bookkeeping, with their relationships, in transactions of at most
// clearBatch nodes; the constraints and indexes stay, so the database is
// migrated and empty. It is for scratch databases only: every user's data
// goes.
func ClearDatabase(ctx context.Context, d neo4j.DriverWithContext, database string) (deleted int64, err error) {
	q, err := databaseClear.Cypher()
	if err != nil {
		return 0, err
	}
	for {
		recs, err := (driverRunner{d, database}).run(ctx, true, q, map[string]any{"limit": clearBatch})
		if err != nil {
			return deleted, fmt.Errorf("neo4j: clear %s: %w", database, err)
		}
		var n int64
		if len(recs) == 1 {
			n, _ = recs[0]["deleted"].(int64)
		}
		deleted += n
		if n < clearBatch {
			return deleted, nil
		}
	}
}
