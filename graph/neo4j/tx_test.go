package neo4j

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/cairnkg/cairn/graph"
)

// ran is one statement a fakeRunner was asked to run.
type ran struct {
	name   string
	query  string
	params map[string]any
}

// fakeRunner records the statements a tx runs and answers each with the
// rows queued for its name (none when nothing is queued), or an error.
type fakeRunner struct {
	ran     []ran
	replies map[string][][]map[string]any
	errs    map[string]error
}

func (f *fakeRunner) run(_ context.Context, name, query string, params map[string]any) ([]map[string]any, error) {
	f.ran = append(f.ran, ran{name, query, params})
	if err := f.errs[name]; err != nil {
		return nil, err
	}
	q := f.replies[name]
	if len(q) == 0 {
		return nil, nil
	}
	f.replies[name] = q[1:]
	return q[0], nil
}

// reply queues rows for the next run of name.
func (f *fakeRunner) reply(name string, rows ...map[string]any) *fakeRunner {
	if f.replies == nil {
		f.replies = map[string][][]map[string]any{}
	}
	if rows == nil {
		rows = []map[string]any{}
	}
	f.replies[name] = append(f.replies[name], rows)
	return f
}

func (f *fakeRunner) names() []string {
	out := make([]string, len(f.ran))
	for i, r := range f.ran {
		out[i] = r.name
	}
	return out
}

// last returns the last run of name.
func (f *fakeRunner) last(t *testing.T, name string) ran {
	t.Helper()
	for i := len(f.ran) - 1; i >= 0; i-- {
		if f.ran[i].name == name {
			return f.ran[i]
		}
	}
	t.Fatalf("%s did not run; ran %v", name, f.names())
	return ran{}
}

// written0 and written1 are the one record of a bulk write that wrote no
// row or one.
var (
	written0 = map[string]any{"written": int64(0)}
	written1 = map[string]any{"written": int64(1)}
)

var (
	paris = time.FixedZone("Paris", 3600)
	t0    = time.Date(2026, 3, 14, 9, 26, 53, 589793000, time.UTC)
)

// entityRow is an entity as entity_get returns it, its times in another
// zone than UTC, as the server may send them.
func entityRow(id string) map[string]any {
	return map[string]any{"entity": map[string]any{
		"id": id, "user_id": "alice", "entity_type": "company", "canonical_name": "acme",
		"schema_version": "1.0", "snapshot_json": `{"name":"Acme","staff":120,"ratio":0.5}`,
		"provenance_json": `{"name":"obs_1"}`, "observation_count": int64(2),
		"last_observation_at": t0.In(paris), "created_at": t0.In(paris), "computed_at": t0.In(paris),
		"merged_into": nil, "merged_at": nil,
	}}
}

// tuple is a projection as a statement that returns lists sends it: its
// values in the order of columns.
func tuple(projection any, columns []string) []any {
	m := projection.(map[string]any)
	out := make([]any, len(columns))
	for i, c := range columns {
		out[i] = m[c]
	}
	return out
}

