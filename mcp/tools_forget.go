package mcp

import (
	"context"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/vector"
)

// --- update_memory ---

// UpdateMemoryIn are the arguments of update_memory; a field left out is
// kept.
type UpdateMemoryIn struct {
	MemoryID string          `json:"memory_id"`
	Text     *string         `json:"text,omitempty"`
	Title    *string         `json:"title,omitempty"`
	Tags     *[]string       `json:"tags,omitempty"`
	Metadata *map[string]any `json:"metadata,omitempty"`
	// OccurredAt moves when the remembered thing happened (RFC 3339).
	OccurredAt *string `json:"occurred_at,omitempty"`
	Reason     *string `json:"reason,omitempty"`
}

// UpdateMemoryOut says what was updated; the content is what the caller
// sent (search_memory reads it back).
type UpdateMemoryOut struct {
	ID         string `json:"id"`
	Collection string `json:"collection"`
	CreatedAt  string `json:"created_at"`
	UpdatedAt  string `json:"updated_at"`
	OccurredAt string `json:"occurred_at"`
}

func updateMemoryTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:        "update_memory",
		title:       "Update memory",
		description: "Edit a memory: text, title, tags, metadata or occurred_at.",
		toolset:     ToolsetMemories, ann: additiveNI, budget: BudgetList,
		shape: func(s *jsonschema.Schema) {
			maxLen(prop(s, "memory_id"), idLimit)
			maxLen(prop(s, "text"), memoryTextLimit)
			maxLen(prop(s, "title"), memoryTitleLimit)
			maxLen(prop(s, "reason"), vector.MaxReasonLen)
			tagsShape(prop(s, "tags"))
		},
	}, func(ctx context.Context, call *Call, in UpdateMemoryIn) (UpdateMemoryOut, error) {
		var occurred *time.Time
		if in.OccurredAt != nil {
			at, err := knowledge.ParseTime("occurred_at", *in.OccurredAt)
			if err != nil {
				return UpdateMemoryOut{}, err
			}
			occurred = &at
		}
		m, err := d.Knowledge.UpdateMemory(ctx, call.Caller(), knowledge.MemoryUpdate{
			ID: in.MemoryID, Text: in.Text, Title: in.Title, Tags: in.Tags, Metadata: in.Metadata, OccurredAt: occurred, Reason: deref(in.Reason),
		})
		if err != nil {
			return UpdateMemoryOut{}, err
		}
		return UpdateMemoryOut{ID: m.ID, Collection: m.Collection, CreatedAt: ts(m.CreatedAt), UpdatedAt: ts(m.UpdatedAt),
			OccurredAt: ts(m.OccurredAt)}, nil
	})
}

// --- delete_memory ---

// DeleteMemoryIn are the arguments of delete_memory.
type DeleteMemoryIn struct {
	MemoryIDs []string `json:"memory_ids"`
	Mode      string   `json:"mode"`
	Reason    *string  `json:"reason,omitempty"`
}

// DeleteMemoryOut says what was forgotten.
type DeleteMemoryOut struct {
	Mode      string         `json:"mode"`
	MemoryIDs []string       `json:"memory_ids"`
	Counts    map[string]int `json:"counts" jsonschema:"per kind: memories, and for erase retracted_memories, versions (earlier content) and contradictions (raised by its claims)"`
	At        string         `json:"at"`
}

func deleteMemoryTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:        "delete_memory",
		title:       "Delete memory",
		description: "Forget memories, all or none: retract (hidden, reason kept) or erase (removed for good).",
		toolset:     ToolsetMemories, ann: destroys, budget: BudgetList,
		shape: func(s *jsonschema.Schema) {
			ids := prop(s, "memory_ids")
			hi := knowledge.MaxForgetBatch
			ids.MaxItems = &hi
			maxLen(ids.Items, idLimit)
			enum(prop(s, "mode"), string(knowledge.ForgetRetract), string(knowledge.ForgetErase))
			maxLen(prop(s, "reason"), vector.MaxReasonLen)
		},
	}, func(ctx context.Context, call *Call, in DeleteMemoryIn) (DeleteMemoryOut, error) {
		res, err := d.Knowledge.DeleteMemories(ctx, call.Caller(), knowledge.MemoryDeletion{
			IDs: in.MemoryIDs, Mode: knowledge.ForgetMode(in.Mode), Reason: deref(in.Reason),
		})
		if err != nil {
			return DeleteMemoryOut{}, err
		}
		return DeleteMemoryOut{Mode: string(res.Mode), MemoryIDs: orNone(res.IDs), Counts: res.Counts, At: ts(res.At)}, nil
	})
}
