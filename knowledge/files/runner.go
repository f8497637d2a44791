package files

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/interpret"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// RunnerOptions configure the workers. The zero value is usable.
type RunnerOptions struct {
	// Workers is how many jobs run at once in this process; 0 means 1.
	Workers int
	// Lease is how long a job stays leased without a sign of life from its
	// worker; 0 means 30 s. A worker renews it with every batch, and every
	// Lease/3 while the file is interpreted.
	Lease time.Duration
	// Poll is how often an idle worker looks for jobs queued by other
	// processes; 0 means 1 s.
	Poll time.Duration
	// Batch is how many records are stored per call of the store pipeline
	// (and per checkpoint); 0 means 100.
	Batch int
	// Authorize returns the caller a job runs as: its user, and what its
	// agent may do now. nil runs every job as its user with no consent
	// filter.
	Authorize func(ctx context.Context, j Job) (knowledge.Caller, error)
	// Backoff is the delay before attempt n+1 after a transient failure of
	// attempt n; nil means 1 s, 2 s, 4 s … capped at 30 s (the Arkiver
	// contract's retry rules).
	Backoff func(attempt int) time.Duration
	// Owner names this process in leases; empty means host and pid.
	Owner string
	// AdmitUpload, when set, says whether the key that queued a job
	// (Job.KeyID) may upload one more file now; it is asked before each
	// file the job stores of its own (an e-mail's attachment), so that the
	// upload rate limit counts those as the key's uploads. A refused
	// attachment is not stored: the job's result names it
	// (attachments_refused), and interpreting the file again later stores
	// it. nil admits every file.
	AdmitUpload func(ctx context.Context, keyID string) (bool, error)
	// OnFailed, when set, is told of each job this process's workers end
	// as failed (Status, ErrorCode and ErrorMessage set), once that is
	// recorded: cairn serve tells the user's sessions.
	OnFailed func(ctx context.Context, j Job)
}

// Run runs workers until ctx ends; it returns once they have stopped. A job
// interrupted by the end of ctx keeps its lease until it expires, then
// another worker (or this process, restarted) resumes it.
func (s *Service) Run(ctx context.Context, o RunnerOptions) {
	o.Workers = cmp.Or(o.Workers, 1)
	o.Lease = cmp.Or(o.Lease, 30*time.Second)
	o.Poll = cmp.Or(o.Poll, time.Second)
	o.Batch = cmp.Or(o.Batch, 100)
	if o.Backoff == nil {
		o.Backoff = func(n int) time.Duration {
			return min(time.Second*time.Duration(math.Pow(2, float64(max(n-1, 0)))), 30*time.Second)
		}
	}
	if o.Owner == "" {
		host, _ := os.Hostname()
		o.Owner = host + "/" + strconv.Itoa(os.Getpid())
	}
	var wg sync.WaitGroup
	for i := range o.Workers {
		owner := o.Owner + "/" + strconv.Itoa(i) + "/" + randomHex(4)
		wg.Go(func() { s.work(ctx, o, owner) })
	}
	wg.Wait()
}

