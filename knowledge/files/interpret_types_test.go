package files_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/knowledge/interpret/interprettest"
)

// runFile stores a file for c, interprets it and returns its job.
func runFile(t *testing.T, e *env, c knowledge.Caller, name string, data []byte) files.Job {
	t.Helper()
	st := put(t, e, c, name, data)
	j, err := e.svc.Enqueue(t.Context(), c, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, st.File.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	runAll(t, e, files.RunnerOptions{})
	j, err = e.svc.Job(t.Context(), c, j.ID)
	if err != nil || j.Status != files.JobSucceeded {
		t.Fatalf("%s: job = %+v, %v", name, j, err)
	}
	return j
}

// createdTypes lists the types of a job result's schema_created.
func createdTypes(j files.Job) []string {
	var out []string
	list, _ := j.Result["schema_created"].([]any)
	for _, sc := range list {
		m, _ := sc.(map[string]any)
		out = append(out, fmt.Sprint(m["entity_type"], "@", m["schema_version"], "/", m["scope"], " ", m["identity_fields"]))
	}
	return out
}

// An iCalendar file's events are event entities, under the schema the
// first calendar creates for the user, whose start and end are timeline
// events.
func TestInterpretICSJobCreatesEvents(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, files.Options{})
		j := runFile(t, e, alice, "cal.ics", []byte(interprettest.SampleICS))
		if got := createdTypes(j); !slices.Equal(got, []string{"event@1.0/user [uid]"}) || j.Result["entity_type"] != "event" {
			t.Fatalf("result = %v", j.Result)
		}
		events := entitiesOf(t, e, alice, "event")
		if len(events) != 2 {
			t.Fatalf("%d events, want 2", len(events))
		}
		var review string
		for _, ev := range events {
			if ev.Snapshot["title"] == "Design review" {
				review = ev.ID
				if ev.Snapshot["location"] != "Room 4, 2nd floor" || ev.Snapshot["start"] != "2026-03-10T14:00:00Z" {
					t.Errorf("snapshot = %v", ev.Snapshot)
				}
			}
		}
		if review == "" {
			t.Fatalf("no Design review among %v", events)
		}
		tl, _, err := e.know.Timeline(t.Context(), alice, knowledge.TimelineQuery{EntityID: review})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ev := range tl {
			got = append(got, ev.EventType+" "+ev.Timestamp)
		}
		slices.Sort(got)
		if want := []string{"EventEnd 2026-03-10T15:00:00Z", "EventStart 2026-03-10T14:00:00Z"}; !slices.Equal(got, want) {
			t.Fatalf("timeline = %v, want %v", got, want)
		}
		// The type is alice's: bob's first calendar creates his own, and
		// alice's second creates none.
		if got := createdTypes(runFile(t, e, bob, "cal.ics", []byte(interprettest.SampleICS))); len(got) != 1 {
			t.Fatalf("bob's schema_created = %v", got)
		}
		other := []byte("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x-1\r\nSUMMARY:Lunch\r\nDTSTART:20260320T120000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
		if j := runFile(t, e, alice, "lunch.ics", other); j.Result["schema_created"] != nil {
			t.Fatalf("second calendar result = %v", j.Result)
		}
		if n := len(entitiesOf(t, e, alice, "event")); n != 3 {
			t.Fatalf("%d events after the second calendar, want 3", n)
		}
	})
}

// A table whose columns name no known type gives entities of a type named
// after its file, whose schema the store creates for the user; the column
// mapping is reported as for a known type.
func TestInterpretUnknownTableJob(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, files.Options{})
		csv := "Name,Cuisine,Servings\nPancakes,French,4\nDal,Indian,6\nRisotto,Italian,2\n"
		j := runFile(t, e, alice, "My Recipes.csv", []byte(csv))
		if j.Result["entity_type"] != "my_recipes" || !slices.Equal(createdTypes(j), []string{"my_recipes@1.0/user [name]"}) {
			t.Fatalf("result = %v", j.Result)
		}
		if m := fmt.Sprint(j.Result["column_mapping"]); m != "map[Cuisine:cuisine Name:name Servings:servings]" {
			t.Fatalf("column_mapping = %s", m)
		}
		ents := entitiesOf(t, e, alice, "my_recipes")
		var names []string
		for _, ent := range ents {
			names = append(names, fmt.Sprint(ent.Snapshot["name"]))
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"Dal", "Pancakes", "Risotto"}) {
			t.Fatalf("entities = %v", names)
		}
		// JSON objects too; a name that cannot be a type is prefixed.
		j = runFile(t, e, alice, "2026 pantry.json", []byte(`[{"item":"flour","qty":2},{"item":"rice","qty":1}]`))
		if j.Result["entity_type"] != "table_2026_pantry" || len(createdTypes(j)) != 1 {
			t.Fatalf("json result = %v", j.Result)
		}
		if n := len(entitiesOf(t, e, alice, "table_2026_pantry")); n != 2 {
			t.Fatalf("%d pantry entities, want 2", n)
		}
	})
}
