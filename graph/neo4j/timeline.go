package neo4j

import (
	"context"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
)

var (
	timelineClear = cypher.Must("timeline_clear")
	timelineAdd   = cypher.Must("timeline_add")
	timelineList  = cypher.Must("timeline_list")
)

// ReplaceTimelineEvents implements graph.DriverTx: timeline_clear, then
// timeline_add with the new events in one statement.
func (t *tx) ReplaceTimelineEvents(ctx context.Context, userID, entityID string, events []graph.TimelineEvent) error {
	if err := t.enter(ctx, userID); err != nil {
		return err
	}
	if _, err := t.run(ctx, timelineClear, cypher.Fill{}, map[string]any{"userId": userID, "entityId": entityID}); err != nil {
		return err
	}
	if len(events) == 0 {
		return nil
	}
	list, err := timelineEventParams(events)
	if err != nil {
		return err
	}
	_, err = t.run(ctx, timelineAdd, cypher.Fill{}, map[string]any{"userId": userID, "entityId": entityID, "events": list})
	return err
}

// timelineEventParams are the $events of timeline_add.
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
	rows, err := t.run(ctx, timelineList, cypher.Fill{}, map[string]any{
		"userId": f.UserID, "eventType": nullString(f.EventType), "sourceId": nullString(f.SourceID),
		"entityId": nullString(f.EntityID), "after": nullTime(f.After), "before": nullTime(f.Before),
		"entityTypes": nullList(f.EntityTypes),
		"offset":      int64(max(f.Page.Offset, 0)), "limit": int64(limitOr(f.Page, 100)),
	})
	if err != nil {
		return nil, 0, err
	}
	return pageRows(rows, toTimelineEvent)
}
