package mcp

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
)

// SourcesIn are the arguments of list_sources.
type SourcesIn struct {
	Kind   *string `json:"kind,omitempty"`
	Limit  *int    `json:"limit,omitempty"`
	Offset *int    `json:"offset,omitempty"`
}

// SourcesOut is a page of sources, newest first.
type SourcesOut struct {
	Sources []SourceOut `json:"sources"`
	Total   int         `json:"total"`
	Limit   int         `json:"limit"`
	Offset  int         `json:"offset"`
}

// listSourcesTool lists the caller's sources. It is in the entities
// toolset, which every server has, because the sources collection resource
// (cairn://sources) reads through it: sources are where entities' facts
// come from, files being one kind of them.
func listSourcesTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:        "list_sources",
		title:       "List sources",
		description: "List the sources your data came from, newest first.",
		toolset:     ToolsetEntities, ann: readOnly, budget: BudgetList,
		requires: reads(consent.ResourceSources),
		shape: func(s *jsonschema.Schema) {
			// limit as the other lists; offset without the default
			// and bound every list repeats.
			bounds(prop(s, "limit"), 1, maxLimit)
			setDefault(prop(s, "limit"), defaultLimit)
			zero := 0.0
			prop(s, "offset").Minimum = &zero
			enum(prop(s, "kind"), graph.SourceStructured, graph.SourceFile, graph.SourceCorrection, graph.SourceRelationship, graph.SourceMerge)
		},
	}, func(ctx context.Context, call *Call, in SourcesIn) (SourcesOut, error) {
		p := page(in.Limit, in.Offset)
		srcs, total, err := d.Knowledge.ListSources(ctx, call.Caller(), knowledge.SourceQuery{Kind: deref(in.Kind), Page: p})
		if err != nil {
			return SourcesOut{}, err
		}
		return SourcesOut{Sources: mapSlice(srcs, sourceOut), Total: total, Limit: p.Limit, Offset: p.Offset}, nil
	})
}
