package files_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
)

// transactionsCSV is a bank export of n rows (generated: no fixture file).
func transactionsCSV(n int) []byte {
	var b strings.Builder
	b.WriteString("Booking Date,Description,Amount,Currency,Reference\n")
	for i := range n {
		fmt.Fprintf(&b, "2026-01-%02d,Coffee shop %d,-%d.50,EUR,REF%05d\n", i%28+1, i, i%40+1, i)
	}
	return []byte(b.String())
}

func runAll(t *testing.T, e *env, o files.RunnerOptions) int {
	t.Helper()
	n := 0
	for {
		ran, err := e.svc.RunOne(t.Context(), o, "test-worker")
		if err != nil {
			t.Fatalf("RunOne: %v", err)
		}
		if !ran {
			return n
		}
		n++
	}
}

func entitiesOf(t *testing.T, e *env, c knowledge.Caller, typ string) []graph.Entity {
	t.Helper()
	ents, _, err := e.know.ListEntities(t.Context(), c, knowledge.EntityQuery{EntityType: typ, Page: graph.Page{Limit: 10000}})
	if err != nil {
		t.Fatal(err)
	}
	return ents
}

func TestInterpretCSVJob(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, files.Options{})
		st := put(t, e, alice, "bank.csv", transactionsCSV(250))
		if st.File.MimeType != "text/csv" {
			t.Fatalf("type = %s", st.File.MimeType)
		}
		j, err := e.svc.Enqueue(t.Context(), alice, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, st.File.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := runAll(t, e, files.RunnerOptions{Batch: 100}); n != 1 {
			t.Fatalf("ran %d jobs", n)
		}
		j, err = e.svc.Job(t.Context(), alice, j.ID)
		if err != nil || j.Status != files.JobSucceeded {
			t.Fatalf("job = %+v, %v", j, err)
		}
		if j.Progress.ItemsDone != 250 || j.Progress.Percent != 100 || j.Result["entity_type"] != "transaction" {
			t.Fatalf("progress %+v, result %v", j.Progress, j.Result)
		}
		mapping, _ := j.Result["column_mapping"].(map[string]any)
		want := map[string]string{"Booking Date": "date", "Description": "description", "Amount": "amount", "Currency": "currency", "Reference": "transaction_id"}
		for col, field := range want {
			if mapping[col] != field {
				t.Errorf("mapping[%s] = %v, want %s", col, mapping[col], field)
			}
		}
		ents := entitiesOf(t, e, alice, "transaction")
		if len(ents) != 250 {
			t.Fatalf("%d transactions, want 250", len(ents))
		}
		// Provenance goes back to the file and the line.
		var id string
		for _, ent := range ents {
			if ent.Snapshot["transaction_id"] == "REF00007" {
				id = ent.ID
			}
		}
		prov, err := e.know.FieldProvenance(t.Context(), alice, id, "amount")
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(prov.Value) != "-8.5" || fmt.Sprint(prov.Source.Provenance["source_refs"]) != "["+st.File.ID+"]" {
			t.Fatalf("provenance = %v from %v", prov.Value, prov.Source.Provenance)
		}
		origin, ok := knowledge.OriginOf(prov.Source, prov.Observation.ID)
		if !ok || origin.FileID != st.File.ID || origin.Filename != "bank.csv" || origin.Unit != "line" || origin.Start != 9 || origin.End != 9 {
			t.Fatalf("origin of row 8 = %+v, want bank.csv line 9", origin)
		}
		events, _, err := e.know.Timeline(t.Context(), alice, knowledge.TimelineQuery{EntityID: id})
		if err != nil || len(events) != 1 || events[0].EventType != "TransactionPosted" {
			t.Fatalf("timeline = %+v, %v", events, err)
		}
		// Reinterpreting adds observations and keeps the old ones.
		if _, err := e.svc.Enqueue(t.Context(), alice, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, st.File.ID, map[string]any{"code_version": "2"}); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Second)
		runAll(t, e, files.RunnerOptions{})
		obs, _, _, err := e.know.Observations(t.Context(), alice, id, graph.Page{Limit: 10})
		if err != nil || len(obs) != 2 {
			t.Fatalf("after reinterpret %d observations, %v; want 2", len(obs), err)
		}
	})
}

