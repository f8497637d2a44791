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
	// Years asks for the years of every readable event too.
	Years *bool `json:"years,omitempty"`
}

// TimelineOut is a page of events, newest first.
type TimelineOut struct {
	Events []TimelineEventOut `json:"events"`
	Total  int                `json:"total"`
	Limit  int                `json:"limit"`
	Offset int                `json:"offset"`
	// Years (2026) are those (UTC) with events, newest first, of the whole
	// timeline (not only this page), when the input's years asked for
	// them; Months (2026-03) those of a year, for a period completion
	// (periodsKey).
	Years  []string `json:"years,omitempty"`
	Months []string `json:"months,omitempty"`
}

func listTimelineEventsTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:        "list_timeline_events",
		title:       "List timeline events",
		description: "List dated events, newest first; years: true also lists every year that has events.",
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
		q := knowledge.TimelineQuery{After: after, Before: before, Page: page(in.Limit, in.Offset), Years: deref(in.Years)}
		if year, ok := periodsOnly(ctx); ok {
			q.Years, q.MonthsOf, q.PeriodsOnly = true, year, true
		}
		q.EventType, q.SourceID, q.EntityID = deref(in.EventType), deref(in.SourceID), deref(in.EntityID)
		p, err := d.Knowledge.TimelinePage(ctx, call.Caller(), q)
		if err != nil {
			return TimelineOut{}, err
		}
		return TimelineOut{Events: mapSlice(p.Events, timelineEventOut), Total: p.Total, Limit: q.Page.Limit, Offset: q.Page.Offset, Years: p.Years, Months: p.Months}, nil
	})
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
