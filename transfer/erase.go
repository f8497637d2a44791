package transfer

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/vector"
)

// A graph tombstone in an export (a graph_tombstones row) is an erasure
// made in the store the export came from. Importing it does what importing
// a memory tombstone does: the store records the tombstone as the export
// holds it (its time, actor, reason and counts, not the import's), and
// erases what it still holds of that entity or source exactly as erase
// does, so that an erasure travels with the data: a store restored from a
// backup, or a copy made before, forgets what the live store forgot.
//
// Tombstones come after the user's graph, file and memory lines, so an
// export whose graph was read before an erasure and whose tombstones after
// it (export reads the control plane after the graph) holds both the
// entity's lines and its tombstone: the import writes the entity, then
// erases it. Lines after the tombstones are skipped as erased.

// GraphEraser erases entities or sources as the erase tool and cairn admin
// erase do: knowledge.Service implements it (with its file eraser set, so
// that a stored file's bytes go with its source).
type GraphEraser interface {
	Erase(ctx context.Context, c knowledge.Caller, req knowledge.EraseRequest) (knowledge.EraseResult, error)
}

// importActor erases for a graph tombstone that names no actor.
const importActor = "operator"

// graphTombstone is what an import reads of a graph_tombstones row.
type graphTombstone struct {
	kind              knowledge.EraseKind
	id, actor, reason string
}

func tombstoneOf(row map[string]any) graphTombstone {
	str := func(c string) string { s, _ := row[c].(string); return s }
	return graphTombstone{kind: knowledge.EraseKind(str("kind")), id: str("id"), actor: str("actor"), reason: str("reason")}
}

// graphTombstone refuses a tombstone row that names no entity or source
// by a valid id: one that does is what an import erases.
func (c checker) graphTombstone(row map[string]any) error {
	t := tombstoneOf(row)
	if t.kind != knowledge.EraseEntity && t.kind != knowledge.EraseSource {
		return fmt.Errorf("a graph tombstone of kind %q, neither entity nor source", truncate(string(t.kind), 64))
	}
	return c.id("graph tombstone id", t.id)
}

// writeGraphTombstones records the user's graph tombstones (one the store
// holds already is kept) and erases what the store still holds of them. It
// returns which rows it recorded, as ImportRowsEach does.
//
// The rows are recorded first, so that the tombstone the erasure leaves is
// the export's own (AddGraphTombstones keeps the first). Whether to erase
// is decided by what the store holds, not by whether the row is new: an
// import interrupted between the two erases the rest when run again.
func (im *importer) writeGraphTombstones(ctx context.Context, rows []map[string]any) ([]bool, error) {
	ts := make([]graphTombstone, len(rows))
	for i, r := range rows {
		ts[i] = tombstoneOf(r)
	}
	if im.opts.Eraser == nil {
		// Nothing is recorded of what the store cannot erase: a tombstone
		// beside the data it says is gone would keep later imports from
		// writing it and leave it there.
		for _, kind := range []knowledge.EraseKind{knowledge.EraseEntity, knowledge.EraseSource} {
			var ids []string
			for _, t := range ts {
				if t.kind == kind {
					ids = append(ids, t.id)
				}
			}
			held, err := im.holding(ctx, kind, ids)
			if err != nil {
				return nil, err
			}
			if len(held) > 0 {
				return nil, fmt.Errorf("transfer: the export erased %s %s, which this store holds, and this import cannot erase (no ImportOptions.Eraser); its tombstones were not recorded", kind, held[0])
			}
		}
	}
	created, err := im.s.Control.ImportRowsEach(ctx, controlplane.TableGraphTombstones, rows)
	if err != nil {
		return created, err
	}
	if im.erased != nil {
		for _, t := range ts {
			im.erased[t.id] = true
		}
	}
	if im.opts.Eraser != nil {
		// Erased once every tombstone of the user is recorded (settle):
		// an erasure records tombstones of what goes with what it was
		// asked to erase, and the export's own of those must be there
		// first, in whatever batch of lines they come.
		im.tombstoned = append(im.tombstoned, ts...)
	}
	return created, nil
}

