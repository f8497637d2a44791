package graphtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
)

// newEvent returns a timeline event of user at base plus sec seconds.
func newEvent(user, id, entityID, eventType, sourceID string, sec int) graph.TimelineEvent {
	tm := at(epoch, sec)
	return graph.TimelineEvent{
		ID: id, UserID: user, EntityID: entityID, EventType: eventType,
		Timestamp: tm.Format(time.RFC3339Nano), Time: tm, SourceID: sourceID,
		Properties: map[string]any{"field": eventType, "n": sec},
	}
}

func replaceEvents(t *testing.T, s *graph.Store, user, entityID string, events ...graph.TimelineEvent) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx *graph.Tx) error {
		if err := tx.ReplaceTimelineEvents(ctx, user, entityID, events); err != nil {
			return fmt.Errorf("replace timeline events of %s: %w", entityID, err)
		}
		return nil
	})
}

func testTimeline(t *testing.T, newStore Harness) {
	s := newStore(t)
	const meeting, invoice = "ent_alice_meeting", "ent_alice_invoice"
	const src1, src2 = "src_alice_1", "src_alice_2"
	putSources(t, s, newSource(alice, src1, epoch), newSource(alice, src2, epoch))
	putEntities(t, s, newEntity(alice, meeting, "meeting", epoch), newEntity(alice, invoice, "invoice", epoch))
	events := map[string]graph.TimelineEvent{}
	for _, ev := range []graph.TimelineEvent{
		newEvent(alice, "tle_alice_1", meeting, "start", src1, 10),
		newEvent(alice, "tle_alice_2", meeting, "end", src1, 20),
		newEvent(alice, "tle_alice_3", meeting, "deadline", src2, 10),
		newEvent(alice, "tle_alice_4", invoice, "due", src2, 15),
		newEvent(alice, "tle_alice_5", invoice, "paid", src1, 30),
		newEvent(alice, "tle_alice_6", meeting, "moved", src2, 40),
	} {
		events[ev.ID] = ev
	}
	replaceEvents(t, s, alice, meeting, events["tle_alice_1"], events["tle_alice_2"], events["tle_alice_3"])
	replaceEvents(t, s, alice, invoice, events["tle_alice_4"], events["tle_alice_5"])
	// Another user's event, between Alice's: no list of hers holds it, nor
	// counts it.
	putSources(t, s, newSource(bob, "src_bob_1", epoch))
	putEntities(t, s, newEntity(bob, "ent_bob_meeting", "meeting", epoch))
	replaceEvents(t, s, bob, "ent_bob_meeting", newEvent(bob, "tle_bob_1", "ent_bob_meeting", "start", "src_bob_1", 25))

	check := func(t *testing.T, f graph.TimelineFilter, wantIDs []string, wantTotal int) {
		t.Helper()
		f.UserID = alice
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) (page[graph.TimelineEvent], error) {
			return listed(tx.ListTimelineEvents(ctx, f))
		})
		want := make([]graph.TimelineEvent, len(wantIDs))
		for i, id := range wantIDs {
			want[i] = events[id]
			want[i].Properties = jsonValue(t, want[i].Properties)
		}
		diff(t, "ListTimelineEvents", want, got.Rows)
		if got.Total != wantTotal {
			t.Errorf("ListTimelineEvents total = %d, want %d", got.Total, wantTotal)
		}
	}
	ids := func(ns ...int) []string {
		out := make([]string, len(ns))
		for i, n := range ns {
			out[i] = fmt.Sprintf("tle_alice_%d", n)
		}
		return out
	}

	t.Run("List", func(t *testing.T) {
		tests := []struct {
			name      string
			filter    graph.TimelineFilter
			want      []string
			wantTotal int
		}{
			{"All", graph.TimelineFilter{}, ids(5, 2, 4, 1, 3), 5},
			{"EventType", graph.TimelineFilter{EventType: "due"}, ids(4), 1},
			{"SourceID", graph.TimelineFilter{SourceID: src2}, ids(4, 3), 2},
			{"EntityID", graph.TimelineFilter{EntityID: meeting}, ids(2, 1, 3), 3},
			{"AfterIsExclusive", graph.TimelineFilter{After: at(epoch, 10)}, ids(5, 2, 4), 3},
			{"BeforeIsExclusive", graph.TimelineFilter{Before: at(epoch, 20)}, ids(4, 1, 3), 3},
			{"Between", graph.TimelineFilter{After: at(epoch, 10), Before: at(epoch, 30)}, ids(2, 4), 2},
			{"EntityTypes", graph.TimelineFilter{EntityTypes: []string{"invoice"}}, ids(5, 4), 2},
			{"EntityTypesAll", graph.TimelineFilter{EntityTypes: []string{"meeting", "invoice"}}, ids(5, 2, 4, 1, 3), 5},
			{"EntityTypesUnknown", graph.TimelineFilter{EntityTypes: []string{"nope"}}, nil, 0},
			{"Page", graph.TimelineFilter{Page: graph.Page{Limit: 2, Offset: 2}}, ids(4, 1), 5},
			{"PastTheEnd", graph.TimelineFilter{Page: graph.Page{Limit: 2, Offset: 5}}, nil, 5},
			{"FilteredPage", graph.TimelineFilter{EntityID: meeting, Page: graph.Page{Limit: 1}}, ids(2), 3},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) { check(t, tc.filter, tc.want, tc.wantTotal) })
		}
	})

	t.Run("Replace", func(t *testing.T) {
		replaceEvents(t, s, alice, meeting, events["tle_alice_6"])
		check(t, graph.TimelineFilter{}, ids(6, 5, 4), 3)
		replaceEvents(t, s, alice, meeting)
		check(t, graph.TimelineFilter{}, ids(5, 4), 2)
		check(t, graph.TimelineFilter{EntityID: meeting}, nil, 0)
	})
}