func (s *Service) work(ctx context.Context, o RunnerOptions, owner string) {
	for ctx.Err() == nil {
		ran, err := s.RunOne(ctx, o, owner)
		if err != nil && ctx.Err() == nil {
			s.log.Error("job worker", "err", err)
		}
		if ran {
			continue
		}
		t := time.NewTimer(o.Poll)
		select {
		case <-ctx.Done():
		case <-s.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// RunOne leases one runnable job and runs it to an end (success, failure,
// cancellation or a retry later); ran is false when nothing was runnable.
func (s *Service) RunOne(ctx context.Context, o RunnerOptions, owner string) (ran bool, err error) {
	o.Lease = cmp.Or(o.Lease, 30*time.Second)
	o.Batch = cmp.Or(o.Batch, 100)
	now := s.clock()
	j, ok, err := s.jobs.LeaseJob(ctx, owner, now, now.Add(o.Lease))
	if err != nil || !ok {
		return false, err
	}
	r := &run{s: s, o: o, owner: owner, job: j}
	r.carryOver(j.Result)
	res, err := r.interpret(ctx)
	switch {
	case ctx.Err() != nil:
		// Shutting down: the lease expires and the job resumes later.
		return true, nil
	case errors.Is(err, ErrLeaseLost):
		s.log.Warn("job lease lost; another worker has it", "job", j.ID)
		return true, nil
	case errors.Is(err, errCancelled):
		return true, s.jobs.FinishJob(ctx, j.ID, owner, JobCancelled, r.result(res), "", "", s.clock())
	case err != nil:
		code, msg, transient := classify(err)
		if transient && j.Attempts < cmp.Or(j.MaxAttempts, DefaultMaxAttempts) {
			s.log.Warn("job failed; retrying", "job", j.ID, "attempt", j.Attempts, "err", err)
			backoff := o.Backoff
			if backoff == nil {
				backoff = func(int) time.Duration { return time.Second }
			}
			return true, s.jobs.RetryJob(ctx, j.ID, owner, s.clock().Add(backoff(j.Attempts)), r.result(res), code, msg, s.clock())
		}
		s.log.Warn("job failed", "job", j.ID, "code", code, "err", err)
		// What the job stored before it failed stays: its result counts it
		// and its message says so.
		out := r.result(res)
		if kept := r.kept(); kept != "" {
			out["stored_before_failure"] = true
			msg += "; before it failed the job stored " + kept + ", which stay"
		}
		if err := s.jobs.FinishJob(ctx, j.ID, owner, JobFailed, out, code, msg, s.clock()); err != nil {
			return true, err
		}
		if o.OnFailed != nil {
			j.Status, j.ErrorCode, j.ErrorMessage = JobFailed, code, msg
			o.OnFailed(ctx, j)
		}
		return true, nil
	}
	return true, s.jobs.FinishJob(ctx, j.ID, owner, JobSucceeded, r.result(res), "", "", s.clock())
}

var errCancelled = errors.New("job cancelled")

// run is one attempt at one job.
type run struct {
	s     *Service
	o     RunnerOptions
	owner string
	job   Job
	// counts, for the result
	entitiesCreated, observationsCreated int
	memoryID                             string
	attachments                          []string
	// refused are the attachments the upload rate limit refused.
	refused []string
	// schemasCreated are the schemas the job's stores created for types
	// the user's data had none of (this run's: a resumed job reports only
	// those created after it resumed).
	schemasCreated []*schema.Schema
}

// interpret reads the file, interprets it and stores the records from the
// job's checkpoint on, a batch at a time.
func (r *run) interpret(ctx context.Context) (interpret.Result, error) {
	j := r.job
	c := knowledge.Caller{UserID: j.UserID, AgentID: j.AgentName}
	if r.o.Authorize != nil {
		var err error
		if c, err = r.o.Authorize(ctx, j); err != nil {
			return interpret.Result{}, err
		}
	}
	if err := r.progress(ctx, Progress{Stage: "reading", ItemsDone: j.Progress.ItemsDone, ItemsTotal: j.Progress.ItemsTotal}); err != nil {
		return interpret.Result{}, err
	}
	data, f, err := r.s.ReadAll(ctx, j.UserID, j.FileID)
	if err != nil {
		return interpret.Result{}, err
	}
	if err := r.progress(ctx, Progress{Stage: "interpreting", ItemsDone: j.Progress.ItemsDone, ItemsTotal: j.Progress.ItemsTotal}); err != nil {
		return interpret.Result{}, err
	}
	res, err := r.read(ctx, interpret.Document{Data: data, MimeType: f.MimeType, Filename: f.Filename, Config: j.Config, UserID: j.UserID})
	if err != nil {
		return res, err
	}
	total := int64(len(res.Records))
	done := min(j.Progress.ItemsDone, total)
	base := map[string]any{
		"source_refs":       []any{f.ID},
		"extractor_version": res.Interpreter + "@" + res.Version,
		"extracted_at":      j.CreatedAt.UTC().Format(time.RFC3339Nano),
		"file":              map[string]any{"source_id": f.ID, "filename": f.Filename, "content_hash": f.ContentHash, "mime_type": f.MimeType},
		"interpretation": map[string]any{
			"job_id": j.ID, "interpreter": res.Interpreter, "interpretation_config": res.Config,
		},
	}
	for done < total {
		end := min(done+int64(r.o.Batch), total)
		batch := res.Records[done:end]
		ents := make([]map[string]any, len(batch))
		ranges := make([]any, len(batch))
		for i, rec := range batch {
			ents[i] = rec.Entity
			ranges[i] = map[string]any{"unit": rec.Range.Unit, "start": rec.Range.Start, "end": rec.Range.End}
		}
		prov := map[string]any{}
		for k, v := range base {
			prov[k] = v
		}
		prov["ranges"] = ranges
		// The file's types grow before what it holds is stored: no
		// derived record is readable by an agent the file's types would
		// refuse, not even for the time between two writes.
		if err := r.s.meta.AddFileTypes(ctx, j.UserID, f.ID, recordTypes(batch)); err != nil {
			return res, err
		}
		req := knowledge.StoreRequest{Entities: ents, Provenance: prov}
		if res.Schema != nil {
			req.TypeSchemas = map[string]*schema.Schema{res.Schema.EntityType: res.Schema}
		}
		out, err := r.s.know.Store(ctx, c, req)
		if err != nil {
			return res, err
		}
		r.schemasCreated = append(r.schemasCreated, out.SchemasCreated...)
		if !out.Deduplicated {
			r.entitiesCreated += out.EntitiesCreated
			r.observationsCreated += out.ObservationsCreated
		}
		done = end
		if err := r.progress(ctx, Progress{Stage: "storing", ItemsDone: done, ItemsTotal: total,
			Percent: int(100 * done / max(total, 1))}); err != nil {
			return res, err
		}
	}
	// The file's text is embedded as a memory: seconds for a long text on
	// a busy machine, more than a lease; the heartbeat keeps it.
	if err := r.beating(ctx, func(ctx context.Context) error { return r.finishExtras(ctx, c, f, res) }); err != nil {
		return res, err
	}
	return res, r.progress(ctx, Progress{Stage: "done", ItemsDone: total, ItemsTotal: total, Percent: 100})
}

// cancelPoll is how often a job being interpreted looks whether it was
// cancelled.
const cancelPoll = time.Second

// read parses the file (in a worker process, with the service's Parser)
// and enriches it with the model. Neither reports progress, so meanwhile a
// heartbeat renews the lease every Lease/3 and looks every second whether
// the job was cancelled: a cancelled job, or one whose lease was lost,
// stops its interpretation (the worker is killed) and read returns
// errCancelled or ErrLeaseLost.
func (r *run) read(ctx context.Context, d interpret.Document) (interpret.Result, error) {
	var res interpret.Result
	err := r.beating(ctx, func(ctx context.Context) error {
		var err error
		res, err = r.s.parser.Parse(ctx, d)
		if err == nil {
			res, err = r.s.interpreters.Enrich(ctx, d, res)
		}
		return err
	})
	return res, err
}

// beating runs f, which reports no progress of its own, while a heartbeat
// keeps the job's lease (see read): f's context ends when the job is
// cancelled or its lease lost, and beating then returns errCancelled or
// ErrLeaseLost.
func (r *run) beating(ctx context.Context, f func(context.Context) error) error {
	ictx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	beat := make(chan struct{})
	go func() {
		defer close(beat)
		r.heartbeat(ictx, stop, r.job.Progress)
	}()
	err := f(ictx)
	stop(nil)
	<-beat
	if cause := context.Cause(ictx); ctx.Err() == nil && (errors.Is(cause, errCancelled) || errors.Is(cause, ErrLeaseLost)) {
		return cause
	}
	return err
}

// heartbeat keeps the lease of a job whose file is being interpreted and
// stops the interpretation (stop) when the job is cancelled or its lease
// lost. It returns when ctx ends.
func (r *run) heartbeat(ctx context.Context, stop context.CancelCauseFunc, p Progress) {
	renewEvery := max(r.o.Lease/3, time.Millisecond)
	t := time.NewTicker(min(renewEvery, cancelPoll))
	defer t.Stop()
	renewed := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var (
			cancel bool
			err    error
		)
		if time.Since(renewed) >= renewEvery {
			now := r.s.clock()
			cancel, err = r.s.jobs.ProgressJob(ctx, r.job.ID, r.owner, p, now, now.Add(r.o.Lease))
			if err == nil {
				renewed = time.Now()
			}
		} else {
			var j Job
			j, err = r.s.jobs.Job(ctx, r.job.UserID, r.job.ID)
			cancel = err == nil && j.CancelRequested
			if err == nil && j.LeaseOwner != r.owner {
				err = ErrLeaseLost
			}
		}
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, ErrLeaseLost):
			stop(ErrLeaseLost)
			return
		case err != nil:
			r.s.log.Warn("job heartbeat", "job", r.job.ID, "err", err)
		case cancel:
			stop(errCancelled)
			return
		}
	}
}

