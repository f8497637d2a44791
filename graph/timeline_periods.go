package graph

import (
	"context"
	"fmt"
	"time"
)

// TimelinePeriodLister is implemented by a driver transaction that finds
// the periods of a user's timeline in its index of events by user and
// time, one seek a period, rather than reading every event.
type TimelinePeriodLister interface {
	// TimelineYears returns the years (UTC) in which the user has an
	// event of an entity of entityTypes (nil: of any entity), newest
	// first.
	TimelineYears(ctx context.Context, userID string, entityTypes []string) ([]int, error)
	// TimelineMonths returns the months (1 to 12, UTC) of year in which
	// the user has such an event, newest first.
	TimelineMonths(ctx context.Context, userID string, entityTypes []string, year int) ([]int, error)
}

// TimelineYears returns the years, in UTC, in which the user has timeline
// events of entities of entityTypes (nil: any; empty: none), newest first:
// the timeline's periods that a client can list and complete, from every
// event, not only the newest. A driver without TimelinePeriodLister is
// walked with WalkTimeline.
func (tx *Tx) TimelineYears(ctx context.Context, userID string, entityTypes []string) ([]int, error) {
	if entityTypes != nil && len(entityTypes) == 0 {
		return []int{}, nil
	}
	if l, ok := tx.DriverTx.(TimelinePeriodLister); ok {
		return l.TimelineYears(ctx, userID, entityTypes)
	}
	return WalkTimeline(ctx, tx.ListTimelineEvents, userID, entityTypes, 0)
}

// TimelineMonths returns the months (1 to 12, UTC) of year in which the
// user has timeline events of entities of entityTypes (nil: any; empty:
// none), newest first.
func (tx *Tx) TimelineMonths(ctx context.Context, userID string, entityTypes []string, year int) ([]int, error) {
	if entityTypes != nil && len(entityTypes) == 0 {
		return []int{}, nil
	}
	if l, ok := tx.DriverTx.(TimelinePeriodLister); ok {
		return l.TimelineMonths(ctx, userID, entityTypes, year)
	}
	return WalkTimeline(ctx, tx.ListTimelineEvents, userID, entityTypes, year)
}

// WalkTimeline finds TimelineYears (year 0) or TimelineMonths (of year)
// with list, a ListTimelineEvents: the newest event, then the newest
// before the first instant of its period, and so on, one call a period. A
// TimelinePeriodLister may fall back on it.
func WalkTimeline(ctx context.Context, list func(context.Context, TimelineFilter) ([]TimelineEvent, int, error), userID string, entityTypes []string, year int) ([]int, error) {
	out := []int{}
	f := TimelineFilter{UserID: userID, EntityTypes: entityTypes, Page: Page{Limit: 1}}
	if year != 0 {
		f.After = time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Microsecond)
		f.Before = time.Date(year+1, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	for {
		evs, _, err := list(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("graph: timeline periods: %w", err)
		}
		if len(evs) == 0 {
			return out, nil
		}
		t := evs[0].Time.UTC()
		if year == 0 {
			out = append(out, t.Year())
			f.Before = time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
		} else {
			out = append(out, int(t.Month()))
			f.Before = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		}
	}
}