// RunTimelinePeriods runs only the timeline periods cases of the suite,
// so that the portable walk behind graph.Tx.TimelineYears and
// TimelineMonths (a driver without graph.TimelinePeriodLister) can be
// held to the same contract.
func RunTimelinePeriods(t *testing.T, newStore Harness) { testTimelinePeriods(t, newStore) }

// testTimelinePeriods: the years of every event, not only the newest, and
// the months of a year, in UTC (an event written with an offset counts in
// its UTC month and year), with gaps, filtered by entity type, each
// user's own.
func testTimelinePeriods(t *testing.T, newStore Harness) {
	s := newStore(t)
	const meeting, invoice = "ent_alice_meeting", "ent_alice_invoice"
	putSources(t, s, newSource(alice, "src_alice_1", epoch), newSource(bob, "src_bob_1", epoch))
	putEntities(t, s, newEntity(alice, meeting, "meeting", epoch), newEntity(alice, invoice, "invoice", epoch),
		newEntity(bob, "ent_bob_meeting", "meeting", epoch))
	event := func(user, id, entityID, stamp string) graph.TimelineEvent {
		tm, err := time.Parse(time.RFC3339, stamp)
		if err != nil {
			t.Fatal(err)
		}
		return graph.TimelineEvent{ID: id, UserID: user, EntityID: entityID, EventType: "at", Timestamp: stamp,
			Time: tm.UTC(), SourceID: "src_" + user + "_1", Properties: map[string]any{}}
	}
	replaceEvents(t, s, alice, meeting,
		event(alice, "tle_alice_y1", meeting, "2019-06-01T10:00:00Z"),
		event(alice, "tle_alice_y2", meeting, "2023-01-01T00:00:00Z"), // the first instant of its year
		event(alice, "tle_alice_y3", meeting, "2023-12-31T23:59:59Z"),
		event(alice, "tle_alice_y4", meeting, "2024-12-31T23:30:00-02:00"), // 2025 in UTC
	)
	replaceEvents(t, s, alice, invoice,
		event(alice, "tle_alice_y5", invoice, "2021-03-01T00:00:00Z"),
		event(alice, "tle_alice_y6", invoice, "2023-05-01T00:00:00Z"),
	)
	replaceEvents(t, s, bob, "ent_bob_meeting", event(bob, "tle_bob_y1", "ent_bob_meeting", "2020-02-02T00:00:00Z"))
	// Centuries apart: a backend that seeks each year between the newest
	// and the oldest must not seek eleven hundred of them.
	const dave = "dave"
	putSources(t, s, newSource(dave, "src_dave_1", epoch))
	putEntities(t, s, newEntity(dave, "ent_dave_1", "meeting", epoch))
	replaceEvents(t, s, dave, "ent_dave_1", event(dave, "tle_dave_y1", "ent_dave_1", "0900-07-01T00:00:00Z"),
		event(dave, "tle_dave_y2", "ent_dave_1", "2025-07-01T00:00:00Z"), event(dave, "tle_dave_y3", "ent_dave_1", "1999-12-31T23:00:00-05:00"))

	for _, tc := range []struct {
		name  string
		user  string
		types []string
		year  int // 0: the years
		want  []int
	}{
		{"All", alice, nil, 0, []int{2025, 2023, 2021, 2019}},
		{"OneType", alice, []string{"meeting"}, 0, []int{2025, 2023, 2019}},
		{"OtherType", alice, []string{"invoice"}, 0, []int{2023, 2021}},
		{"BothTypes", alice, []string{"invoice", "meeting"}, 0, []int{2025, 2023, 2021, 2019}},
		{"NoType", alice, []string{}, 0, []int{}},
		{"UnknownType", alice, []string{"nope"}, 0, []int{}},
		{"OtherUser", bob, nil, 0, []int{2020}},
		{"NoEvents", "carol", nil, 0, []int{}},
		{"CenturiesApart", dave, nil, 0, []int{2025, 2000, 900}},
		{"CenturiesApartByType", dave, []string{"meeting"}, 0, []int{2025, 2000, 900}},
		// The first and the last instant of 2023 are in it.
		{"Months", alice, nil, 2023, []int{12, 5, 1}},
		{"MonthsOneType", alice, []string{"meeting"}, 2023, []int{12, 1}},
		{"MonthsNoType", alice, []string{}, 2023, []int{}},
		// 2024-12-31T23:30:00-02:00 is January 2025 in UTC.
		{"MonthsInUTC", alice, nil, 2025, []int{1}},
		{"MonthsInUTCNotBefore", alice, nil, 2024, []int{}},
		{"MonthsOtherUser", bob, nil, 2023, []int{}},
		{"MonthsLongAgo", dave, nil, 900, []int{7}},
		// A completion asks for whatever four digits were typed.
		{"MonthsYear9999", alice, nil, 9999, []int{}},
		{"MonthsYear1", alice, nil, 1, []int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]int, error) {
				if tc.year == 0 {
					return tx.TimelineYears(ctx, tc.user, tc.types)
				}
				return tx.TimelineMonths(ctx, tc.user, tc.types, tc.year)
			})
			diff(t, "periods", tc.want, got)
		})
	}
}
