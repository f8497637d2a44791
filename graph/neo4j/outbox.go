package neo4j

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
)

var (
	outboxEnqueue = cypher.Must("outbox_enqueue")
	outboxClaim   = cypher.Must("outbox_claim")
	outboxAck     = cypher.Must("outbox_ack")
	outboxRelease = cypher.Must("outbox_release")
)

// EnqueueOutbox implements graph.DriverTx. The entries are written in the
// transaction of the change, so that Neo4j holds their locks until it
// commits: a claim waits for them and then sees their final seq.
func (t *tx) EnqueueOutbox(ctx context.Context, userID string, entityIDs []string, at time.Time) error {
	if err := t.enter(ctx, userID); err != nil {
		return err
	}
	if len(entityIDs) == 0 {
		return nil
	}
	_, err := t.run(ctx, outboxEnqueue, cypher.Fill{}, map[string]any{"userId": userID, "entityIds": entityIDs, "at": at.UTC()})
	return err
}

// ClaimOutbox implements graph.Driver in a write transaction of its own
// (outbox_claim says why two claimers never return the same entry).
func (d *Driver) ClaimOutbox(ctx context.Context, c graph.OutboxClaim) ([]graph.OutboxEntry, error) {
	var out []graph.OutboxEntry
	err := d.outbox(ctx, func(t *tx) error {
		rows, err := t.run(ctx, outboxClaim, cypher.Fill{}, claimParams(c))
		if err != nil {
			return err
		}
		out, err = mapRows(rows, "", toOutboxEntry)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("graph/neo4j: claim outbox: %w", err)
	}
	sortOutbox(out)
	return out, nil
}

// claimParams are the parameters of outbox_claim.
func claimParams(c graph.OutboxClaim) map[string]any {
	now := c.Now.UTC()
	return map[string]any{"now": now, "until": now.Add(c.Lease), "limit": int64(c.Limit)}
}

// AckOutbox implements graph.Driver: outbox_ack deletes the entries whose
// seq is unchanged, then outbox_release frees those enqueued again since,
// in one transaction.
func (d *Driver) AckOutbox(ctx context.Context, entries []graph.OutboxEntry) error {
	err := d.outbox(ctx, func(t *tx) error {
		if _, err := t.run(ctx, outboxAck, cypher.Fill{}, map[string]any{"entries": entryParams(entries, true)}); err != nil {
			return err
		}
		_, err := t.run(ctx, outboxRelease, cypher.Fill{}, map[string]any{"entries": entryParams(entries, false)})
		return err
	})
	if err != nil {
		return fmt.Errorf("graph/neo4j: ack outbox: %w", err)
	}
	return nil
}

// ReleaseOutbox implements graph.Driver.
func (d *Driver) ReleaseOutbox(ctx context.Context, entries []graph.OutboxEntry) error {
	err := d.outbox(ctx, func(t *tx) error {
		_, err := t.run(ctx, outboxRelease, cypher.Fill{}, map[string]any{"entries": entryParams(entries, false)})
		return err
	})
	if err != nil {
		return fmt.Errorf("graph/neo4j: release outbox: %w", err)
	}
	return nil
}

// outbox runs fn in a managed write transaction that takes no user lock:
// the outbox statements serve every user and lock only their entries.
func (d *Driver) outbox(ctx context.Context, fn func(*tx) error) error {
	return d.execute(ctx, neo4j.AccessModeWrite, func(r txRunner) error { return fn(&tx{r: r}) })
}

// entryParams are the $entries of outbox_ack (with seq) and
// outbox_release (without).
func entryParams(entries []graph.OutboxEntry, withSeq bool) []any {
	out := make([]any, len(entries))
	for i, e := range entries {
		m := map[string]any{"user_id": e.UserID, "entity_id": e.EntityID}
		if withSeq {
			m["seq"] = e.Seq
		}
		out[i] = m
	}
	return out
}

// sortOutbox puts claimed entries in the order they were chosen in.
func sortOutbox(es []graph.OutboxEntry) {
	slices.SortFunc(es, func(a, b graph.OutboxEntry) int {
		return cmp.Or(a.EnqueuedAt.Compare(b.EnqueuedAt), strings.Compare(a.UserID, b.UserID), strings.Compare(a.EntityID, b.EntityID))
	})
}
