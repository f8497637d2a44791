package mcp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
)

// ToolsetFiles holds the tools of stored files and their interpretation
// jobs (store itself takes the files, in the entities toolset).
const ToolsetFiles Toolset = "files"

// Error codes of files and jobs (Neotoma §5, Arkiver §3.2).
const (
	CodeFileNotFound        = "FILE_NOT_FOUND"
	CodeFileTooLarge        = "FILE_TOO_LARGE"
	CodeUnsupportedFileType = "UNSUPPORTED_FILE_TYPE"
	CodeQuotaExceeded       = "QUOTA_EXCEEDED"
	CodeFileReadError       = "FILE_READ_ERROR"
	CodeSigningFailed       = "SIGNING_FAILED"
	CodeJobNotFound         = "JOB_NOT_FOUND"
	CodeJobCompleted        = "JOB_ALREADY_COMPLETED"
)

// filesError maps the files package's errors onto the envelope; nil for
// any other error.
func filesError(err error) *Error {
	var (
		large  *files.TooLargeError
		unsupp *files.UnsupportedError
		quota  *files.QuotaError
	)
	switch {
	case errors.As(err, &large):
		return newError(http.StatusRequestEntityTooLarge, CodeFileTooLarge, fmt.Sprintf("file exceeds the %d-byte limit", large.Max),
			map[string]any{"file_size_bytes": large.Size, "max_size_bytes": large.Max})
	case errors.As(err, &unsupp):
		return newError(http.StatusBadRequest, CodeUnsupportedFileType, unsupp.Error(),
			map[string]any{"mime_type": unsupp.MimeType, "supported": unsupp.Supported})
	case errors.As(err, &quota):
		return newError(http.StatusTooManyRequests, CodeQuotaExceeded, quota.Error(),
			map[string]any{"used_bytes": quota.Used, "quota_bytes": quota.Quota, "file_size_bytes": quota.Size})
	case errors.Is(err, files.ErrFileNotFound):
		return newError(http.StatusNotFound, CodeFileNotFound, "no such file", nil)
	case errors.Is(err, files.ErrJobNotFound):
		return newError(http.StatusNotFound, CodeJobNotFound, "no such job", nil)
	case errors.Is(err, files.ErrJobFinished):
		return newError(http.StatusBadRequest, CodeJobCompleted, "the job has already finished", nil)
	case errors.Is(err, files.ErrNoSigning):
		return newError(http.StatusInternalServerError, CodeSigningFailed, err.Error(), nil)
	}
	return nil
}

// filesUnavailable is the answer of a file tool on a server built without
// file storage.
var filesUnavailable = newError(http.StatusServiceUnavailable, CodeServiceUnavailable, "file storage is not configured on this server", nil)

// storeFile is store with file_content or file_path: the file is stored,
// and its interpretation queued unless interpret is false or the user had
// stored these bytes (and had them interpreted) before. It answers at once.
func storeFile(ctx context.Context, d Deps, call *Call, in StoreIn) (StoreOut, error) {
	if d.Files == nil {
		return StoreOut{}, filesUnavailable
	}
	if in.FileContent != nil && in.FilePath != nil {
		return StoreOut{}, &knowledge.ValidationError{Field: "file_path", Expected: "file_content or file_path", Got: "both",
			Message: "send either file_content or file_path, not both"}
	}
	if d.Limiter != nil {
		v, err := d.Limiter.Allow(ctx, call.Principal.KeyID, consent.RateClassUpload)
		if err != nil {
			return StoreOut{}, newError(http.StatusServiceUnavailable, CodeServiceUnavailable, "the rate limiter is unavailable; retry shortly", nil)
		}
		if !v.Allowed {
			return StoreOut{}, rateLimited(v)
		}
	}
	req := files.PutRequest{Filename: deref(in.OriginalFilename), MimeType: deref(in.MimeType)}
	var stored files.Stored
	if in.FileContent != nil {
		data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(*in.FileContent))
		if err != nil {
			return StoreOut{}, &knowledge.ValidationError{Field: "file_content", Expected: "base64", Got: "string", Message: "is not valid base64"}
		}
		if stored, err = d.Files.Put(ctx, call.Caller(), strings.NewReader(string(data)), req); err != nil {
			return StoreOut{}, err
		}
	} else {
		f, name, err := openUnderRoots(call, d.FileRoots, *in.FilePath)
		if err != nil {
			return StoreOut{}, err
		}
		defer f.Close()
		if req.Filename == "" {
			req.Filename = name
		}
		if stored, err = d.Files.Put(ctx, call.Caller(), f, req); err != nil {
			var pathErr *os.PathError
			if errors.As(err, &pathErr) {
				return StoreOut{}, newError(http.StatusInternalServerError, CodeFileReadError, "the file could not be read", nil)
			}
			return StoreOut{}, err
		}
	}
	f := stored.File
	size := f.Size
	out := StoreOut{SourceID: f.ID, ContentHash: f.ContentHash, Deduplicated: stored.Deduplicated, FileSize: &size, MimeType: f.MimeType,
		Entities: []StoredEntityOut{}, RelatedEntities: []EntityOut{}, RelatedRelationships: []RelationshipOut{}}
	if in.Interpret != nil && !*in.Interpret {
		return out, nil
	}
	if stored.Deduplicated {
		// Interpretation is skipped for a file stored before, unless it
		// was never interpreted.
		if _, ok, err := d.Files.LatestJob(ctx, call.Caller(), f.ID); err != nil || ok {
			return out, err
		}
	}
	job, err := d.Files.Enqueue(ctx, call.Caller(), queuedBy(call.Principal), f.ID, in.InterpretationConfig)
	if err != nil {
		return StoreOut{}, err
	}
	out.JobID, out.JobStatus = job.ID, job.Status
	out.Interpretation = &InterpretationOut{RunID: runID(job)}
	return out, nil
}