// TestStatementPerMethod checks which statements each method runs, that a
// write transaction writes the user's lock node first and once per user,
// and that a read transaction takes no lock.
func TestStatementPerMethod(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name  string
		write bool
		setup func(*fakeRunner)
		call  func(*tx) error
		want  []string
	}{
		{
			name: "PutEntity", write: true,
			setup: func(f *fakeRunner) { f.reply("entities_put", written1) },
			call: func(t *tx) error {
				return t.PutEntity(ctx, graph.Entity{ID: "ent_1", UserID: "alice", Type: "company"})
			},
			want: []string{"user_lock", "entities_put"},
		},
		{
			name: "TwoUsersLockedOnceEach", write: true,
			call: func(t *tx) error {
				for _, u := range []string{"alice", "bob", "alice"} {
					if _, err := t.EntityTypeCounts(ctx, u); err != nil {
						return err
					}
				}
				return nil
			},
			want: []string{"user_lock", "entity_type_counts", "user_lock", "entity_type_counts", "entity_type_counts"},
		},
		{
			name:  "ReadTakesNoLock",
			setup: func(f *fakeRunner) { f.reply("entity_get", entityRow("ent_1")) },
			call:  func(t *tx) error { _, err := t.Entity(ctx, "alice", "ent_1"); return err },
			want:  []string{"entity_get"},
		},
		{
			name: "ListEntities",
			setup: func(f *fakeRunner) {
				f.reply("entity_count", map[string]any{"total": int64(0)})
			},
			call: func(t *tx) error { _, _, err := t.ListEntities(ctx, graph.EntityFilter{UserID: "alice"}); return err },
			want: []string{"entity_count", "entity_list"},
		},
		{
			name: "NoTypesRunsNothing",
			call: func(t *tx) error {
				_, _, err := t.ListEntities(ctx, graph.EntityFilter{UserID: "alice", Types: []string{}})
				return err
			},
		},
		{
			name: "SetIdentifiers", write: true,
			call: func(t *tx) error {
				return t.SetIdentifiers(ctx, "alice", "ent_1", []graph.Identifier{{Field: "email", Value: "a@b.c"}})
			},
			want: []string{"user_lock", "identifiers_set"},
		},
		{
			name: "ClearIdentifiers", write: true,
			call: func(t *tx) error { return t.SetIdentifiers(ctx, "alice", "ent_1", nil) },
			want: []string{"user_lock", "identifiers_set"},
		},
		{
			name: "ReplaceTimelineEvents", write: true,
			call: func(t *tx) error {
				return t.ReplaceTimelineEvents(ctx, "alice", "ent_1", []graph.TimelineEvent{{ID: "tle_1", Time: t0}})
			},
			want: []string{"user_lock", "timelines_replace"},
		},
		{
			name: "ListRelationshipsOfEntity",
			setup: func(f *fakeRunner) {
				f.reply("relationships_of_entity", map[string]any{"total": int64(0), "page": []any{}})
			},
			call: func(t *tx) error {
				_, _, err := t.ListRelationships(ctx, graph.RelationshipFilter{UserID: "alice", EntityID: "ent_1"})
				return err
			},
			want: []string{"relationships_of_entity"},
		},
		{
			name: "ListRelationships",
			setup: func(f *fakeRunner) {
				f.reply("relationships_list", map[string]any{"total": int64(0), "page": []any{}})
			},
			call: func(t *tx) error {
				_, _, err := t.ListRelationships(ctx, graph.RelationshipFilter{UserID: "alice"})
				return err
			},
			want: []string{"relationships_list"},
		},
		{
			name: "CompleteEntitiesOfTypes",
			call: func(t *tx) error {
				_, err := t.CompleteEntities(ctx, graph.EntityCompletion{UserID: "alice", Prefix: "acme", Types: []string{"company", "person"}, Limit: 10})
				return err
			},
			want: []string{"entity_complete"},
		},
		{
			name: "CompleteEntitiesOfEveryType",
			call: func(t *tx) error {
				_, err := t.CompleteEntities(ctx, graph.EntityCompletion{UserID: "alice", Prefix: "ent_", IDs: true, Limit: 10})
				return err
			},
			want: []string{"entity_complete_any"},
		},
		{
			name: "CompleteEntitiesOfNoType",
			call: func(t *tx) error {
				_, err := t.CompleteEntities(ctx, graph.EntityCompletion{UserID: "alice", Prefix: "acme", Types: []string{}, Limit: 10})
				return err
			},
		},
		{
			name: "EnqueueNothing", write: true,
			call: func(t *tx) error { return t.EnqueueOutbox(ctx, "alice", nil, t0) },
			want: []string{"user_lock"},
		},
		{
			name: "ReachWithoutPath",
			setup: func(f *fakeRunner) {
				f.reply("entity_total", map[string]any{"total": int64(5)})
			},
			call: func(t *tx) error {
				_, err := t.Reach(ctx, graph.PathQuery{UserID: "alice", From: "a", To: "b", Direction: graph.Outbound})
				return err
			},
			want: []string{"entity_total", "reach_hops_directed"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRunner{}
			if tc.setup != nil {
				tc.setup(f)
			}
			if err := tc.call(&tx{r: f, write: tc.write}); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, f.names(), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("statements (-want +got):\n%s", d)
			}
			for _, r := range f.ran {
				if strings.Contains(r.query, "__") {
					t.Errorf("%s ran with a placeholder left: %s", r.name, r.query)
				}
				if _, ok := r.params["userId"]; !ok && r.name != "outbox_claim" {
					t.Errorf("%s ran without $userId: %v", r.name, r.params)
				}
			}
		})
	}
}