// A job whose worker dies mid-way resumes after its lease expires and
// completes once, with no observation recorded twice.
func TestJobResumesAfterCrash(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, files.Options{})
		st := put(t, e, alice, "bank.csv", transactionsCSV(300))
		j, err := e.svc.Enqueue(t.Context(), alice, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, st.File.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		// The first worker stores one batch, then dies: its context ends
		// while it prepares the second (consent is asked once per entity).
		ctx, cancel := context.WithCancel(t.Context())
		stores := 0
		o := files.RunnerOptions{Batch: 100, Lease: 10 * time.Second, Authorize: func(context.Context, files.Job) (knowledge.Caller, error) {
			return knowledge.Caller{UserID: alice.UserID, Allowed: func(a knowledge.Action, r string) bool {
				if a == knowledge.Write && r == knowledge.EntityResource("transaction") {
					stores++
					if stores > 100 {
						cancel()
					}
				}
				return true
			}}, nil
		}}
		if _, err := e.svc.RunOne(ctx, o, "dying-worker"); err != nil {
			t.Fatal(err)
		}
		j, _ = e.svc.Job(t.Context(), alice, j.ID)
		if j.Status != files.JobRunning || j.Progress.ItemsDone == 0 || j.Progress.ItemsDone == 300 {
			t.Fatalf("after the crash: %s, %d done", j.Status, j.Progress.ItemsDone)
		}
		// Not runnable while the lease holds; runnable once it expired.
		if n := runAll(t, e, files.RunnerOptions{}); n != 0 {
			t.Fatalf("ran %d jobs while leased", n)
		}
		e.clock.Advance(11 * time.Second)
		if n := runAll(t, e, files.RunnerOptions{Batch: 100}); n != 1 {
			t.Fatalf("ran %d jobs after the lease expired", n)
		}
		j, _ = e.svc.Job(t.Context(), alice, j.ID)
		if j.Status != files.JobSucceeded || j.Attempts != 2 {
			t.Fatalf("job = %s after %d attempts", j.Status, j.Attempts)
		}
		ents := entitiesOf(t, e, alice, "transaction")
		if len(ents) != 300 {
			t.Fatalf("%d transactions, want 300", len(ents))
		}
		for _, ent := range ents {
			if ent.ObservationCount != 1 {
				t.Fatalf("%s has %d observations, want 1", ent.ID, ent.ObservationCount)
			}
		}
		// The dead worker cannot complete it a second time.
		if err := e.control.FinishJob(t.Context(), j.ID, "dying-worker", files.JobSucceeded, nil, "", "", e.clock.Now()); !errors.Is(err, files.ErrLeaseLost) {
			t.Fatalf("second completion: %v, want ErrLeaseLost", err)
		}
	})
}

func TestJobCancelRetryAndAttempts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, files.Options{})
		ctx := t.Context()
		st := put(t, e, alice, "bank.csv", transactionsCSV(5))
		queued, _ := e.svc.Enqueue(ctx, alice, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, st.File.ID, nil)
		got, err := e.svc.CancelJob(ctx, alice, queued.ID)
		if err != nil || got.Status != files.JobCancelled {
			t.Fatalf("cancel queued = %+v, %v", got, err)
		}
		if _, err := e.svc.CancelJob(ctx, alice, queued.ID); !errors.Is(err, files.ErrJobFinished) {
			t.Fatalf("cancel twice: %v", err)
		}
		if _, err := e.svc.CancelJob(ctx, bob, queued.ID); !errors.Is(err, files.ErrJobNotFound) {
			t.Fatalf("bob cancels alice's job: %v", err)
		}
		if _, err := e.svc.Job(ctx, bob, queued.ID); !errors.Is(err, files.ErrJobNotFound) {
			t.Fatalf("bob reads alice's job: %v", err)
		}
		// A transient failure is retried after a backoff, then fails when
		// the attempts run out.
		failing, _ := e.svc.Enqueue(ctx, alice, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, st.File.ID, nil)
		o := files.RunnerOptions{Backoff: func(int) time.Duration { return 5 * time.Second },
			Authorize: func(context.Context, files.Job) (knowledge.Caller, error) {
				return knowledge.Caller{}, errors.New("store unreachable")
			}}
		for attempt := 1; attempt <= files.DefaultMaxAttempts; attempt++ {
			if n := runAll(t, e, o); n != 1 {
				t.Fatalf("attempt %d: ran %d", attempt, n)
			}
			j, _ := e.svc.Job(ctx, alice, failing.ID)
			want := files.JobQueued
			if attempt == files.DefaultMaxAttempts {
				want = files.JobFailed
			}
			if j.Status != want || j.Attempts != attempt || j.ErrorCode != "PROCESSING_FAILED" {
				t.Fatalf("after attempt %d: %s, %d attempts, %s", attempt, j.Status, j.Attempts, j.ErrorCode)
			}
			if n := runAll(t, e, o); n != 0 {
				t.Fatalf("ran during the backoff")
			}
			e.clock.Advance(5 * time.Second)
		}
		// A permanent failure is not retried.
		denied, _ := e.svc.Enqueue(ctx, alice, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, st.File.ID, nil)
		runAll(t, e, files.RunnerOptions{Authorize: func(context.Context, files.Job) (knowledge.Caller, error) {
			return knowledge.Caller{UserID: alice.UserID, Allowed: func(a knowledge.Action, r string) bool { return a == knowledge.Read }}, nil
		}})
		if j, _ := e.svc.Job(ctx, alice, denied.ID); j.Status != files.JobFailed || j.ErrorCode != "CONSENT_DENIED" || j.Attempts != 1 {
			t.Fatalf("denied job = %s, %s, %d attempts", j.Status, j.ErrorCode, j.Attempts)
		}
	})
}

