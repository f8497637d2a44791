package neo4j

import (
	"context"
	"slices"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
)

var (
	entitiesWithoutTextSig = cypher.Must("entities_without_text_sig")
	entitiesTextSigSet     = cypher.Must("entities_text_sig_set")
)

var _ graph.TextSigBackfiller = (*Driver)(nil)

// BackfillTextSigs implements graph.TextSigBackfiller in one write
// transaction: entities_without_text_sig, then entities_text_sig_set,
// which leaves alone an entity that a write in between gave its own. It
// also gives the entities stored before the driver kept completion keys
// (those without name_keys) their keys.
func (d *Driver) BackfillTextSigs(ctx context.Context, after string, limit int) (last string, n int, err error) {
	err = d.Update(ctx, func(dt graph.DriverTx) error {
		last, n, err = dt.(*tx).backfillTextSigs(ctx, after, limit)
		return err
	})
	return last, n, err
}

// backfillTextSigs is BackfillTextSigs inside t. It reads entities of
// every user without a lock, then takes the lock of each user it read
// entities of (in the order of their first entity), as a write of one of
// them takes it first, so that entities_text_sig_set sees whether such a
// write gave an entity its keys meanwhile, and one that comes later waits.
func (t *tx) backfillTextSigs(ctx context.Context, after string, limit int) (string, int, error) {
	rows, err := t.run(ctx, entitiesWithoutTextSig, cypher.Fill{}, map[string]any{"afterId": after, "limit": int64(limit)})
	if err != nil || len(rows) == 0 {
		return "", 0, err
	}
	sets := make([]any, len(rows))
	var id string
	var users []string
	for i, m := range rows {
		r := record{m: m}
		e := graph.Entity{Type: r.str("entity_type"), CanonicalName: r.str("canonical_name"), Snapshot: r.jsonMap("snapshot_json")}
		id = r.str("id")
		user, merged := r.str("user_id"), r.m["merged_into"] != nil
		if r.err != nil {
			return "", 0, r.err
		}
		if !slices.Contains(users, user) {
			users = append(users, user)
		}
		sets[i] = map[string]any{
			"id": id, "text_sig": []byte(graph.EntityTextSig(e)),
			"name_keys": nameKeys(e.CanonicalName), "keys": completionKeys(user, e.Type, id, e.CanonicalName, merged),
		}
	}
	for _, user := range users {
		if err := t.enter(ctx, user); err != nil {
			return "", 0, err
		}
	}
	if _, err := t.run(ctx, entitiesTextSigSet, cypher.Fill{}, map[string]any{"rows": sets}); err != nil {
		return "", 0, err
	}
	return id, len(rows), nil
}