func TestPutEntityParams(t *testing.T) {
	f := (&fakeRunner{}).reply("entities_put", written1)
	tx := &tx{r: f, write: true}
	e := graph.Entity{
		ID: "ent_1", UserID: "alice", Type: "bank_account", CanonicalName: "acme",
		Snapshot: map[string]any{
			"name": "Acme", "staff": json.Number("120"), "ratio": 0.5, "open": true,
			"tags": []any{"a", "b"}, "mixed": []any{"a", json.Number("1")}, "address": map[string]any{"city": "Lyon"},
			"none": nil, "empty": []any{}, "id": "spoofed", "user_id": "bob",
		},
		LastObservationAt: t0.In(paris), CreatedAt: t0, ComputedAt: t0,
	}
	if err := tx.PutEntity(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	r := f.last(t, "entities_put")
	if !strings.Contains(r.query, "e:BankAccount") {
		t.Errorf("entities_put without the type's label:\n%s", r.query)
	}
	if r.params["userId"] != "alice" || len(r.params["rows"].([]any)) != 1 {
		t.Fatalf("entities_put params = %v, want alice's one row", r.params)
	}
	row := r.params["rows"].([]any)[0].(map[string]any)
	want := map[string]any{"name": "Acme", "staff": int64(120), "ratio": 0.5, "open": true, "tags": []any{"a", "b"}}
	if d := cmp.Diff(want, row["snapshot_props"]); d != "" {
		t.Errorf("snapshot_props (-want +got):\n%s", d)
	}
	if row["merged_into"] != nil || row["merged_at"] != nil {
		t.Errorf("an unmerged entity sent merged_into %v, merged_at %v; want nulls", row["merged_into"], row["merged_at"])
	}
	if got := row["last_observation_at"].(time.Time); got.Location() != time.UTC || !got.Equal(t0) {
		t.Errorf("last_observation_at = %v, want %v in UTC", got, t0)
	}
	var snap map[string]any
	if err := json.Unmarshal([]byte(row["snapshot_json"].(string)), &snap); err != nil || snap["id"] != "spoofed" {
		t.Errorf("snapshot_json = %v (%v): the whole snapshot belongs there", row["snapshot_json"], err)
	}
	if d := cmp.Diff([]byte(graph.EntityTextSig(e)), row["text_sig"]); d != "" {
		t.Errorf("text_sig (-want +got):\n%s", d)
	}
	wantKeys := []any{
		map[string]any{"kind": int64(graph.KeyName), "key": "acme", "type_order": "alice\x01bank_account\x010\x01acme\x01ent_1", "user_order": "alice\x010\x01acme\x01ent_1"},
		map[string]any{"kind": int64(graph.KeyID), "key": "ent_1", "type_order": "alice\x01bank_account\x012\x01ent_1\x01ent_1", "user_order": "alice\x012\x01ent_1\x01ent_1"},
	}
	if d := cmp.Diff([]string{"acme"}, row["name_keys"]); d != "" {
		t.Errorf("name_keys (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantKeys, row["keys"]); d != "" {
		t.Errorf("keys (-want +got):\n%s", d)
	}
	// A merged entity keeps its name keys' record, and has no keys.
	merged := e
	merged.MergedInto, merged.MergedAt = "ent_2", t0
	if row, err := entityPutRow(merged); err != nil || len(row["keys"].([]any)) != 0 || len(row["name_keys"].([]string)) != 1 {
		t.Errorf("a merged entity's row has keys %v, name_keys %v (%v); want none, and its name's", row["keys"], row["name_keys"], err)
	}
	// A snapshot it cannot summarise has a signature too, one that says
	// nothing.
	e.Snapshot = map[string]any{"tags": []string{"a"}}
	if row, err := entityPutRow(e); err != nil || !bytes.Equal(row["text_sig"].([]byte), graph.EntityTextSig(e)) {
		t.Errorf("text_sig of an entity without a signature = %v (%v), want %v", row["text_sig"], err, graph.EntityTextSig(e))
	}
}

func TestPutEntityOfAnotherUser(t *testing.T) {
	f := (&fakeRunner{}).reply("entities_put", written0)
	err := (&tx{r: f, write: true}).PutEntity(t.Context(), graph.Entity{ID: "ent_1", UserID: "bob", Type: "company"})
	if !errors.Is(err, graph.ErrConflict) {
		t.Errorf("err = %v, want graph.ErrConflict", err)
	}
}

func TestPutEntityInvalidType(t *testing.T) {
	f := &fakeRunner{}
	err := (&tx{r: f, write: true}).PutEntity(t.Context(), graph.Entity{ID: "ent_1", UserID: "alice", Type: "source"})
	if err == nil || !strings.Contains(err.Error(), "label Source") {
		t.Errorf("err = %v, want a refusal of the reserved label", err)
	}
	if d := cmp.Diff([]string{"user_lock"}, f.names()); d != "" {
		t.Errorf("statements (-want +got):\n%s", d)
	}
}

func TestNullFilters(t *testing.T) {
	f := (&fakeRunner{}).reply("entity_count", map[string]any{"total": int64(0)})
	tx := &tx{r: f}
	if _, _, err := tx.ListEntities(t.Context(), graph.EntityFilter{UserID: "alice"}); err != nil {
		t.Fatal(err)
	}
	// A nil []string would reach Neo4j as an empty list, which matches
	// nothing; the statements want null for "no filter".
	if v, ok := f.last(t, "entity_list").params["types"]; !ok || v != nil {
		t.Errorf("types = %#v, want an untyped nil", v)
	}
	f.reply("timeline_list", map[string]any{"total": int64(0), "page": []any{}})
	if _, _, err := tx.ListTimelineEvents(t.Context(), graph.TimelineFilter{UserID: "alice", EventType: "due", After: t0}); err != nil {
		t.Fatal(err)
	}
	p := f.last(t, "timeline_list").params
	want := map[string]any{
		"userId": "alice", "eventType": "due", "sourceId": nil, "entityId": nil, "after": t0, "before": nil,
		"entityTypes": nil, "offset": int64(0), "limit": int64(100),
	}
	if d := cmp.Diff(want, p); d != "" {
		t.Errorf("timeline_list params (-want +got):\n%s", d)
	}
	// The whole timeline is the statement without filters.
	f.reply("timeline_list_all", map[string]any{"total": int64(0), "page": []any{}})
	if _, _, err := tx.ListTimelineEvents(t.Context(), graph.TimelineFilter{UserID: "alice", Page: graph.Page{Offset: 3, Limit: 5}}); err != nil {
		t.Fatal(err)
	}
	want = map[string]any{"userId": "alice", "offset": int64(3), "limit": int64(5)}
	if d := cmp.Diff(want, f.last(t, "timeline_list_all").params); d != "" {
		t.Errorf("timeline_list_all params (-want +got):\n%s", d)
	}
}

func TestEntityMapping(t *testing.T) {
	f := (&fakeRunner{}).reply("entity_get", entityRow("ent_1"))
	got, err := (&tx{r: f}).Entity(t.Context(), "alice", "ent_1")
	if err != nil {
		t.Fatal(err)
	}
	want := graph.Entity{
		ID: "ent_1", UserID: "alice", Type: "company", CanonicalName: "acme", SchemaVersion: "1.0",
		Snapshot:         map[string]any{"name": "Acme", "staff": json.Number("120"), "ratio": json.Number("0.5")},
		Provenance:       map[string]string{"name": "obs_1"},
		ObservationCount: 2, LastObservationAt: t0, CreatedAt: t0, ComputedAt: t0,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("entity (-want +got):\n%s", d)
	}
	if got.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt in %v, want UTC", got.CreatedAt.Location())
	}
}

func TestMappingErrors(t *testing.T) {
	tests := []struct {
		name string
		row  map[string]any
		want string
	}{
		{"time as string", map[string]any{"created_at": "2026-01-01"}, "created_at is string"},
		{"count as float", map[string]any{"observation_count": 2.0}, "observation_count is float64"},
		{"bad json", map[string]any{"snapshot_json": "{"}, "snapshot_json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := toEntity(tc.row); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("toEntity(%v) = %v, want an error saying %q", tc.row, err, tc.want)
			}
		})
	}
}

