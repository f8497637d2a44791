package knowledge

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairnkg/cairn/graph"
)

// RecordFileSource records a stored file as a source of kind graph.SourceFile,
// unless the user has that content already: the same bytes are one source.
// The source's id and created time are those of src when it is new; the
// existing source is returned, with existed set, otherwise. The caller
// needs write access to sources.
func (s *Service) RecordFileSource(ctx context.Context, c Caller, src graph.Source) (out graph.Source, existed bool, err error) {
	if err := c.need(Write, ResourceSources); err != nil {
		return graph.Source{}, false, err
	}
	src.UserID, src.Kind = c.UserID, graph.SourceFile
	src.ID = SourceID(c.UserID, src.ContentHash)
	if src.CreatedAt.IsZero() {
		src.CreatedAt = s.clock()
	}
	write := func(tx *graph.Tx) error {
		got, err := tx.SourceByHash(ctx, c.UserID, src.ContentHash)
		if err == nil {
			out, existed = got, true
			return nil
		}
		if !errors.Is(err, graph.ErrNotFound) {
			return err
		}
		out, existed = src, false
		return tx.InsertSource(ctx, src)
	}
	err = s.graph.Update(ctx, write)
	if errors.Is(err, graph.ErrConflict) {
		err = s.graph.Update(ctx, write)
	}
	if err != nil {
		return graph.Source{}, false, fmt.Errorf("knowledge: record file source: %w", err)
	}
	return out, existed, nil
}
