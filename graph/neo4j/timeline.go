package neo4j

import (
	"context"
	"fmt"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
)

var (
	timelinesReplace = cypher.Must("timelines_replace")
	timelineList     = cypher.Must("timeline_list")
	timelineListAll  = cypher.Must("timeline_list_all")
	timelineYears    = cypher.Must("timeline_years")
	timelineMonths   = cypher.Must("timeline_months")
)

// ReplaceTimelineEvents implements graph.DriverTx: a batch of one.
func (t *tx) ReplaceTimelineEvents(ctx context.Context, userID, entityID string, events []graph.TimelineEvent) error {
	return t.ReplaceEntityTimelines(ctx, userID, []graph.EntityTimeline{{EntityID: entityID, Events: events}})
}

// ReplaceEntityTimelines implements graph.DriverTx with one
// timelines_replace, which drops the entities' events and creates the new
// ones.
func (t *tx) ReplaceEntityTimelines(ctx context.Context, userID string, timelines []graph.EntityTimeline) error {
	if err := t.enter(ctx, userID); err != nil {
		return err
	}
	if len(timelines) == 0 {
		return nil
	}
	rows := make([]any, len(timelines))
	for i, tl := range timelines {
		events, err := timelineEventParams(tl.Events)
		if err != nil {
			return err
		}
		rows[i] = map[string]any{"entity_id": tl.EntityID, "events": events}
	}
	_, err := t.run(ctx, timelinesReplace, cypher.Fill{}, map[string]any{"userId": userID, "rows": rows})
	return err
}

// timelineEventParams are the events of a row of timelines_replace.
func timelineEventParams(events []graph.TimelineEvent) ([]any, error) {
	list := make([]any, len(events))
	for i, ev := range events {
		props, err := encodeJSON(ev.Properties)
		if err != nil {
			return nil, err
		}
		list[i] = map[string]any{
			"id": ev.ID, "event_type": ev.EventType, "timestamp": ev.Timestamp, "time": ev.Time.UTC(),
			"source_id": ev.SourceID, "properties_json": props,
		}
	}
	return list, nil
}

func (t *tx) ListTimelineEvents(ctx context.Context, f graph.TimelineFilter) ([]graph.TimelineEvent, int, error) {
	if err := t.enter(ctx, f.UserID); err != nil {
		return nil, 0, err
	}
	if f.EntityTypes != nil && len(f.EntityTypes) == 0 {
		return []graph.TimelineEvent{}, 0, nil
	}
	page := map[string]any{"userId": f.UserID, "offset": int64(max(f.Page.Offset, 0)), "limit": int64(limitOr(f.Page, 100))}
	var rows []map[string]any
	var err error
	if f.EventType == "" && f.SourceID == "" && f.EntityID == "" && f.After.IsZero() && f.Before.IsZero() && f.EntityTypes == nil {
		// The user's whole timeline: its statement has no filter to
		// evaluate for every event.
		rows, err = t.run(ctx, timelineListAll, cypher.Fill{}, page)
	} else {
		rows, err = t.run(ctx, timelineList, cypher.Fill{}, map[string]any{
			"userId": f.UserID, "eventType": nullString(f.EventType), "sourceId": nullString(f.SourceID),
			"entityId": nullString(f.EntityID), "after": nullTime(f.After), "before": nullTime(f.Before),
			"entityTypes": nullList(f.EntityTypes), "offset": page["offset"], "limit": page["limit"],
		})
	}
	if err != nil {
		return nil, 0, err
	}
	return pageRows(rows, toTimelineEvent)
}

// timelineYearsMaxSpan bounds the years timeline_years seeks in one
// statement: a timeline that spans more (an event dated in the year 900,
// say) is walked one statement a year.
const timelineYearsMaxSpan = 500

// TimelineYears implements graph.TimelinePeriodLister with
// timeline_years: one statement, a seek at each end of the user's events
// by time and one a year between them.
func (t *tx) TimelineYears(ctx context.Context, userID string, entityTypes []string) ([]int, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	if entityTypes != nil && len(entityTypes) == 0 {
		return []int{}, nil
	}
	rows, err := t.run(ctx, timelineYears, cypher.Fill{}, map[string]any{
		"userId": userID, "entityTypes": nullList(entityTypes), "maxSpan": int64(timelineYearsMaxSpan),
	})
	if err != nil || len(rows) == 0 {
		return []int{}, err
	}
	r := record{m: rows[0]}
	newest, oldest := r.int("newest"), r.int("oldest")
	if r.err != nil {
		return nil, r.err
	}
	if newest-oldest >= timelineYearsMaxSpan {
		// Too long a span for one statement: one a year.
		return graph.WalkTimeline(ctx, t.ListTimelineEvents, userID, entityTypes, 0)
	}
	return periodList(rows[0]["years"], timelineYears)
}

// TimelineMonths implements graph.TimelinePeriodLister with
// timeline_months: one statement, a seek a month of the year.
func (t *tx) TimelineMonths(ctx context.Context, userID string, entityTypes []string, year int) ([]int, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	if entityTypes != nil && len(entityTypes) == 0 {
		return []int{}, nil
	}
	rows, err := t.run(ctx, timelineMonths, cypher.Fill{}, map[string]any{
		"userId": userID, "entityTypes": nullList(entityTypes), "year": int64(year),
	})
	if err != nil {
		return nil, err
	}
	months := make([]any, len(rows))
	for i, m := range rows {
		months[i] = m["month"]
	}
	return periodList(months, timelineMonths)
}

// periodList reads a list of years or months that st returned.
func periodList(v any, st cypher.Statement) ([]int, error) {
	raw, ok := v.([]any)
	if !ok && v != nil {
		return nil, fmt.Errorf("graph/neo4j: %s returned %v (%T), not a list", st.Name(), v, v)
	}
	out := make([]int, 0, len(raw))
	for _, p := range raw {
		n, ok := p.(int64)
		if !ok {
			return nil, fmt.Errorf("graph/neo4j: %s returned a period %v (%T)", st.Name(), p, p)
		}
		out = append(out, int(n))
	}
	return out, nil
}