func TestEdgeMapping(t *testing.T) {
	row := map[string]any{"relationship": map[string]any{
		"id": "rel_1", "user_id": "alice", "type": "PART_OF", "metadata_json": "{}", "provenance_json": "{}",
		"observation_count": int64(0), "created_at": t0, "last_observation_at": t0, "ended_at": t0.Add(time.Hour).In(paris),
		"source_entity_id": "ent_1", "target_entity_id": "ent_2", "source_type": "person", "target_type": "company",
	}}
	f := (&fakeRunner{}).reply("edges", map[string]any{"relationships": []any{tuple(row["relationship"], edgeColumns)}})
	got, err := (&tx{r: f}).Edges(t.Context(), graph.EdgeQuery{UserID: "alice", EntityIDs: []string{"ent_1"}, At: t0})
	if err != nil {
		t.Fatal(err)
	}
	want := []graph.Edge{{
		Relationship: graph.Relationship{
			ID: "rel_1", UserID: "alice", Type: "PART_OF", SourceEntityID: "ent_1", TargetEntityID: "ent_2",
			Metadata: map[string]any{}, Provenance: map[string]string{}, CreatedAt: t0, LastObservationAt: t0,
			EndedAt: t0.Add(time.Hour),
		},
		SourceType: "person", TargetType: "company",
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("edges (-want +got):\n%s", d)
	}
	p := f.last(t, "edges").params
	if p["direction"] != "both" || p["types"] != nil || p["at"] != t0 {
		t.Errorf("edges params = %v", p)
	}
}

func TestNotFoundAndConflict(t *testing.T) {
	ctx := t.Context()
	t.Run("Entity", func(t *testing.T) {
		_, err := (&tx{r: &fakeRunner{}}).Entity(ctx, "alice", "ent_9")
		var nf *graph.NotFoundError
		if !errors.As(err, &nf) || nf.What != "entity" || nf.ID != "ent_9" {
			t.Errorf("err = %v, want a NotFoundError of entity ent_9", err)
		}
	})
	t.Run("SourceByHash", func(t *testing.T) {
		_, err := (&tx{r: &fakeRunner{}}).SourceByHash(ctx, "alice", "ab12")
		var nf *graph.NotFoundError
		if !errors.As(err, &nf) || nf.What != "source with hash" {
			t.Errorf("err = %v, want a NotFoundError of a source with hash", err)
		}
	})
	t.Run("InsertSourceTwice", func(t *testing.T) {
		err := (&tx{r: &fakeRunner{}, write: true}).InsertSource(ctx, graph.Source{ID: "src_1", UserID: "alice"})
		if !errors.Is(err, graph.ErrConflict) {
			t.Errorf("err = %v, want graph.ErrConflict", err)
		}
	})
	t.Run("ObservationTwice", func(t *testing.T) {
		f := (&fakeRunner{}).reply("observations_insert", written0).
			reply("source_get", map[string]any{"source": map[string]any{"id": "src_1", "user_id": "alice"}})
		err := (&tx{r: f, write: true}).InsertObservation(ctx, graph.Observation{ID: "obs_1", UserID: "alice", SourceID: "src_1"})
		if !errors.Is(err, graph.ErrConflict) {
			t.Errorf("err = %v, want graph.ErrConflict", err)
		}
	})
	t.Run("ObservationOfMissingSource", func(t *testing.T) {
		f := (&fakeRunner{}).reply("observations_insert", written0)
		err := (&tx{r: f, write: true}).InsertObservation(ctx, graph.Observation{ID: "obs_1", UserID: "alice", SourceID: "src_9"})
		var nf *graph.NotFoundError
		if !errors.As(err, &nf) || nf.What != "source" || errors.Is(err, graph.ErrConflict) {
			t.Errorf("err = %v, want a NotFoundError of the source", err)
		}
	})
	t.Run("RelationshipEndpointMissing", func(t *testing.T) {
		err := (&tx{r: &fakeRunner{}, write: true}).PutRelationship(ctx, graph.Relationship{ID: "rel_1", UserID: "alice", Type: "PART_OF"})
		if !errors.Is(err, graph.ErrNotFound) {
			t.Errorf("err = %v, want graph.ErrNotFound", err)
		}
	})
	t.Run("ReservedRelationshipType", func(t *testing.T) {
		f := &fakeRunner{}
		err := (&tx{r: f, write: true}).PutRelationship(ctx, graph.Relationship{ID: "rel_1", UserID: "alice", Type: "PRODUCED"})
		if !errors.Is(err, graph.ErrInvalidRelationshipType) {
			t.Errorf("err = %v, want graph.ErrInvalidRelationshipType", err)
		}
		if d := cmp.Diff([]string{"user_lock"}, f.names()); d != "" {
			t.Errorf("statements (-want +got):\n%s", d)
		}
	})
}

func TestErrorMapping(t *testing.T) {
	tests := []struct {
		name          string
		err           error
		wantConflict  bool
		wantRetryable bool
	}{
		{"constraint", &neo4j.Neo4jError{Code: "Neo.ClientError.Schema.ConstraintValidationFailed", Msg: "already exists"}, true, false},
		{"deadlock", &neo4j.Neo4jError{Code: codeDeadlock}, false, true},
		{"lock timeout", &neo4j.Neo4jError{Code: "Neo.TransientError.Transaction.LockAcquisitionTimeout"}, false, true},
		{"leader switch", &neo4j.Neo4jError{Code: "Neo.ClientError.Cluster.NotALeader"}, false, true},
		{"syntax", &neo4j.Neo4jError{Code: "Neo.ClientError.Statement.SyntaxError"}, false, false},
		{"terminated", &neo4j.Neo4jError{Code: "Neo.TransientError.Transaction.Terminated"}, false, false},
		{"connection", &neo4j.ConnectivityError{Inner: errors.New("reset")}, false, true},
		{"other", errors.New("boom"), false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := mapError("source_insert", tc.err)
			if got := errors.Is(err, graph.ErrConflict); got != tc.wantConflict {
				t.Errorf("errors.Is(%v, ErrConflict) = %v, want %v", err, got, tc.wantConflict)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("%v does not wrap the driver's error", err)
			}
			if got := retryable(err); got != tc.wantRetryable {
				t.Errorf("retryable(%v) = %v, want %v", err, got, tc.wantRetryable)
			}
			if _, lost := tc.err.(*neo4j.ConnectivityError); lost && err != tc.err {
				t.Errorf("a lost connection came back as %v; the managed transaction would not retry it", err)
			}
			if _, lost := tc.err.(*neo4j.ConnectivityError); !lost && !strings.Contains(err.Error(), "source_insert") {
				t.Errorf("%v does not name the statement", err)
			}
		})
	}
	// A failing statement's error comes back through the transaction.
	f := &fakeRunner{errs: map[string]error{"source_insert": tests[0].err}}
	err := (&tx{r: f, write: true}).InsertSource(t.Context(), graph.Source{ID: "src_1", UserID: "alice"})
	var neoErr *neo4j.Neo4jError
	if !errors.Is(err, graph.ErrConflict) || !errors.As(err, &neoErr) {
		t.Errorf("InsertSource = %v, want ErrConflict with the Neo4j error kept", err)
	}
}

