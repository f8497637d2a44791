package neo4j

import (
	"context"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
)

var sourcesList = cypher.Must("sources_list")

// ListSources implements graph.DriverTx with one sources_list.
func (t *tx) ListSources(ctx context.Context, f graph.SourceFilter) ([]graph.Source, int, error) {
	if err := t.enter(ctx, f.UserID); err != nil {
		return nil, 0, err
	}
	exclude := f.ExcludeIDs
	if exclude == nil {
		exclude = []string{}
	}
	rows, err := t.run(ctx, sourcesList, cypher.Fill{}, map[string]any{
		"userId": f.UserID, "kind": nullString(f.Kind), "entityTypes": nullList(f.EntityTypes), "fileKind": graph.SourceFile,
		"excludeIds": exclude, "offset": int64(max(f.Page.Offset, 0)), "limit": int64(limitOr(f.Page, 100)),
	})
	if err != nil {
		return nil, 0, err
	}
	return pageRows(rows, toSource)
}
