package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/vector"
)

// cairn admin erase --user NAME: all of a user's data, in every store, the
// user record last (issue 37, docs/forgetting.md). It runs as a job
// (controlplane.UserErasure) in steps, each recorded when done, each
// idempotent: a run that stops (a crash, Ctrl-C) leaves the job at the
// step it had reached, and the next run of the same command takes it up
// there. Within a step, every batch commits on its own and erases what is
// left, so a step run again goes on where it stopped.

// The steps of a user's erasure, in order:
//   - access: the user's keys and OAuth tokens stop authenticating and
//     their interpretation jobs are cancelled, so that nothing writes
//     their data while it goes;
//   - entities: every entity (merged ones too) with everything derived;
//   - sources: the sources left (those no entity holds an observation
//     of), with their files' bytes;
//   - memories: every memory, live or retracted, then the collections;
//   - files: the stored files left (uploaded, never interpreted);
//   - records: profile, agents, consent rules, schemas, contradictions,
//     jobs, OAuth clients and the user record, in one transaction that
//     also marks the job done.
const (
	stepAccess   = "access"
	stepEntities = "entities"
	stepSources  = "sources"
	stepMemories = "memories"
	stepFiles    = "files"
	stepRecords  = "records"
)

var eraseSteps = []string{stepAccess, stepEntities, stepSources, stepMemories, stepFiles, stepRecords}

// userEraser runs one user's erasure.
type userEraser struct {
	a      *admin
	app    *app
	u      consent.User
	caller knowledge.Caller
	job    controlplane.UserErasure
	run    controlplane.ErasureRun
	counts map[string]int
	start  time.Time
}

// eraseUser erases all of u's data, or with --dry-run says what would go.
func (a *admin) eraseUser(ctx context.Context, app *app, u consent.User) error {
	e := &userEraser{a: a, app: app, u: u, caller: knowledge.Caller{UserID: u.ID, AgentID: "operator"}, counts: map[string]int{}, start: time.Now()}
	if a.f.dryRun {
		return e.dryRun(ctx)
	}
	e.run = controlplane.ErasureRun{Runner: controlplane.NewErasureRunner(), Lease: erasureLease}
	job, resumed, err := a.store.BeginUserErasure(ctx, u.ID, stepAccess, "operator", a.f.reason, e.run)
	if err != nil {
		return err
	}
	e.job = job
	// The run holds the erasure while it works: a second run of the same
	// erasure is refused meanwhile, and this one stops if its hold lapsed
	// and another took over.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go e.holdLease(ctx, stop)
	maps.Copy(e.counts, job.Counts)
	if resumed {
		fmt.Fprintf(a.errw, "resuming erasure %s of user %s (started %s) at step %s\n", job.ID, u.Name, job.StartedAt.Format(time.RFC3339), job.Phase)
	} else {
		fmt.Fprintf(a.errw, "erasure %s of user %s\n", job.ID, u.Name)
	}
	i := slices.Index(eraseSteps, job.Phase)
	if i < 0 {
		return fmt.Errorf("erasure %s is at an unknown step %q", job.ID, job.Phase)
	}
	for _, step := range eraseSteps[i:] {
		if err := e.step(ctx, step); err != nil {
			if cause := context.Cause(ctx); cause != nil && errors.Is(cause, controlplane.ErrErasureLost) {
				err = cause
			}
			a.auditErase(ctx, u, "*", err)
			return fmt.Errorf("erasure %s stopped at step %s (run the same command again to resume): %w", job.ID, step, err)
		}
	}
	a.auditErase(ctx, u, "*", nil)
	fmt.Fprintf(a.out, "erased user %s (erasure %s)\n", u.Name, job.ID)
	a.printCounts(e.counts)
	return nil
}

// erasureLease is how long a run holds its erasure before renewing; it
// renews every third of it.
const erasureLease = 30 * time.Second

// holdLease renews the run's hold on its erasure until ctx ends, and stops
// the run (cancelling ctx with the cause) when another run took it over.
// A renewal that fails for another reason is tried again at the next
// tick: the lease outlasts two of them.
func (e *userEraser) holdLease(ctx context.Context, stop context.CancelCauseFunc) {
	t := time.NewTicker(e.run.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := e.a.store.RenewUserErasure(ctx, e.job.ID, e.run); errors.Is(err, controlplane.ErrErasureLost) {
			stop(err)
			return
		}
	}
}