// openUnderRoots opens a local file for store's file_path: only on stdio
// (the server reads its own disk for its one local user) and only under
// the operator's --file-roots.
func openUnderRoots(call *Call, roots []string, p string) (*os.File, string, error) {
	bad := func(msg string) error {
		return &knowledge.ValidationError{Field: "file_path", Expected: "a file under an allowed directory", Got: "a path", Message: msg}
	}
	if call.Transport != TransportStdio && call.Transport != TransportInProc {
		return nil, "", bad("file_path works on stdio only; over HTTP send file_content or POST /api/files")
	}
	if len(roots) == 0 {
		return nil, "", bad("no directory is open to file_path on this server (cairn stdio --file-roots)")
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, "", bad("not a valid path")
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, "", newError(http.StatusNotFound, CodeFileNotFound, "no file at file_path", nil)
	}
	inside := false
	for _, r := range roots {
		rr, err := filepath.EvalSymlinks(r)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(rr, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			inside = true
			break
		}
	}
	if !inside {
		return nil, "", bad("is not under a directory open to file_path (--file-roots)")
	}
	f, err := openRegular(real)
	if errors.Is(err, errNotRegular) {
		return nil, "", bad("is not a regular file (a directory, FIFO, socket or device cannot be stored)")
	}
	if err != nil {
		return nil, "", newError(http.StatusInternalServerError, CodeFileReadError, "the file could not be read", nil)
	}
	return f, filepath.Base(real), nil
}

// errNotRegular is openRegular's error for anything but a regular file.
var errNotRegular = errors.New("not a regular file")

// openRegular opens p for reading only if it is a regular file. It opens
// with O_NONBLOCK, so that opening a FIFO with no writer does not block,
// and then checks the opened descriptor, not the path, so that the file
// cannot be swapped for another between the check and the read. Reads of
// a regular file ignore O_NONBLOCK.
func openRegular(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		// A socket cannot be opened at all.
		if st, serr := os.Stat(p); serr == nil && !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: %w", p, errNotRegular)
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w", p, errNotRegular)
	}
	return f, nil
}

func runID(j files.Job) string { return "run_" + j.ID }

// FileURLIn are the arguments of retrieve_file_url.
type FileURLIn struct {
	FilePath  string `json:"file_path" jsonschema:"the file's id: source_id from store, or fileId"`
	ExpiresIn *int   `json:"expires_in,omitempty" jsonschema:"seconds"`
}

// FileURLOut is a signed URL.
type FileURLOut struct {
	SignedURL string `json:"signed_url"`
	ExpiresAt string `json:"expires_at"`
}

