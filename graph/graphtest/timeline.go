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