// step runs one step and records the next as reached.
func (e *userEraser) step(ctx context.Context, step string) error {
	var err error
	switch step {
	case stepAccess:
		var n map[string]int
		if n, err = e.a.store.RevokeUserAccess(ctx, e.u.ID); err == nil {
			e.add(n)
		}
	case stepEntities:
		err = e.batches(ctx, step, func(ctx context.Context) ([]string, error) { return e.nextEntities(ctx, 0) }, knowledge.EraseEntity)
	case stepSources:
		err = e.batches(ctx, step, e.nextSources, knowledge.EraseSource)
	case stepMemories:
		err = e.memories(ctx)
	case stepFiles:
		err = e.files(ctx)
	case stepRecords:
		if err := e.settle(ctx); err != nil {
			return err
		}
		// One transaction: the records, the user and the job's end.
		done, err := e.a.store.FinishUserErasure(ctx, e.job.ID, e.run.Runner, e.counts)
		if err != nil {
			return err
		}
		e.counts = done.Counts
		// What the steps deleted must not linger in the store's files
		// (SQLite's write-ahead log): the stores compact, as after any
		// erasure.
		e.compact(ctx)
		e.progress(step)
		return nil
	}
	if err != nil {
		return err
	}
	e.progress(step)
	next := eraseSteps[slices.Index(eraseSteps, step)+1]
	return e.a.store.ProgressUserErasure(ctx, e.job.ID, e.run.Runner, next, e.counts)
}