func TestStorable(t *testing.T) {
	tests := []struct {
		in   any
		want any
		ok   bool
	}{
		{"x", "x", true},
		{42, int64(42), true},
		{json.Number("9007199254740993"), int64(9007199254740993), true},
		{json.Number("2.5"), 2.5, true},
		{json.Number("1e400"), nil, false},
		{[]any{json.Number("1"), json.Number("2")}, []any{int64(1), int64(2)}, true},
		{[]any{json.Number("1"), json.Number("2.5")}, nil, false},
		{[]any{}, nil, false},
		{map[string]any{}, nil, false},
		{nil, nil, false},
	}
	for _, tc := range tests {
		got, ok := storable(tc.in)
		if ok != tc.ok || !cmp.Equal(got, tc.want) {
			t.Errorf("storable(%#v) = %#v, %v; want %#v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestEntitiesKeepsOrderOfIDs(t *testing.T) {
	f := (&fakeRunner{}).reply("entities_get", map[string]any{"entities": []any{
		tuple(entityRow("ent_2")["entity"], entityColumns), tuple(entityRow("ent_1")["entity"], entityColumns),
	}})
	got, err := (&tx{r: f}).Entities(t.Context(), "alice", []string{"ent_1", "ent_3", "ent_2", "ent_1"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range got {
		ids = append(ids, e.ID)
	}
	if d := cmp.Diff([]string{"ent_1", "ent_2"}, ids); d != "" {
		t.Errorf("ids (-want +got):\n%s", d)
	}
}

// ListEntityStats counts each listed entity's Degrees from the ends of the
// user's relationships (entity_stats_degrees): at both ends, by the other
// end's type, a relationship from an entity to itself twice, and ends
// outside the page not at all; WithoutDegrees skips the statement.
func TestEntityStatDegrees(t *testing.T) {
	stat := func(id string) []any { return []any{id, "person", int64(1), t0, nil, nil} }
	f := (&fakeRunner{}).reply("entity_stats_list", map[string]any{"stats": []any{stat("ent_1"), stat("ent_2")}}).
		reply("entity_stats_degrees", map[string]any{"ends": []any{
			[]any{"ent_1", "person", "ent_c", "company"},
			[]any{"ent_d", "company", "ent_1", "person"},
			[]any{"ent_1", "person", "ent_1", "person"},
			[]any{"ent_x", "company", "ent_y", "company"},
		}})
	got, err := (&tx{r: f}).ListEntityStats(t.Context(), graph.EntityFilter{UserID: "alice"})
	if err != nil || len(got) != 2 {
		t.Fatalf("ListEntityStats = %+v, %v", got, err)
	}
	if d := cmp.Diff([]graph.Degree{{Type: "company", Count: 2}, {Type: "person", Count: 2}}, got[0].Degrees); d != "" {
		t.Errorf("degrees (-want +got):\n%s", d)
	}
	if got[1].Degrees != nil {
		t.Errorf("degrees without neighbours = %v, want nil", got[1].Degrees)
	}
	f = (&fakeRunner{}).reply("entity_stats_list", map[string]any{"stats": []any{stat("ent_1")}})
	if _, err := (&tx{r: f}).ListEntityStats(t.Context(), graph.EntityFilter{UserID: "alice", WithoutDegrees: true}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"entity_stats_list"}, f.names()); d != "" {
		t.Errorf("statements without degrees (-want +got):\n%s", d)
	}
}

func TestEntityStatTextSig(t *testing.T) {
	sig := graph.EntityTextSig(graph.Entity{Type: "person", CanonicalName: "Ada"})
	got, err := toEntityStat(map[string]any{"id": "ent_1", "text_sig": []byte(sig)})
	if err != nil || !bytes.Equal(got.TextSig, sig) {
		t.Errorf("TextSig = %v (%v), want %v", got.TextSig, err, sig)
	}
	if got, err := toEntityStat(map[string]any{"id": "ent_1", "text_sig": nil}); err != nil || got.TextSig != nil {
		t.Errorf("TextSig without the property = %v (%v), want nil", got.TextSig, err)
	}
	if _, err := toEntityStat(map[string]any{"id": "ent_1", "text_sig": "abc"}); err == nil {
		t.Error("a text_sig that is not a byte array was taken")
	}
}

func TestListEntityStatsAsksForTextSigs(t *testing.T) {
	sig := []byte(graph.EntityTextSig(graph.Entity{Type: "person", CanonicalName: "Ada"}))
	for _, want := range []bool{false, true} {
		f := (&fakeRunner{}).reply("entity_stats_list", map[string]any{"stats": []any{[]any{"ent_1", "person", int64(1), nil, nil, sig}}}).
			reply("entity_stats_degrees", map[string]any{"ends": []any{[]any{"ent_1", "person", "ent_2", "company"}}})
		tx := &tx{r: f}
		got, err := tx.ListEntityStats(t.Context(), graph.EntityFilter{UserID: "alice", TextSigs: want})
		if err != nil || len(got) != 1 || !bytes.Equal(got[0].TextSig, sig) || !slices.Equal(got[0].Degrees, []graph.Degree{{Type: "company", Count: 1}}) {
			t.Fatalf("ListEntityStats = %+v, %v", got, err)
		}
		if p := f.last(t, "entity_stats_list").params["textSigs"]; p != want {
			t.Errorf("textSigs = %v, want %v", p, want)
		}
	}
}

func TestBackfillTextSigs(t *testing.T) {
	f := (&fakeRunner{}).reply("entities_without_text_sig",
		map[string]any{"id": "ent_a", "user_id": "alice", "entity_type": "note", "canonical_name": "Launch", "snapshot_json": `{"text":"Rocket","n":1e21}`},
		map[string]any{"id": "ent_b", "user_id": "bob", "entity_type": "person", "canonical_name": "Ada", "snapshot_json": `{}`},
	).reply("user_lock").reply("user_lock").reply("entities_text_sig_set")
	w := &tx{r: f, write: true}
	last, n, err := w.backfillTextSigs(t.Context(), "ent_0", 500)
	if err != nil || last != "ent_b" || n != 2 {
		t.Fatalf("backfillTextSigs = %q, %d, %v; want ent_b, 2", last, n, err)
	}
	if p := f.last(t, "entities_without_text_sig").params; p["afterId"] != "ent_0" || p["limit"] != int64(500) {
		t.Errorf("entities_without_text_sig params = %v", p)
	}
	// The signature and the completion keys of each entity, from its
	// user, type, id and name.
	want := []any{
		map[string]any{"id": "ent_a", "text_sig": []byte(graph.EntityTextSig(graph.Entity{Type: "note", CanonicalName: "Launch",
			Snapshot: map[string]any{"text": "Rocket", "n": json.Number("1e21")}})),
			"name_keys": nameKeys("Launch"), "keys": completionKeys("alice", "note", "ent_a", "Launch", false)},
		map[string]any{"id": "ent_b", "text_sig": []byte(graph.EntityTextSig(graph.Entity{Type: "person", CanonicalName: "Ada", Snapshot: map[string]any{}})),
			"name_keys": nameKeys("Ada"), "keys": completionKeys("bob", "person", "ent_b", "Ada", false)},
	}
	if d := cmp.Diff(want, f.last(t, "entities_text_sig_set").params["rows"]); d != "" {
		t.Errorf("entities_text_sig_set rows (-want +got):\n%s", d)
	}
	// It takes the lock of each user whose entities it keys, before it
	// writes: the keys are the user's data, which a concurrent write of
	// the user may be replacing.
	if d := cmp.Diff([]string{"entities_without_text_sig", "user_lock", "user_lock", "entities_text_sig_set"}, f.names()); d != "" {
		t.Errorf("statements (-want +got):\n%s", d)
	}
	// Nothing left: nothing written.
	f = (&fakeRunner{}).reply("entities_without_text_sig")
	w = &tx{r: f, write: true}
	if last, n, err := w.backfillTextSigs(t.Context(), "ent_b", 500); err != nil || last != "" || n != 0 {
		t.Errorf("backfillTextSigs of none = %q, %d, %v", last, n, err)
	}
	if d := cmp.Diff([]string{"entities_without_text_sig"}, f.names()); d != "" {
		t.Errorf("statements (-want +got):\n%s", d)
	}
}