func retrieveFileURLTool(d Deps) *Tool {
	t := newTool(toolSpec{
		name: "retrieve_file_url", title: "Get a file's URL",
		description: "Get a time-limited URL to download a stored file's original bytes.",
		toolset:     ToolsetFiles, ann: readOnly, budget: BudgetList,
		requires: reads(knowledge.ResourceSources),
		shape: func(s *jsonschema.Schema) {
			maxLen(prop(s, "file_path"), idLimit)
			bounds(prop(s, "expires_in"), 1, files.MaxURLTTL.Seconds())
			setDefault(prop(s, "expires_in"), int(files.DefaultURLTTL.Seconds()))
		},
	}, func(ctx context.Context, call *Call, in FileURLIn) (FileURLOut, error) {
		if d.Files == nil {
			return FileURLOut{}, filesUnavailable
		}
		u, err := d.Files.SignURL(ctx, call.Caller(), in.FilePath, time.Duration(deref(in.ExpiresIn))*time.Second)
		if err != nil {
			return FileURLOut{}, err
		}
		return FileURLOut{SignedURL: u.URL, ExpiresAt: u.ExpiresAt.Format(time.RFC3339)}, nil
	})
	// v0's name for it.
	t.Aliases = []string{"get_file_url"}
	return t
}

// JobOut is a job as get_job, list_jobs and cancel_job show it.
type JobOut struct {
	JobID      string         `json:"job_id"`
	FileID     string         `json:"file_id"`
	Status     string         `json:"status" jsonschema:"queued, running, succeeded, failed or cancelled"`
	Stage      string         `json:"stage"`
	Percent    int            `json:"percent"`
	ItemsDone  int64          `json:"items_done"`
	ItemsTotal int64          `json:"items_total"`
	Attempts   int            `json:"attempts"`
	Result     map[string]any `json:"result,omitempty"`
	Error      *ErrorBody     `json:"error,omitempty"`
	CreatedAt  string         `json:"created_at"`
	StartedAt  string         `json:"started_at,omitempty"`
	FinishedAt string         `json:"finished_at,omitempty"`
}

