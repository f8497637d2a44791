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
	Counts    map[string]int `json:"counts" jsonschema:"per kind: memories, contradictions (raised by its claims: closed, or for erase removed), and for erase retracted_memories and versions (earlier content)"`
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

// ToolsetForget holds the tools that retract and erase graph data. It is
// not a default toolset: an operator who lets agents forget entities and
// sources turns it on (--toolsets), and consent must still allow delete;
// its definitions would also push the default tools/list past
// MaxToolsListBytes.
const ToolsetForget Toolset = "forget"

// --- erase ---

// EraseIn are the arguments of erase.
type EraseIn struct {
	Kind   string   `json:"kind" jsonschema:"entity or source"`
	IDs    []string `json:"ids" jsonschema:"entity or source ids (1 to 100)"`
	Reason *string  `json:"reason,omitempty"`
	DryRun *bool    `json:"dry_run,omitempty" jsonschema:"only count what would go"`
}

// EraseOut says what was erased.
type EraseOut struct {
	Kind       string         `json:"kind"`
	IDs        []string       `json:"ids"`
	Entities   []string       `json:"entities" jsonschema:"every entity erased (with merged duplicates, and a source's entities left with nothing)"`
	Recomputed []string       `json:"recomputed" jsonschema:"entities that lost observations and were computed again"`
	Counts     map[string]int `json:"counts" jsonschema:"rows removed per kind"`
	At         string         `json:"at"`
	DryRun     bool           `json:"dry_run,omitempty"`
}

func eraseTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:  "erase",
		title: "Erase entities or sources",
		description: "Remove for good, all or none, an entity with everything derived from it, or a source with everything it produced " +
			"(its entities are computed again); a tombstone remains. For \"forget this\" and data-protection requests.",
		toolset: ToolsetForget, ann: destroys, budget: BudgetList,
		shape: func(s *jsonschema.Schema) {
			enum(prop(s, "kind"), string(knowledge.EraseEntity), string(knowledge.EraseSource))
			ids := prop(s, "ids")
			hi := knowledge.MaxEraseBatch
			ids.MaxItems = &hi
			maxLen(ids.Items, idLimit)
			maxLen(prop(s, "reason"), vector.MaxReasonLen)
		},
	}, func(ctx context.Context, call *Call, in EraseIn) (EraseOut, error) {
		res, err := d.Knowledge.Erase(ctx, call.Caller(), knowledge.EraseRequest{
			Kind: knowledge.EraseKind(in.Kind), IDs: in.IDs, Reason: deref(in.Reason), DryRun: in.DryRun != nil && *in.DryRun,
		})
		if err != nil {
			return EraseOut{}, err
		}
		return EraseOut{
			Kind: string(res.Kind), IDs: orNone(res.IDs), Entities: orNone(res.Entities), Recomputed: orNone(res.Recomputed),
			Counts: res.Counts, At: ts(res.At), DryRun: res.DryRun,
		}, nil
	})
}

// --- retract ---

// RetractIn are the arguments of retract.
type RetractIn struct {
	ObservationIDs []string `json:"observation_ids,omitempty" jsonschema:"observations that stop counting"`
	SourceID       *string  `json:"source_id,omitempty" jsonschema:"every observation of this source stops counting"`
	// RelationshipID goes alone.
	RelationshipID             *string  `json:"relationship_id,omitempty" jsonschema:"alone: this relationship's observations (relationship_observation_ids, or all) stop counting"`
	RelationshipObservationIDs []string `json:"relationship_observation_ids,omitempty"`
	Reason                     *string  `json:"reason,omitempty"`
	Undo                       *bool    `json:"undo,omitempty" jsonschema:"make retracted observations count again"`
}

// RetractOut says what was retracted.
type RetractOut struct {
	ObservationIDs []string `json:"observation_ids" jsonschema:"those that changed (retracted already, or not retracted for undo, are left out)"`
	Entities       []string `json:"entities" jsonschema:"entities computed again"`
	Relationships  []string `json:"relationships,omitempty" jsonschema:"relationships reduced again"`
	Contradictions []string `json:"contradictions,omitempty" jsonschema:"contradictions a side of which was retracted, now resolved (resolution retracted); for undo, open again"`
	At             string   `json:"at"`
	Undo           bool     `json:"undo,omitempty"`
}

func retractTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:  "retract",
		title: "Retract observations",
		description: "Make observations (or all of a source's, or a relationship's) stop counting, all or none: \"that was wrong\". " +
			"They stay listed, with who retracted them and why; each field takes its next value. undo reverses it.",
		toolset: ToolsetForget, ann: destroys, budget: BudgetList,
		shape: func(s *jsonschema.Schema) {
			ids := prop(s, "observation_ids")
			hi := knowledge.MaxEraseBatch
			ids.MaxItems = &hi
			maxLen(ids.Items, idLimit)
			maxLen(prop(s, "source_id"), idLimit)
			maxLen(prop(s, "relationship_id"), idLimit)
			rids := prop(s, "relationship_observation_ids")
			rids.MaxItems = &hi
			maxLen(rids.Items, idLimit)
			maxLen(prop(s, "reason"), vector.MaxReasonLen)
		},
	}, func(ctx context.Context, call *Call, in RetractIn) (RetractOut, error) {
		res, err := d.Knowledge.Retract(ctx, call.Caller(), knowledge.RetractRequest{
			ObservationIDs: in.ObservationIDs, SourceID: deref(in.SourceID), Reason: deref(in.Reason), Undo: in.Undo != nil && *in.Undo,
			RelationshipID: deref(in.RelationshipID), RelationshipObservationIDs: in.RelationshipObservationIDs,
		})
		if err != nil {
			return RetractOut{}, err
		}
		return RetractOut{ObservationIDs: orNone(res.ObservationIDs), Entities: orNone(res.Entities), Relationships: res.Relationships,
			Contradictions: res.Contradictions, At: ts(res.At), Undo: res.Undo}, nil
	})
}
