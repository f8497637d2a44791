package mcp

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cairnkg/cairn/knowledge"
)

// ToolsetMemoryImport holds save_memories, the batch save an importer of
// conversations uses. It is not among the default toolsets: the default
// tools/list must stay under MaxToolsListBytes, and an agent that saves
// as it goes needs save_memory only. Enable it with --toolsets
// default,memory_import.
const ToolsetMemoryImport Toolset = "memory_import"

// --- save_memories ---

// SaveMemoriesIn are the arguments of save_memories.
type SaveMemoriesIn struct {
	Memories []MemoryItemIn `json:"memories" jsonschema:"up to 1000, saved together or not at all"`
}

// SavedMemoryOut is what one item of save_memories stored.
type SavedMemoryOut struct {
	ID         string `json:"id"`
	Collection string `json:"collection"`
	CreatedAt  string `json:"created_at"`
	OccurredAt string `json:"occurred_at"`
}

// SaveMemoriesOut has one result per item, in the order of the items.
type SaveMemoriesOut struct {
	Results []SavedMemoryOut `json:"results"`
}

// completeLists keeps every result: a write's answer is never cut.
func (SaveMemoriesOut) completeLists() []string { return []string{"results"} }

func saveMemoriesTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:  "save_memories",
		title: "Save memories",
		description: "Save many memories in one call (importing a conversation: one item per turn, with occurred_at), " +
			"all or none; one result per item. Claims need save_memory.",
		toolset: ToolsetMemoryImport, ann: additiveNI, budget: BudgetList,
		shape: func(s *jsonschema.Schema) {
			items := prop(s, "memories")
			lo, hi := 1, knowledge.MaxMemoryBatch
			items.MinItems, items.MaxItems = &lo, &hi
			memoryShape(items.Items)
		},
	}, func(ctx context.Context, call *Call, in SaveMemoriesIn) (SaveMemoriesOut, error) {
		reqs := make([]knowledge.MemoryRequest, len(in.Memories))
		for i, m := range in.Memories {
			r, err := m.request(fmt.Sprintf("memories[%d].occurred_at", i))
			if err != nil {
				return SaveMemoriesOut{}, err
			}
			reqs[i] = r
		}
		saved, err := d.Knowledge.SaveMemories(ctx, call.Caller(), reqs)
		if err != nil {
			return SaveMemoriesOut{}, err
		}
		out := SaveMemoriesOut{Results: make([]SavedMemoryOut, len(saved))}
		for i, m := range saved {
			out.Results[i] = SavedMemoryOut{ID: m.ID, Collection: m.Collection, CreatedAt: ts(m.CreatedAt), OccurredAt: ts(m.OccurredAt)}
		}
		return out, nil
	})
}