// Concurrent workers never hold one job at once.
func TestLeaseIsExclusive(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, files.Options{})
		ctx := t.Context()
		st := put(t, e, alice, "a.txt", []byte("text"))
		const jobs = 12
		for range jobs {
			if _, err := e.svc.Enqueue(ctx, alice, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, st.File.ID, nil); err != nil {
				t.Fatal(err)
			}
		}
		var mu sync.Mutex
		leased := map[string]string{}
		var wg sync.WaitGroup
		for w := range 6 {
			wg.Go(func() {
				owner := fmt.Sprintf("w%d", w)
				for {
					now := e.clock.Now()
					j, ok, err := e.control.LeaseJob(context.WithoutCancel(ctx), owner, now, now.Add(time.Minute))
					if err != nil {
						t.Error(err)
						return
					}
					if !ok {
						return
					}
					mu.Lock()
					if prev, dup := leased[j.ID]; dup {
						t.Errorf("job %s leased by %s and %s", j.ID, prev, owner)
					}
					leased[j.ID] = owner
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(leased) != jobs {
			t.Fatalf("%d jobs leased, want %d", len(leased), jobs)
		}
	})
}

// Users take turns at the workers (issue 34, D5): with a thousand jobs of
// one user queued first, another user's job is the next one leased once a
// worker is busy with the first user's, and then the users alternate.
func TestLeaseTakesUsersInTurn(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, files.Options{})
		ctx := t.Context()
		hog := knowledge.Caller{UserID: "user-hog", AgentID: "claude"}
		st := put(t, e, hog, "a.txt", []byte("text"))
		for range 20 {
			if _, err := e.svc.Enqueue(ctx, hog, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, st.File.ID, nil); err != nil {
				t.Fatal(err)
			}
		}
		e.clock.Advance(time.Second)
		other := knowledge.Caller{UserID: "user-other", AgentID: "claude"}
		late := put(t, e, other, "b.txt", []byte("other text"))
		mine, err := e.svc.Enqueue(ctx, other, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, late.File.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		lease := func(owner string) files.Job {
			t.Helper()
			now := e.clock.Now()
			j, ok, err := e.control.LeaseJob(ctx, owner, now, now.Add(time.Minute))
			if err != nil || !ok {
				t.Fatalf("lease: %v, %v", ok, err)
			}
			return j
		}
		if first := lease("w1"); first.UserID != hog.UserID {
			t.Fatalf("first lease went to %s, want the oldest job's user", first.UserID)
		}
		if second := lease("w2"); second.ID != mine.ID {
			t.Fatalf("second lease = %s of %s, want the other user's job %s (the hog has one running)", second.ID, second.UserID, mine.ID)
		}
		if third := lease("w3"); third.UserID != hog.UserID {
			t.Fatalf("third lease went to %s", third.UserID)
		}
	})
}
