package files

import (
	"context"
	"errors"
	"time"

	"github.com/cairnkg/cairn/knowledge"
)

// Job statuses.
const (
	JobQueued    = "queued"
	JobRunning   = "running"
	JobSucceeded = "succeeded"
	JobFailed    = "failed"
	JobCancelled = "cancelled"
)

// JobInterpret is the kind of job that interprets a file.
const JobInterpret = "interpret"

// DefaultMaxAttempts is how many times a job runs before it fails, counting
// runs a crash interrupted.
const DefaultMaxAttempts = 3

// Job is a durable unit of background work.
type Job struct {
	ID        string
	UserID    string
	AgentID   string
	AgentName string
	// KeyID is the API key whose call queued the job ('' from the command
	// line): the files the job stores of its own count against its upload
	// rate limit (RunnerOptions.AdmitUpload).
	KeyID    string
	Kind     string
	FileID   string
	Status   string
	Progress Progress
	// Attempts counts the runs started, MaxAttempts bounds them.
	Attempts, MaxAttempts int
	RunAfter              time.Time
	LeaseOwner            string
	LeaseUntil            time.Time
	CancelRequested       bool
	// Config is the interpretation configuration the job was asked for.
	Config map[string]any
	// Result is what a finished job reports (counts, column mapping…).
	Result       map[string]any
	ErrorCode    string
	ErrorMessage string
	CreatedAt    time.Time
	StartedAt    time.Time
	FinishedAt   time.Time
	UpdatedAt    time.Time
}

// Finished reports whether the job has reached a final status.
func (j Job) Finished() bool {
	return j.Status == JobSucceeded || j.Status == JobFailed || j.Status == JobCancelled
}

// Progress is how far a job is. ItemsDone is also the checkpoint a resumed
// job continues from.
type Progress struct {
	Stage      string
	Percent    int
	ItemsDone  int64
	ItemsTotal int64
}

// JobQuery selects a user's jobs.
type JobQuery struct {
	Status string // empty: any
	FileID string // empty: any
	Limit  int    // ≤ 0: 50
	// Before pages: jobs created strictly before it (zero: from the
	// newest).
	Before time.Time
}

// JobStore keeps jobs. The control plane implements it; leasing takes
// `FOR UPDATE SKIP LOCKED` on PostgreSQL and the write lock on SQLite, so
// that two workers never hold one job.
type JobStore interface {
	EnqueueJob(ctx context.Context, j Job) error
	// Job returns a user's job, or an error wrapping ErrJobNotFound.
	Job(ctx context.Context, userID, id string) (Job, error)
	// ListJobs returns a user's jobs, newest first.
	ListJobs(ctx context.Context, userID string, q JobQuery) ([]Job, error)
	// LeaseJob hands a runnable job to owner until leaseUntil: a queued
	// job whose RunAfter has come, or a running one whose lease expired
	// (its worker died). Users take turns: the job is the oldest of the
	// user with the fewest jobs running under a live lease, so one user's
	// queue delays another's by at most one job per worker. Attempts is incremented. A job that
	// expired with no attempts left is failed instead. ok is false when
	// nothing is runnable.
	LeaseJob(ctx context.Context, owner string, now, leaseUntil time.Time) (j Job, ok bool, err error)
	// ProgressJob records progress and extends the lease, and reports
	// whether cancellation was asked. ErrLeaseLost if owner no longer
	// holds the job.
	ProgressJob(ctx context.Context, id, owner string, p Progress, now, leaseUntil time.Time) (cancel bool, err error)
	// FinishJob sets a final status; ErrLeaseLost if owner no longer holds
	// the job (so a job never completes twice).
	FinishJob(ctx context.Context, id, owner, status string, result map[string]any, code, message string, now time.Time) error
	// RetryJob puts a running job back in the queue until runAfter,
	// keeping result (what the attempt stored, which the next attempt
	// counts on from); ErrLeaseLost if owner no longer holds the job.
	RetryJob(ctx context.Context, id, owner string, runAfter time.Time, result map[string]any, code, message string, now time.Time) error
	// CancelJob cancels a queued job at once, or asks a running one to
	// stop; ErrJobFinished for a finished one.
	CancelJob(ctx context.Context, userID, id string, now time.Time) (Job, error)
}

// QueuedBy is who queues a job: the consent principal's agent, whose rules
// the job is run under, and the API key of the call (” from the command
// line), whose upload rate limit the files the job stores count against.
type QueuedBy struct {
	AgentID, AgentName, KeyID string
}

