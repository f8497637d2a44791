package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/jsoncodec"
)

func (t *tx) ReplaceTimelineEvents(ctx context.Context, userID, entityID string, events []graph.TimelineEvent) error {
	return t.ReplaceEntityTimelines(ctx, userID, []graph.EntityTimeline{{EntityID: entityID, Events: events}})
}

// clearTimelines, followed by the entity ids' placeholders and ")",
// deletes their timeline events. "+user_id" makes SQLite find them through
// timeline_events_entity, id by id: with user_id usable it walked every
// event of the user through timeline_events_source, so that every store
// paid for the user's whole timeline (30 ms a call of 100 entities at
// 60,000 events; TestEntityQueriesSeekIDs).
const clearTimelines = `DELETE FROM timeline_events WHERE +user_id = ? AND entity_id IN (`

// ReplaceEntityTimelines implements graph.DriverTx: one delete and one
// multi-row insert per chunk of entities.
func (t *tx) ReplaceEntityTimelines(ctx context.Context, userID string, timelines []graph.EntityTimeline) error {
	err := chunks(len(timelines), 500, func(start, end int) error {
		args := []any{userID}
		for _, tl := range timelines[start:end] {
			args = append(args, tl.EntityID)
		}
		_, err := t.exec(ctx, clearTimelines+qmarks(end-start)+`)`, args...)
		return wrap("clear timeline events", err)
	})
	if err != nil {
		return err
	}
	const cols = 8
	var rows []any
	for _, tl := range timelines {
		for _, ev := range tl.Events {
			props, err := jsoncodec.Encode(orEmpty(ev.Properties))
			if err != nil {
				return err
			}
			rows = append(rows, ev.ID, userID, tl.EntityID, ev.EventType, ev.Timestamp, micros(ev.Time), ev.SourceID, props)
		}
	}
	return chunks(len(rows)/cols, rowChunk(cols), func(start, end int) error {
		_, err := t.exec(ctx, `INSERT INTO timeline_events
			(id, user_id, entity_id, event_type, event_timestamp, event_time, source_id, properties)
			VALUES `+valueRows(end-start, cols), rows[start*cols:end*cols]...)
		return wrap("insert timeline events", err)
	})
}

// timelineCond is the condition on timeline_events t that f selects,
// with its arguments.
func timelineCond(f graph.TimelineFilter) (string, []any) {
	where := []string{"t.user_id = $1"}
	if f.EntityID != "" {
		// One entity's events through timeline_events_entity, then
		// sorted: SQLite would rather walk the user's whole timeline in
		// time order (timeline_events_user_time) and test each event.
		where[0] = "+t.user_id = $1"
	}
	args := []any{f.UserID}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if f.EventType != "" {
		add("t.event_type = $%d", f.EventType)
	}
	if f.SourceID != "" {
		add("t.source_id = $%d", f.SourceID)
	}
	if f.EntityID != "" {
		add("t.entity_id = $%d", f.EntityID)
	}
	if !f.After.IsZero() {
		add("t.event_time > $%d", micros(f.After))
	}
	if !f.Before.IsZero() {
		add("t.event_time < $%d", micros(f.Before))
	}
	if f.EntityTypes != nil {
		where = append(where, "t.entity_id IN (SELECT id FROM entities WHERE user_id = $1 AND entity_type IN ("+
			placeholders(len(args)+1, len(f.EntityTypes))+"))")
		args = append(args, anySlice(f.EntityTypes)...)
	}
	return strings.Join(where, " AND "), args
}

func (t *tx) ListTimelineEvents(ctx context.Context, f graph.TimelineFilter) ([]graph.TimelineEvent, int, error) {
	if f.EntityTypes != nil && len(f.EntityTypes) == 0 {
		return []graph.TimelineEvent{}, 0, nil
	}
	cond, args := timelineCond(f)
	var total int
	if err := t.queryRow(ctx, `SELECT count(*) FROM timeline_events t WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, wrap("count timeline events", err)
	}
	args = append(args, limitOr(f.Page, 100), f.Page.Offset)
	rows, err := t.query(ctx, `SELECT t.id, t.user_id, t.entity_id, t.event_type, t.event_timestamp, t.event_time,
		t.source_id, t.properties FROM timeline_events t WHERE `+cond+`
		ORDER BY t.event_time DESC, t.id ASC LIMIT $`+fmt.Sprint(len(args)-1)+` OFFSET $`+fmt.Sprint(len(args)), args...)
	if err != nil {
		return nil, 0, wrap("list timeline events", err)
	}
	out := []graph.TimelineEvent{}
	err = eachRow(rows, func(r *sql.Rows) error {
		var ev graph.TimelineEvent
		var at int64
		var props string
		if err := r.Scan(&ev.ID, &ev.UserID, &ev.EntityID, &ev.EventType, &ev.Timestamp, &at, &ev.SourceID, &props); err != nil {
			return err
		}
		ev.Time = fromMicros(at)
		var err error
		ev.Properties, err = jsoncodec.Map(props)
		out = append(out, ev)
		return err
	})
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
// instant of its period, and so on, each a seek in
// timeline_events_user_time (with entity types, a walk down it to the
// first event of such an entity).
func (t *tx) timelinePeriods(ctx context.Context, userID string, entityTypes []string, year int) ([]int, error) {
	if entityTypes != nil && len(entityTypes) == 0 {
		return []int{}, nil
	}
	f := graph.TimelineFilter{UserID: userID, EntityTypes: entityTypes}
	unit := "start of year"
	if year != 0 {
		unit = "start of month"
		f.After = time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Microsecond)
		f.Before = time.Date(year+1, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	cond, args := timelineCond(f)
	newest := func(before string) string {
		return `(SELECT t.event_time FROM timeline_events t WHERE ` + cond + before + ` ORDER BY t.event_time DESC LIMIT 1)`
	}
	rows, err := t.query(ctx, `WITH RECURSIVE p(at) AS (
		SELECT `+newest("")+`
		UNION ALL
		SELECT `+newest(` AND t.event_time < CAST(strftime('%s', p.at / 1000000.0, 'unixepoch', '`+unit+`') AS INTEGER) * 1000000`)+`
		FROM p WHERE p.at IS NOT NULL
	) SELECT at FROM p WHERE at IS NOT NULL`, args...)
	if err != nil {
		return nil, wrap("timeline periods", err)
	}
	out := []int{}
	err = eachRow(rows, func(r *sql.Rows) error {
		var at int64
		if err := r.Scan(&at); err != nil {
			return err
		}
		if tm := fromMicros(at).UTC(); year == 0 {
			out = append(out, tm.Year())
		} else {
			out = append(out, int(tm.Month()))
		}
		return nil
	})
	return out, wrap("timeline periods", err)
}