func jobOut(j files.Job) JobOut {
	out := JobOut{JobID: j.ID, FileID: j.FileID, Status: j.Status, Stage: j.Progress.Stage, Percent: j.Progress.Percent,
		ItemsDone: j.Progress.ItemsDone, ItemsTotal: j.Progress.ItemsTotal, Attempts: j.Attempts, CreatedAt: stamp(j.CreatedAt),
		StartedAt: stamp(j.StartedAt), FinishedAt: stamp(j.FinishedAt)}
	if len(j.Result) > 0 {
		out.Result = j.Result
	}
	if j.ErrorCode != "" && j.Status != files.JobSucceeded {
		out.Error = &ErrorBody{Code: j.ErrorCode, Message: j.ErrorMessage}
	}
	return out
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// JobIn names a job.
type JobIn struct {
	JobID string `json:"job_id"`
}

func getJobTool(d Deps) *Tool {
	return newTool(toolSpec{
		name: "get_job", title: "Get a job",
		description: "Show a background job (a file's interpretation): status, progress, result or error.",
		toolset:     ToolsetFiles, ann: readOnly, budget: BudgetSummary, requires: reads(knowledge.ResourceSources),
		shape: func(s *jsonschema.Schema) { maxLen(prop(s, "job_id"), idLimit) },
	}, func(ctx context.Context, call *Call, in JobIn) (JobOut, error) {
		if d.Files == nil {
			return JobOut{}, filesUnavailable
		}
		j, err := d.Files.Job(ctx, call.Caller(), in.JobID)
		if err != nil {
			return JobOut{}, err
		}
		return jobOut(j), nil
	})
}

func cancelJobTool(d Deps) *Tool {
	return newTool(toolSpec{
		name: "cancel_job", title: "Cancel a job",
		description: "Cancel a queued or running job; what it stored so far stays.",
		toolset:     ToolsetFiles, ann: additive, budget: BudgetList, requires: writes(knowledge.ResourceSources),
		shape: func(s *jsonschema.Schema) { maxLen(prop(s, "job_id"), idLimit) },
	}, func(ctx context.Context, call *Call, in JobIn) (JobOut, error) {
		if d.Files == nil {
			return JobOut{}, filesUnavailable
		}
		j, err := d.Files.CancelJob(ctx, call.Caller(), in.JobID)
		if err != nil {
			return JobOut{}, err
		}
		return jobOut(j), nil
	})
}

// ListJobsIn are the arguments of list_jobs.
type ListJobsIn struct {
	Status *string `json:"status,omitempty"`
	FileID *string `json:"file_id,omitempty"`
	Limit  *int    `json:"limit,omitempty"`
}

// ListJobsOut lists jobs, newest first.
type ListJobsOut struct {
	Jobs []JobOut `json:"jobs"`
}

func listJobsTool(d Deps) *Tool {
	return newTool(toolSpec{
		name: "list_jobs", title: "List jobs",
		description: "List your background jobs, newest first.",
		toolset:     ToolsetFiles, ann: readOnly, budget: BudgetSummary, requires: reads(knowledge.ResourceSources),
		shape: func(s *jsonschema.Schema) {
			enum(prop(s, "status"), files.JobQueued, files.JobRunning, files.JobSucceeded, files.JobFailed, files.JobCancelled)
			maxLen(prop(s, "file_id"), idLimit)
			bounds(prop(s, "limit"), 1, 200)
		},
	}, func(ctx context.Context, call *Call, in ListJobsIn) (ListJobsOut, error) {
		if d.Files == nil {
			return ListJobsOut{}, filesUnavailable
		}
		js, err := d.Files.ListJobs(ctx, call.Caller(), files.JobQuery{Status: deref(in.Status), FileID: deref(in.FileID), Limit: deref(in.Limit)})
		if err != nil {
			return ListJobsOut{}, err
		}
		return ListJobsOut{Jobs: mapSlice(js, jobOut)}, nil
	})
}

// fileTools are the files toolset.
func fileTools(d Deps) []*Tool {
	return []*Tool{
		retrieveFileURLTool(d),
		arkiverProcessFileTool(d),
		arkiverJobStatusTool(d),
		getJobTool(d),
		listJobsTool(d),
		cancelJobTool(d),
		reinterpretTool(d),
	}
}

// queuedBy is who queues a job in a call: the principal's agent and key.
func queuedBy(p consent.Principal) files.QueuedBy {
	return files.QueuedBy{AgentID: p.AgentID, AgentName: p.AgentName, KeyID: p.KeyID}
}

// UploadAdmitter returns what files.RunnerOptions.AdmitUpload needs: a
// file a job stores of its own (an e-mail's attachment) is one more upload
// of the key that queued the job, admitted as a call of the upload class
// is. A job queued from the command line (no key) is not limited.
func UploadAdmitter(l *consent.Limiter) func(context.Context, string) (bool, error) {
	return func(ctx context.Context, keyID string) (bool, error) {
		if l == nil {
			return true, nil
		}
		v, err := l.Allow(ctx, keyID, consent.RateClassUpload)
		return v.Allowed, err
	}
}

// JobCaller returns what files.RunnerOptions.Authorize needs: the caller a
// job runs as, which is its user with the consent its agent has now (rules
// changed since the job was queued apply). owner returns the owner
// principal, whose agent is allowed everything.
func JobCaller(pol *consent.Policy, owner func(context.Context) (consent.Principal, error)) func(context.Context, files.Job) (knowledge.Caller, error) {
	return func(ctx context.Context, j files.Job) (knowledge.Caller, error) {
		p := consent.Principal{UserID: j.UserID, AgentID: j.AgentID, AgentName: j.AgentName}
		if o, err := owner(ctx); err == nil && o.UserID == p.UserID && o.AgentID == p.AgentID {
			p.Owner = true
		}
		call := &Call{Principal: p}
		if pol != nil {
			d, err := pol.For(ctx, p)
			if err != nil {
				return knowledge.Caller{}, err
			}
			call.decider = d
		}
		return call.Caller(), nil
	}
}

// FileOriginOut is the file a value was interpreted from, and where in it.
type FileOriginOut struct {
	FileID   string `json:"file_id"`
	Filename string `json:"filename,omitempty"`
	MimeType string `json:"mime_type,omitempty"`
	Unit     string `json:"unit,omitempty" jsonschema:"line, byte, page or item"`
	Start    int64  `json:"start,omitempty"`
	End      int64  `json:"end,omitempty"`
	JobID    string `json:"job_id,omitempty"`
}

func fileOriginOut(src graph.Source, observationID string) *FileOriginOut {
	o, ok := knowledge.OriginOf(src, observationID)
	if !ok {
		return nil
	}
	out := &FileOriginOut{FileID: o.FileID, Filename: o.Filename, MimeType: o.MimeType, Unit: o.Unit, Start: o.Start, End: o.End}
	out.JobID, _ = o.Interpretation["job_id"].(string)
	return out
}