// settle makes sure nothing of the user's data was written while the
// steps ran (a job that was running when access was revoked finishes its
// batch): it waits for the user's running jobs to stop, then runs the
// data steps again while they find something, a few rounds at most.
func (e *userEraser) settle(ctx context.Context) error {
	for waited := time.Duration(0); ; waited += time.Second {
		n, err := e.a.store.RunningJobs(ctx, e.u.ID)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		if waited >= jobStopWait {
			return fmt.Errorf("%d of the user's jobs still run after %s (asked to stop; see cairn jobs list): run the same command again once they stopped", n, jobStopWait)
		}
		if waited == 0 {
			fmt.Fprintf(e.a.errw, "waiting for %d running job(s) of the user to stop\n", n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	for range 3 {
		left, err := e.leftovers(ctx)
		if err != nil || !left {
			return err
		}
		fmt.Fprintln(e.a.errw, "data of the user was written meanwhile: erasing it")
		for _, step := range []string{stepEntities, stepSources, stepMemories, stepFiles} {
			if err := e.step(ctx, step); err != nil {
				return err
			}
		}
	}
	return errors.New("data of the user is still being written: run the same command again")
}

// jobStopWait is how long the last step waits for the user's running jobs
// to stop.
const jobStopWait = time.Minute

// leftovers reports whether the user still has an entity, a source, a
// memory or a file.
func (e *userEraser) leftovers(ctx context.Context) (bool, error) {
	if ids, err := e.nextEntities(ctx, 0); err != nil || len(ids) > 0 {
		return len(ids) > 0, err
	}
	if ids, err := e.nextSources(ctx); err != nil || len(ids) > 0 {
		return len(ids) > 0, err
	}
	if e.app.memories != nil {
		if ids, _, err := e.nextMemories(ctx); err != nil || len(ids) > 0 {
			return len(ids) > 0, err
		}
	}
	ids, err := e.a.store.FileIDs(ctx, e.u.ID)
	return len(ids) > 0, err
}

func (e *userEraser) add(n map[string]int) {
	for k, v := range n {
		e.counts[k] += v
	}
}

func (e *userEraser) progress(step string) {
	fmt.Fprintf(e.a.errw, "step %s done (%s)\n", step, time.Since(e.start).Round(time.Second))
}

// batches erases what next finds, a batch at a time, until it finds
// nothing, recording the counts after each batch.
func (e *userEraser) batches(ctx context.Context, step string, next func(context.Context) ([]string, error), kind knowledge.EraseKind) error {
	done := 0
	var last []string
	for {
		ids, err := next(ctx)
		if err != nil || len(ids) == 0 {
			return err
		}
		if slices.Equal(ids, last) {
			return fmt.Errorf("erasing %s made no progress: %s are still there after their erasure", step, strings.Join(ids[:min(3, len(ids))], ", "))
		}
		last = ids
		res, err := e.app.knowledge.Erase(ctx, e.caller, knowledge.EraseRequest{Kind: kind, IDs: ids, Reason: e.a.f.reason})
		e.a.auditErase(ctx, e.u, eraseResource(kind), err)
		if err != nil {
			return err
		}
		e.add(res.Counts)
		done += len(ids)
		fmt.Fprintf(e.a.errw, "%d %s erased (%s)\n", done, step, time.Since(e.start).Round(time.Second))
		if err := e.a.store.ProgressUserErasure(ctx, e.job.ID, e.run.Runner, step, e.counts); err != nil {
			return err
		}
	}
}

// nextEntities returns up to a batch of the user's entities, merged ones
// included, from offset.
func (e *userEraser) nextEntities(ctx context.Context, offset int) ([]string, error) {
	var page []graph.Entity
	err := e.app.graph.View(ctx, func(tx *graph.Tx) error {
		var err error
		page, _, err = tx.ListEntities(ctx, graph.EntityFilter{UserID: e.u.ID, IncludeMerged: true, Page: graph.Page{Limit: eraseBatch, Offset: offset}})
		return err
	})
	ids := make([]string, len(page))
	for i, ent := range page {
		ids[i] = ent.ID
	}
	return ids, err
}

// nextSources returns up to a batch of the user's sources, by id.
func (e *userEraser) nextSources(ctx context.Context) ([]string, error) {
	var ids []string
	err := e.eachSourcePage(ctx, func(srcs []graph.Source) bool {
		for _, s := range srcs {
			ids = append(ids, s.ID)
		}
		return false
	})
	return ids, err
}

// eachSourcePage calls fn with each page of the user's sources, by id,
// until fn returns false.
func (e *userEraser) eachSourcePage(ctx context.Context, fn func([]graph.Source) bool) error {
	return e.app.graph.View(ctx, func(tx *graph.Tx) error {
		ex, ok := tx.DriverTx.(graph.Exporter)
		if !ok {
			return errors.New("the graph backend cannot list a user's sources (no graph.Exporter)")
		}
		for after := ""; ; {
			srcs, err := ex.SourcesAfter(ctx, e.u.ID, after, eraseBatch)
			if err != nil || len(srcs) == 0 || !fn(srcs) {
				return err
			}
			after = srcs[len(srcs)-1].ID
		}
	})
}

// nextMemories returns up to a batch of the user's memories, live ones by
// collection, then those only retracted versions are left of, and how
// many memories there are in all.
func (e *userEraser) nextMemories(ctx context.Context) ([]string, int, error) {
	ms := e.app.memories
	cs, err := ms.Collections(ctx, e.u.ID, nil)
	if err != nil {
		return nil, 0, err
	}
	var ids []string
	total := 0
	for _, c := range cs {
		total += c.Count
		if c.Count == 0 || len(ids) == vector.MaxBatch {
			continue
		}
		res, err := ms.Search(ctx, vector.Query{Filter: vector.Filter{UserID: e.u.ID, Collections: []string{c.Name}},
			Sort: vector.SortCreatedAt, Ascending: true, Limit: vector.MaxBatch - len(ids)})
		if err != nil {
			return nil, 0, err
		}
		for _, h := range res.Hits {
			ids = append(ids, h.ID)
		}
	}
	vs, err := ms.Versions(ctx, e.u.ID, nil)
	if err != nil {
		return nil, 0, err
	}
	versioned := uniqueVersionIDs(vs)
	live, err := ms.Get(ctx, e.u.ID, versioned)
	if err != nil {
		return nil, 0, err
	}
	isLive := make(map[string]bool, len(live))
	for _, m := range live {
		isLive[m.ID] = true
	}
	for _, id := range versioned {
		if isLive[id] {
			continue
		}
		total++
		if len(ids) < vector.MaxBatch {
			ids = append(ids, id)
		}
	}
	return ids, total, nil
}

func uniqueVersionIDs(vs []vector.Version) []string {
	var out []string
	for _, v := range vs {
		if len(out) == 0 || out[len(out)-1] != v.ID {
			out = append(out, v.ID)
		}
	}
	return out
}

// memories erases every memory of the user, then their collections.
func (e *userEraser) memories(ctx context.Context) error {
	if e.app.memories == nil {
		return nil
	}
	done := 0
	var last []string
	for {
		ids, _, err := e.nextMemories(ctx)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			break
		}
		if slices.Equal(ids, last) {
			return fmt.Errorf("erasing memories made no progress: %s are still there after their erasure", strings.Join(ids[:min(3, len(ids))], ", "))
		}
		last = ids
		res, err := e.app.knowledge.DeleteMemories(ctx, e.caller, knowledge.MemoryDeletion{IDs: ids, Mode: knowledge.ForgetErase, Reason: e.a.f.reason})
		if err != nil {
			return err
		}
		e.add(res.Counts)
		done += len(ids)
		fmt.Fprintf(e.a.errw, "%d memories erased (%s)\n", done, time.Since(e.start).Round(time.Second))
		if err := e.a.store.ProgressUserErasure(ctx, e.job.ID, e.run.Runner, stepMemories, e.counts); err != nil {
			return err
		}
	}
	n, err := e.app.memories.DropSpaces(ctx, e.u.ID)
	e.add(map[string]int{"collections": n})
	return err
}

// files erases the user's files no source holds (every other went with
// its source).
func (e *userEraser) files(ctx context.Context) error {
	ids, err := e.a.store.FileIDs(ctx, e.u.ID)
	if err != nil || len(ids) == 0 {
		return err
	}
	if e.app.files == nil {
		return fmt.Errorf("the user has %d files and file storage is off: with PostgreSQL, set --blob-url (CAIRN_BLOB_URL) to the bucket that holds them", len(ids))
	}
	for _, id := range ids {
		had, err := e.app.files.EraseFile(ctx, e.u.ID, id)
		if err != nil {
			return err
		}
		if had {
			e.counts["files"]++
		}
	}
	return nil
}

func (e *userEraser) compact(ctx context.Context) {
	if err := e.app.graph.Compact(ctx); err != nil {
		fmt.Fprintf(e.a.errw, "the graph store was not compacted: %v\n", err)
	}
	if e.app.memories != nil {
		if err := e.app.memories.Compact(ctx); err != nil {
			fmt.Fprintf(e.a.errw, "the memory store was not compacted: %v\n", err)
		}
	}
}

// dryRun counts what erasing the user would remove, changing nothing.
func (e *userEraser) dryRun(ctx context.Context) error {
	entities := 0
	for {
		ids, err := e.nextEntities(ctx, entities)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			break
		}
		res, err := e.app.knowledge.Erase(ctx, e.caller, knowledge.EraseRequest{Kind: knowledge.EraseEntity, IDs: ids, DryRun: true})
		if err != nil {
			return err
		}
		e.add(res.Counts)
		entities += len(ids)
		fmt.Fprintf(e.a.errw, "%d entities counted (%s)\n", entities, time.Since(e.start).Round(time.Second))
	}
	// Sources: every one the user has (the entities' erasure takes some
	// of them; the rest go on their own).
	sources := 0
	if err := e.eachSourcePage(ctx, func(srcs []graph.Source) bool { sources += len(srcs); return true }); err != nil {
		return err
	}
	e.counts["sources"] = sources
	if e.app.memories != nil {
		_, total, err := e.nextMemories(ctx)
		if err != nil {
			return err
		}
		e.counts["memories"] = total
	}
	fids, err := e.a.store.FileIDs(ctx, e.u.ID)
	if err != nil {
		return err
	}
	e.counts["files"] = len(fids)
	records, err := e.a.store.UserRecords(ctx, e.u.ID)
	if err != nil {
		return err
	}
	e.add(records)
	fmt.Fprintf(e.a.out, "would erase user %s\n", e.u.Name)
	e.a.printCounts(e.counts)
	return nil
}

// erasures lists the most recent erasures of users, newest first.
func (a *admin) erasures(ctx context.Context) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	if a.f.limit <= 0 || a.f.limit > 10000 {
		return usageError{"--limit must be 1 to 10000"}
	}
	es, err := a.store.UserErasures(ctx, a.f.limit)
	if err != nil {
		return err
	}
	a.table("ERASURE\tUSER ID\tSTATUS\tSTEP\tSTARTED\tFINISHED\tERASED", func(w io.Writer) {
		for _, e := range es {
			finished := "-"
			if !e.FinishedAt.IsZero() {
				finished = e.FinishedAt.Format(time.RFC3339)
			}
			step := e.Phase
			if step == "" {
				step = "-"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.UserID, e.Status, step, e.StartedAt.Format(time.RFC3339), finished, countsLine(e.Counts))
		}
	})
	return nil
}

// countsLine writes counts as kind=n pairs, by kind.
func countsLine(counts map[string]int) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", k, counts[k])
	}
	return b.String()
}