// eraseTombstoned erases what the store still holds of the user's
// recorded tombstones (writeGraphTombstones), once the user's lines end.
func (im *importer) eraseTombstoned(ctx context.Context) error {
	ts := im.tombstoned
	im.tombstoned = nil
	// One erasure per kind, actor and reason (the erasure's own records,
	// such as the tombstones of merged duplicates it finds, take them),
	// of at most knowledge.MaxEraseBatch ids.
	type group struct {
		kind          knowledge.EraseKind
		actor, reason string
	}
	var order []group
	ids := map[group][]string{}
	for _, t := range ts {
		g := group{t.kind, t.actor, t.reason}
		if _, ok := ids[g]; !ok {
			order = append(order, g)
		}
		ids[g] = append(ids[g], t.id)
	}
	for _, g := range order {
		all := ids[g]
		for start := 0; start < len(all); start += knowledge.MaxEraseBatch {
			// Read again before each erasure: an earlier one may have
			// taken these (a merged duplicate with its target, an entity
			// with its only source).
			held, err := im.holding(ctx, g.kind, all[start:min(start+knowledge.MaxEraseBatch, len(all))])
			if err != nil {
				return err
			}
			if len(held) == 0 {
				continue
			}
			actor := g.actor
			if actor == "" {
				actor = importActor
			}
			res, err := im.opts.Eraser.Erase(ctx, knowledge.Caller{UserID: im.graphUser, AgentID: actor},
				knowledge.EraseRequest{Kind: g.kind, IDs: held, Reason: reasonPrefix(g.reason)})
			im.auditErasure(ctx, g.kind, len(held), err)
			if err != nil {
				return fmt.Errorf("transfer: erase %s %v, as the export's tombstones say: %w", g.kind, held, err)
			}
			for k, n := range res.Counts {
				im.erasedCount(k, n)
			}
		}
	}
	return nil
}

// auditErasure records an erasure an import made, as cairn admin erase
// records its own: the user, what was erased (graph or sources), how many,
// the outcome; never the ids or the reason, which the tombstones keep. A
// failure to record it is not the import's failure.
func (im *importer) auditErasure(ctx context.Context, kind knowledge.EraseKind, n int, err error) {
	resource, code := "graph", "OK"
	if kind == knowledge.EraseSource {
		resource = knowledge.ResourceSources
	}
	if err != nil {
		code = "ERROR"
	}
	_ = im.s.Control.AppendAudit(ctx, []consent.AuditRecord{{
		At: time.Now().UTC(), UserID: im.graphUser, AgentName: "operator", Transport: "cli", Tool: "import",
		Kind: consent.AuditDecision, Action: consent.Delete, Resource: resource, Decision: consent.Allow, ResultCode: code, Count: n,
	}})
}

// holding returns those of ids, entities (merged ones too) or sources of
// the user of the lines, that the store holds.
func (im *importer) holding(ctx context.Context, kind knowledge.EraseKind, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var out []string
	err := im.s.Graph.View(ctx, func(tx *graph.Tx) error {
		out = out[:0]
		if kind == knowledge.EraseEntity {
			es, err := tx.Entities(ctx, im.user, ids)
			for _, e := range es {
				out = append(out, e.ID)
			}
			return err
		}
		for _, id := range ids {
			_, err := tx.Source(ctx, im.user, id)
			switch {
			case err == nil:
				out = append(out, id)
			case !errors.Is(err, graph.ErrNotFound):
				return err
			}
		}
		return nil
	})
	return out, err
}

// erasedCount adds n to what the import erased of kind.
func (im *importer) erasedCount(kind string, n int) {
	if n == 0 {
		return
	}
	if im.stats.Erased == nil {
		im.stats.Erased = map[string]int{}
	}
	im.stats.Erased[kind] += n
}

// reasonPrefix returns reason cut to the longest reason an erasure takes,
// on a character boundary: the tombstone row keeps the whole of it.
func reasonPrefix(reason string) string {
	if len(reason) <= vector.MaxReasonLen {
		return reason
	}
	n := vector.MaxReasonLen
	for n > 0 && !utf8.RuneStart(reason[n]) {
		n--
	}
	return reason[:n]
}
