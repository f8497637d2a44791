package knowledge

import (
	"context"
	"fmt"

	"github.com/cairnkg/cairn/graph"
)

// SourceQuery selects the caller's sources for ListSources.
type SourceQuery struct {
	// Kind keeps the sources of one kind (graph.SourceFile, …); empty
	// keeps every kind.
	Kind string
	Page graph.Page
}

// ListSources returns a page of the caller's sources, newest first, and
// how many there are, without those the caller may not read: a file whose
// data it may not all read (as for the file itself), and, for a caller
// that may read only some entity types, a source that produced no
// observation of those types (one that produced only invoices for an agent
// denied invoices; a relationship's or a merge's record, which says
// nothing an observation of a readable type shows). A batch interpreted
// from a file the caller may not read is listed without what names the
// file. The caller needs read access to sources.
func (s *Service) ListSources(ctx context.Context, c Caller, q SourceQuery) ([]graph.Source, int, error) {
	if err := c.need(Read, ResourceSources); err != nil {
		return nil, 0, err
	}
	f := graph.SourceFilter{UserID: c.UserID, Kind: q.Kind, Page: q.Page}
	if q.Kind == "" || q.Kind == graph.SourceFile {
		var err error
		if f.ExcludeIDs, err = s.unreadableFiles(ctx, c); err != nil {
			return nil, 0, err
		}
	}
	var out []graph.Source
	var total int
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		var err error
		if f.EntityTypes, err = s.readableTypes(ctx, tx, c); err != nil {
			return err
		}
		out, total, err = tx.ListSources(ctx, f)
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("knowledge: list sources: %w", err)
	}
	// Checked again: a file found to hold more since unreadableFiles
	// looked is left out rather than shown.
	if out, err = s.redactSources(ctx, c, out); err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// unreadableFilesPage is how many file sources unreadableFiles reads at a
// time.
const unreadableFilesPage = 1000

// unreadableFiles returns the ids of the caller's file sources that it may
// not read (sourceReadable): none for a caller under no consent, or when
// sources carry no types. It reads every file source of the user, and the
// types of each: a cost that grows with the files, which the user's quota
// bounds, not with the sources.
func (s *Service) unreadableFiles(ctx context.Context, c Caller) ([]string, error) {
	if c.Allowed == nil || s.sourceTypes == nil {
		return nil, nil
	}
	var fileSrcs []graph.Source
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		for offset := 0; ; offset += unreadableFilesPage {
			page, total, err := tx.ListSources(ctx, graph.SourceFilter{
				UserID: c.UserID, Kind: graph.SourceFile, Page: graph.Page{Limit: unreadableFilesPage, Offset: offset},
			})
			if err != nil {
				return err
			}
			fileSrcs = append(fileSrcs, page...)
			if len(page) == 0 || offset+len(page) >= total {
				return nil
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("knowledge: list file sources: %w", err)
	}
	var out []string
	for _, src := range fileSrcs {
		ok, err := s.sourceReadable(ctx, c, src)
		if err != nil {
			return nil, err
		}
		if !ok {
			out = append(out, src.ID)
		}
	}
	return out, nil
}