// finishExtras saves the file's text as a memory for search and stores
// the attachments an e-mail carried as their own files.
func (r *run) finishExtras(ctx context.Context, c knowledge.Caller, f File, res interpret.Result) error {
	for _, a := range res.Attachments {
		if r.o.AdmitUpload != nil {
			ok, err := r.o.AdmitUpload(ctx, r.job.KeyID)
			if err != nil {
				return err
			}
			if !ok {
				r.refused = append(r.refused, a.Filename)
				continue
			}
		}
		st, err := r.s.Put(ctx, c, bytes.NewReader(a.Data), PutRequest{Filename: a.Filename, MimeType: a.MimeType})
		var unsupported *UnsupportedError
		if errors.As(err, &unsupported) {
			continue
		}
		if err != nil {
			return err
		}
		if !slices.Contains(r.attachments, st.File.ID) {
			r.attachments = append(r.attachments, st.File.ID)
		}
		// A new file is queued; so is one an earlier attempt stored but
		// failed to queue (the attempt ended between the two).
		queue := !st.Deduplicated
		if !queue {
			js, err := r.s.jobs.ListJobs(ctx, c.UserID, JobQuery{FileID: st.File.ID, Limit: 1})
			if err != nil {
				return err
			}
			queue = len(js) == 0
		}
		if queue {
			by := QueuedBy{AgentID: r.job.AgentID, AgentName: r.job.AgentName, KeyID: r.job.KeyID}
			if _, err := r.s.Enqueue(ctx, c, by, st.File.ID, r.job.Config); err != nil {
				return err
			}
		}
	}
	if res.Text == "" {
		return nil
	}
	title := cmp.Or(res.Title, f.Filename, f.ID)
	// The text is cut to what a stored value may hold (its JSON encoding
	// is bounded, and escapes make it longer than the text): halved until
	// it fits.
	for n := maxMemoryText; ; n /= 2 {
		m, err := r.s.know.SaveMemory(ctx, c, knowledge.MemoryRequest{
			Collection: MemoryCollection, Title: title, Text: truncateText(res.Text, n), SourceID: f.ID, Types: recordTypes(res.Records),
			Tags:     []string{"file", res.Interpreter},
			Metadata: map[string]any{"file_id": f.ID, "filename": f.Filename, "mime_type": f.MimeType, "job_id": r.job.ID},
		})
		var verr *knowledge.ValidationError
		switch {
		case errors.Is(err, knowledge.ErrMemoriesUnavailable):
			return nil
		case errors.As(err, &verr) && verr.Field == "text" && n > 1024:
			continue
		case err != nil:
			return err
		}
		r.memoryID = m.ID
		return nil
	}
}

