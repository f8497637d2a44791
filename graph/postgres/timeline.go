package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/jsoncodec"
)

func (t *tx) ReplaceTimelineEvents(ctx context.Context, userID, entityID string, events []graph.TimelineEvent) error {
	return t.ReplaceEntityTimelines(ctx, userID, []graph.EntityTimeline{{EntityID: entityID, Events: events}})
}

// ReplaceEntityTimelines implements graph.DriverTx: one delete and one
// insert from arrays.
func (t *tx) ReplaceEntityTimelines(ctx context.Context, userID string, timelines []graph.EntityTimeline) error {
	if err := t.enter(ctx, userID); err != nil {
		return err
	}
	if len(timelines) == 0 {
		return nil
	}
	entityIDs := make([]string, len(timelines))
	var ids, owners, types, stamps, sources, props []string
	var times []time.Time
	for i, tl := range timelines {
		entityIDs[i] = tl.EntityID
		for _, ev := range tl.Events {
			p, err := jsoncodec.Encode(orEmpty(ev.Properties))
			if err != nil {
				return err
			}
			ids, owners, types, stamps = append(ids, ev.ID), append(owners, tl.EntityID), append(types, ev.EventType), append(stamps, ev.Timestamp)
			times, sources, props = append(times, ev.Time), append(sources, ev.SourceID), append(props, p)
		}
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM timeline_events WHERE user_id = $1 AND entity_id = ANY($2)`, userID, entityIDs); err != nil {
		return wrap("clear timeline events", err)
	}
	if len(ids) == 0 {
		return nil
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO timeline_events
		(id, user_id, entity_id, event_type, event_timestamp, event_time, source_id, properties)
		SELECT id, $1, e, typ, stamp, at, src, props::jsonb
		FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::text[], $8::text[])
			AS u(id, e, typ, stamp, at, src, props)`,
		userID, ids, owners, types, stamps, times, sources, props)
	return wrap("insert timeline events", err)
}

func (t *tx) ListTimelineEvents(ctx context.Context, f graph.TimelineFilter) ([]graph.TimelineEvent, int, error) {
	if err := t.enter(ctx, f.UserID); err != nil {
		return nil, 0, err
	}
	if f.EntityTypes != nil && len(f.EntityTypes) == 0 {
		return []graph.TimelineEvent{}, 0, nil
	}
	a := args{}
	where := []string{"t.user_id = " + a.add(f.UserID)}
	if f.EventType != "" {
		where = append(where, "t.event_type = "+a.add(f.EventType))
	}
	if f.SourceID != "" {
		where = append(where, "t.source_id = "+a.add(f.SourceID))
	}
	if f.EntityID != "" {
		where = append(where, "t.entity_id = "+a.add(f.EntityID))
	}
	if !f.After.IsZero() {
		where = append(where, "t.event_time > "+a.add(f.After))
	}
	if !f.Before.IsZero() {
		where = append(where, "t.event_time < "+a.add(f.Before))
	}
	if f.EntityTypes != nil {
		where = append(where, "t.entity_id IN (SELECT id FROM entities WHERE user_id = $1 AND entity_type = ANY("+a.add(f.EntityTypes)+"))")
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := t.tx.QueryRow(ctx, `SELECT count(*) FROM timeline_events t WHERE `+cond, a...).Scan(&total); err != nil {
		return nil, 0, wrap("count timeline events", err)
	}
	page := `LIMIT ` + a.add(limitOr(f.Page, 100)) + ` OFFSET ` + a.add(f.Page.Offset)
	out, err := query(ctx, t, func(r rowScanner) (graph.TimelineEvent, error) {
		var ev graph.TimelineEvent
		var props string
		if err := r.Scan(&ev.ID, &ev.UserID, &ev.EntityID, &ev.EventType, &ev.Timestamp, &ev.Time, &ev.SourceID, &props); err != nil {
			return ev, err
		}
		ev.Time = ev.Time.UTC()
		var err error
		ev.Properties, err = jsoncodec.Map(props)
		return ev, err
	}, `SELECT t.id, t.user_id, t.entity_id, t.event_type, t.event_timestamp, t.event_time,
		t.source_id, t.properties::text FROM timeline_events t WHERE `+cond+`
		ORDER BY t.event_time DESC, t.id ASC `+page, a...)
	return out, total, wrap("list timeline events", err)
}

// TimelineYears implements graph.TimelinePeriodLister (timelinePeriods).
func (t *tx) TimelineYears(ctx context.Context, userID string, entityTypes []string) ([]int, error) {
	return t.timelinePeriods(ctx, userID, entityTypes, 0)
}

// TimelineMonths implements graph.TimelinePeriodLister (timelinePeriods).
func (t *tx) TimelineMonths(ctx context.Context, userID string, entityTypes []string, year int) ([]int, error) {
	return t.timelinePeriods(ctx, userID, entityTypes, year)
}

// timelinePeriods finds the years (year 0) or the months of year with one
// recursive query: the newest event, then the newest before the first
// instant (UTC) of its period, and so on, each a seek in
// timeline_events_user_time (with entity types, a walk down it to the
// first event of such an entity).
func (t *tx) timelinePeriods(ctx context.Context, userID string, entityTypes []string, year int) ([]int, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	if entityTypes != nil && len(entityTypes) == 0 {
		return []int{}, nil
	}
	a := args{}
	cond := "t.user_id = " + a.add(userID)
	if entityTypes != nil {
		cond += " AND t.entity_id IN (SELECT id FROM entities WHERE user_id = $1 AND entity_type = ANY(" + a.add(entityTypes) + "))"
	}
	unit := "year"
	if year != 0 {
		unit = "month"
		cond += " AND t.event_time >= " + a.add(time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC)) +
			" AND t.event_time < " + a.add(time.Date(year+1, 1, 1, 0, 0, 0, 0, time.UTC))
	}
	newest := func(before string) string {
		return `(SELECT t.event_time FROM timeline_events t WHERE ` + cond + before + ` ORDER BY t.event_time DESC LIMIT 1)`
	}
	out, err := query(ctx, t, func(r rowScanner) (int, error) {
		var at time.Time
		err := r.Scan(&at)
		if at = at.UTC(); year == 0 {
			return at.Year(), err
		}
		return int(at.Month()), err
	}, `WITH RECURSIVE p(at) AS (
		SELECT `+newest("")+`
		UNION ALL
		SELECT `+newest(` AND t.event_time < date_trunc('`+unit+`', p.at, 'UTC')`)+`
		FROM p WHERE p.at IS NOT NULL
	) SELECT at FROM p WHERE at IS NOT NULL`, a...)
	if out == nil && err == nil {
		out = []int{}
	}
	return out, wrap("timeline periods", err)
}
