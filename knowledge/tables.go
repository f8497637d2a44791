package knowledge

import (
	"context"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// Epitome's tables are a view of the schema registry: a table is an entity
// type, its columns are the schema's fields, its records the entities. The
// filter semantics are schema.Filter's.

// Table describes one entity type as a table.
type Table struct {
	Schema *schema.Schema
	Count  int
}

// Tables lists the caller's tables: the readable entity types that have
// entities or a schema of the user's own, by name.
func (s *Service) Tables(ctx context.Context, c Caller) ([]Table, error) {
	set, err := s.schemas.For(ctx, c.UserID)
	if err != nil {
		return nil, err
	}
	var counts map[string]int
	err = s.graph.View(ctx, func(tx *graph.Tx) error {
		var err error
		counts, err = tx.EntityTypeCounts(ctx, c.UserID)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := []Table{}
	for _, sc := range set.All() {
		if c.readable(sc.EntityType) && (counts[sc.EntityType] > 0 || sc.Owner == c.UserID) {
			out = append(out, Table{Schema: sc, Count: counts[sc.EntityType]})
		}
	}
	return out, nil
}

// MaxTableLimit bounds one page of QueryTable.
const MaxTableLimit = 1000

// QueryTable returns a page of the caller's entities of a type whose
// snapshots pass every filter, most recently observed first, and how many
// pass in all. The filters run over the snapshots in the service (an
// entity type of a user is a few thousand entities at most in practice),
// the same way on every backend. A type the caller may not read reads as
// an empty table.
func (s *Service) QueryTable(ctx context.Context, c Caller, entityType string, filters []schema.Filter, limit, offset int) ([]graph.Entity, int, error) {
	typ := schema.NormalizeTypeName(entityType)
	if err := schema.CheckFilters(filters); err != nil {
		return nil, 0, validationError(err)
	}
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, MaxTableLimit)
	var matched []graph.Entity
	const page = 500
	for off := 0; ; off += page {
		ents, total, err := s.ListEntities(ctx, c, EntityQuery{EntityType: typ, Page: graph.Page{Limit: page, Offset: off}})
		if err != nil {
			return nil, 0, err
		}
		for _, e := range ents {
			if schema.Match(e.Snapshot, filters) {
				matched = append(matched, e)
			}
		}
		if len(ents) < page || off+page >= total {
			break
		}
	}
	total := len(matched)
	if offset >= total {
		return []graph.Entity{}, total, nil
	}
	return matched[offset:min(total, offset+limit)], total, nil
}