// Enqueue queues the interpretation of one of the caller's stored files.
// The caller needs write access to sources; the entities the job creates
// are checked against the agent's consent when it runs (see
// RunnerOptions.Authorize).
func (s *Service) Enqueue(ctx context.Context, c knowledge.Caller, by QueuedBy, fileID string, config map[string]any) (Job, error) {
	if !c.May(knowledge.Write, knowledge.ResourceSources) {
		return Job{}, &knowledge.AccessError{Resource: knowledge.ResourceSources, Action: knowledge.Write}
	}
	f, err := s.storedFile(ctx, c.UserID, fileID)
	if err != nil {
		return Job{}, err
	}
	now := s.clock()
	if config == nil {
		config = map[string]any{}
	}
	j := Job{
		ID: newJobID(), UserID: c.UserID, AgentID: by.AgentID, AgentName: by.AgentName, KeyID: by.KeyID, Kind: JobInterpret, FileID: f.ID,
		Status: JobQueued, Progress: Progress{Stage: "queued"}, MaxAttempts: DefaultMaxAttempts, RunAfter: now,
		Config: config, Result: map[string]any{}, CreatedAt: now, UpdatedAt: now,
	}
	if err := s.jobs.EnqueueJob(ctx, j); err != nil {
		return Job{}, err
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return j, nil
}

// Job returns one of the caller's jobs; the caller needs read access to
// sources. The details of a job whose file holds data the caller may not
// read are withheld (see withhold).
func (s *Service) Job(ctx context.Context, c knowledge.Caller, id string) (Job, error) {
	if !c.May(knowledge.Read, knowledge.ResourceSources) {
		return Job{}, &knowledge.AccessError{Resource: knowledge.ResourceSources, Action: knowledge.Read}
	}
	j, err := s.jobs.Job(ctx, c.UserID, id)
	if err != nil {
		return Job{}, err
	}
	js, err := s.withholdUnreadable(ctx, c, []Job{j})
	if err != nil {
		return Job{}, err
	}
	return js[0], nil
}

// ListJobs returns the caller's jobs, newest first, with the details of
// those whose file holds data the caller may not read withheld.
func (s *Service) ListJobs(ctx context.Context, c knowledge.Caller, q JobQuery) ([]Job, error) {
	if !c.May(knowledge.Read, knowledge.ResourceSources) {
		return nil, &knowledge.AccessError{Resource: knowledge.ResourceSources, Action: knowledge.Read}
	}
	js, err := s.jobs.ListJobs(ctx, c.UserID, q)
	if err != nil {
		return nil, err
	}
	return s.withholdUnreadable(ctx, c, js)
}

// WithheldMessage is what a job whose details are withheld says instead of
// its result and error message.
const WithheldMessage = "details withheld: the file holds data this agent may not read"

// withholdUnreadable withholds the details of the jobs whose file the
// caller may not read (its Types): a job's result names what the file was
// found to be (its entity type, its column mapping, its title), which is
// the file's data. Status, progress, attempts and times stay: an agent
// that queued the job can still tell when it is done.
func (s *Service) withholdUnreadable(ctx context.Context, c knowledge.Caller, js []Job) ([]Job, error) {
	readable := map[string]bool{}
	for i, j := range js {
		ok, seen := readable[j.FileID]
		if !seen {
			f, err := s.meta.File(ctx, c.UserID, j.FileID)
			switch {
			case errors.Is(err, ErrFileNotFound):
				ok = true // a file removed since: nothing of it to protect
			case err != nil:
				return nil, err
			default:
				ok = c.MayReadAll(f.Types)
			}
			readable[j.FileID] = ok
		}
		if !ok {
			js[i] = withhold(j)
		}
	}
	return js, nil
}

// withhold returns j without its details: configuration, result and error
// message (its error code stays).
func withhold(j Job) Job {
	j.Config = map[string]any{}
	j.Result = map[string]any{"withheld": WithheldMessage}
	if j.ErrorMessage != "" {
		j.ErrorMessage = WithheldMessage
	}
	return j
}

// CancelJob cancels one of the caller's jobs (write access to sources).
func (s *Service) CancelJob(ctx context.Context, c knowledge.Caller, id string) (Job, error) {
	if !c.May(knowledge.Write, knowledge.ResourceSources) {
		return Job{}, &knowledge.AccessError{Resource: knowledge.ResourceSources, Action: knowledge.Write}
	}
	return s.jobs.CancelJob(ctx, c.UserID, id, s.clock())
}

// LatestJob returns the newest job of a file, ok false when it has none.
func (s *Service) LatestJob(ctx context.Context, c knowledge.Caller, fileID string) (Job, bool, error) {
	js, err := s.ListJobs(ctx, c, JobQuery{FileID: fileID, Limit: 1})
	if err != nil || len(js) == 0 {
		return Job{}, false, err
	}
	return js[0], true, nil
}