// recordTypes returns the entity types of records, normalised as the store
// pipeline names them, sorted and without repeats.
func recordTypes(recs []interpret.Record) []string {
	var out []string
	for _, rec := range recs {
		if t, ok := rec.Entity["entity_type"].(string); ok {
			out = append(out, schema.NormalizeTypeName(t))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// MemoryCollection holds the text of interpreted files.
const MemoryCollection = "files"

// maxMemoryText bounds the text kept as a file's memory.
const maxMemoryText = 60 << 10

func (r *run) progress(ctx context.Context, p Progress) error {
	now := r.s.clock()
	cancel, err := r.s.jobs.ProgressJob(ctx, r.job.ID, r.owner, p, now, now.Add(r.o.Lease))
	if err != nil {
		return err
	}
	r.job.Progress = p
	if cancel {
		return errCancelled
	}
	return nil
}

// carryOver starts the counts from what earlier attempts of the job stored,
// which RetryJob kept in its result: a job that fails on its last attempt
// reports everything it stored. (A batch redone on resuming is
// deduplicated and not counted twice. An attempt a crash ended saved no
// counts: what it stored is stored, but not counted.)
func (r *run) carryOver(prev map[string]any) {
	count := func(k string) int {
		switch n := prev[k].(type) {
		case float64:
			return int(n)
		case int:
			return n
		}
		return 0
	}
	r.entitiesCreated = count("entities_created")
	r.observationsCreated = count("observations_created")
	r.memoryID, _ = prev["memory_id"].(string)
	switch ids := prev["attachment_file_ids"].(type) {
	case []string:
		r.attachments = append(r.attachments, ids...)
	case []any:
		for _, id := range ids {
			if s, ok := id.(string); ok {
				r.attachments = append(r.attachments, s)
			}
		}
	}
}

// kept describes what the job stored (entities, observations, the
// memory, attachments), for a failed job's message; empty when nothing.
// Nothing is undone when a job fails: each batch is stored, and
// deduplicated, on its own.
func (r *run) kept() string {
	var parts []string
	if r.entitiesCreated > 0 || r.observationsCreated > 0 {
		parts = append(parts, fmt.Sprintf("%d entities and %d observations", r.entitiesCreated, r.observationsCreated))
	}
	if r.memoryID != "" {
		parts = append(parts, "memory "+r.memoryID)
	}
	if len(r.attachments) > 0 {
		parts = append(parts, fmt.Sprintf("%d attachments as files", len(r.attachments)))
	}
	return strings.Join(parts, ", ")
}

// result is what the job reports when it ends. A failed job's result
// counts what it stored before it failed.
func (r *run) result(res interpret.Result) map[string]any {
	out := map[string]any{
		"interpreter": res.Interpreter, "entities_created": r.entitiesCreated, "observations_created": r.observationsCreated,
		"records": len(res.Records), "run_id": "run_" + r.job.ID,
	}
	if res.EntityType != "" {
		out["entity_type"] = res.EntityType
	}
	if len(res.Mapping) > 0 {
		out["column_mapping"] = res.Mapping
	}
	if len(r.schemasCreated) > 0 {
		created := make([]any, len(r.schemasCreated))
		for i, sc := range r.schemasCreated {
			created[i] = map[string]any{"entity_type": sc.EntityType, "schema_version": sc.Version, "scope": sc.Scope(),
				"identity_fields": append([]string{}, sc.IdentityFields...)}
		}
		out["schema_created"] = created
	}
	if res.Skipped != "" {
		out["interpretation_skipped"] = res.Skipped
	}
	if len(res.Config) > 0 {
		out["interpretation_config"] = res.Config
	}
	if r.memoryID != "" {
		out["memory_id"] = r.memoryID
	}
	if len(r.attachments) > 0 {
		out["attachment_file_ids"] = r.attachments
	}
	if len(r.refused) > 0 {
		out["attachments_refused"] = map[string]any{"filenames": r.refused,
			"reason": "the upload rate limit of the key that queued the job: interpret the file again later to store them"}
	}
	for k, v := range res.Meta {
		out[k] = v
	}
	return out
}

// classify maps a job's error onto an error code, its message, and whether
// another attempt may succeed.
func classify(err error) (code, msg string, transient bool) {
	var (
		verr   *knowledge.ValidationError
		forbid *knowledge.ForbiddenError
		access *knowledge.AccessError
		terr   *interpret.TransientError
		tooBig *interpret.TooComplexError
		quota  *QuotaError
	)
	switch {
	case errors.As(err, &quota):
		// Retrying cannot free room: the user must delete files or
		// the operator raise the quota.
		return "QUOTA_EXCEEDED", err.Error(), false
	case errors.As(err, &tooBig):
		// Before ErrUnreadable, which the parsers' input budgets also wrap.
		return "FILE_TOO_COMPLEX", fmt.Sprintf("the file is too complex to interpret: it went over the %s limit (%v)", tooBig.Limit, err), false
	case errors.As(err, &verr):
		return "VALIDATION_ERROR", err.Error(), false
	case errors.As(err, &forbid), errors.As(err, &access):
		return "CONSENT_DENIED", err.Error(), false
	case errors.Is(err, ErrFileNotFound):
		return "FILE_NOT_FOUND", err.Error(), false
	case errors.Is(err, interpret.ErrUnreadable):
		return "ANALYSIS_FAILED", err.Error(), false
	case errors.As(err, &terr):
		return "ANALYSIS_FAILED", err.Error(), true
	}
	return "PROCESSING_FAILED", fmt.Sprintf("%v", err), true
}

func newJobID() string { return "job_" + randomHex(12) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
