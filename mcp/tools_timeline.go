package mcp

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cairnkg/cairn/knowledge"
)

// TimelineIn are the arguments of list_timeline_events.
type TimelineIn struct {
	EventType  *string `json:"event_type,omitempty" jsonschema:"e.g. InvoiceIssued"`
	AfterDate  *string `json:"after_date,omitempty" jsonschema:"ISO 8601"`
	BeforeDate *string `json:"before_date,omitempty" jsonschema:"ISO 8601"`
	SourceID   *string `json:"source_id,omitempty"`
	EntityID   *string `json:"entity_id,omitempty"`
	Limit      *int    `json:"limit,omitempty"`
	Offset     *int    `json:"offset,omitempty"`
}

// TimelineOut is a page of events, newest first.
type TimelineOut struct {
	Events []TimelineEventOut `json:"events"`
	Total  int                `json:"total"`
	Limit  int                `json:"limit"`
	Offset int                `json:"offset"`
}

func listTimelineEventsTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:        "list_timeline_events",
		title:       "List timeline events",
		description: "List dated events (an invoice issued, a task due) derived from entities' date fields, newest first.",
		toolset:     ToolsetTimeline, ann: readOnly, budget: BudgetList,
		shape: func(s *jsonschema.Schema) {
			pageShape(s)
			for _, name := range []string{"after_date", "before_date"} {
				maxLen(prop(s, name), 64)
			}
			for _, name := range []string{"event_type", "source_id", "entity_id"} {
				maxLen(prop(s, name), idLimit)
			}
		},
	}, func(ctx context.Context, call *Call, in TimelineIn) (TimelineOut, error) {
		after, err := optionalTime("after_date", in.AfterDate)
		if err != nil {
			return TimelineOut{}, err
		}
		before, err := optionalTime("before_date", in.BeforeDate)
		if err != nil {
			return TimelineOut{}, err
		}
		q := knowledge.TimelineQuery{After: after, Before: before, Page: page(in.Limit, in.Offset)}
		q.EventType, q.SourceID, q.EntityID = deref(in.EventType), deref(in.SourceID), deref(in.EntityID)
		events, total, err := d.Knowledge.Timeline(ctx, call.Caller(), q)
		if err != nil {
			return TimelineOut{}, err
		}
		return TimelineOut{Events: mapSlice(events, timelineEventOut), Total: total, Limit: q.Page.Limit, Offset: q.Page.Offset}, nil
	})
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
