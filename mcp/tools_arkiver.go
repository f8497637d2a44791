package mcp

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
)

// ProcessFileIn are the arguments of arkiver_process_file.
type ProcessFileIn struct {
	FileID             string         `json:"fileId" jsonschema:"from POST /api/arkiver/upload, or store's source_id"`
	ProcessingSettings map[string]any `json:"processingSettings,omitempty" jsonschema:"extractionMode: standard|deep|fast, kept with the job"`
}

// ProcessFileOut is Arkiver's answer: the job to poll.
type ProcessFileOut struct {
	Success bool   `json:"success"`
	JobID   string `json:"jobId"`
	FileID  string `json:"fileId"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

func arkiverProcessFileTool(d Deps) *Tool {
	return newTool(toolSpec{
		name: "arkiver_process_file", title: "Process an uploaded file",
		description: "Start interpreting an uploaded file; returns a jobId to poll with arkiver_job_status.",
		toolset:     ToolsetFiles, ann: additiveNI, budget: BudgetList, requires: writes(knowledge.ResourceSources),
		shape: func(s *jsonschema.Schema) { maxLen(prop(s, "fileId"), idLimit) },
	}, func(ctx context.Context, call *Call, in ProcessFileIn) (ProcessFileOut, error) {
		if d.Files == nil {
			return ProcessFileOut{}, filesUnavailable
		}
		if m, ok := in.ProcessingSettings["extractionMode"]; ok && m != "standard" && m != "deep" && m != "fast" {
			return ProcessFileOut{}, &knowledge.ValidationError{Field: "processingSettings.extractionMode", Expected: "standard, deep or fast",
				Got: fmt.Sprint(m), Message: "must be standard, deep or fast"}
		}
		j, err := d.Files.Enqueue(ctx, call.Caller(), queuedBy(call.Principal), in.FileID, in.ProcessingSettings)
		if err != nil {
			return ProcessFileOut{}, err
		}
		return ProcessFileOut{Success: true, JobID: j.ID, FileID: j.FileID, Status: "queued", Message: "Processing started"}, nil
	})
}

// JobStatusIn are the arguments of arkiver_job_status.
type JobStatusIn struct {
	JobID string `json:"jobId"`
}

// JobStatusOut is a job in Arkiver's words: queued, processing, completed
// or failed (a cancelled job reads as failed, with the code CANCELLED).
type JobStatusOut struct {
	Success     bool           `json:"success"`
	JobID       string         `json:"jobId"`
	Status      string         `json:"status"`
	Progress    int            `json:"progress"`
	FileID      string         `json:"fileId"`
	StartedAt   string         `json:"startedAt,omitempty"`
	CompletedAt string         `json:"completedAt,omitempty"`
	Result      map[string]any `json:"result,omitempty"`
	Error       *ErrorBody     `json:"error,omitempty"`
}

func arkiverJobStatusTool(d Deps) *Tool {
	return newTool(toolSpec{
		name: "arkiver_job_status", title: "Check a processing job",
		description: "Poll a job from arkiver_process_file until status is completed or failed.",
		toolset:     ToolsetFiles, ann: readOnly, budget: BudgetSummary, requires: reads(knowledge.ResourceSources),
		shape: func(s *jsonschema.Schema) { maxLen(prop(s, "jobId"), idLimit) },
	}, func(ctx context.Context, call *Call, in JobStatusIn) (JobStatusOut, error) {
		if d.Files == nil {
			return JobStatusOut{}, filesUnavailable
		}
		j, err := d.Files.Job(ctx, call.Caller(), in.JobID)
		if err != nil {
			return JobStatusOut{}, err
		}
		out := JobStatusOut{Success: true, JobID: j.ID, Progress: j.Progress.Percent, FileID: j.FileID,
			StartedAt: stamp(j.StartedAt), CompletedAt: stamp(j.FinishedAt)}
		switch j.Status {
		case files.JobQueued:
			out.Status = "queued"
		case files.JobRunning:
			out.Status = "processing"
		case files.JobSucceeded:
			out.Status = "completed"
			out.Result = j.Result
		case files.JobFailed:
			out.Status = "failed"
			out.Error = &ErrorBody{Code: j.ErrorCode, Message: j.ErrorMessage}
		case files.JobCancelled:
			out.Status = "failed"
			out.Error = &ErrorBody{Code: "CANCELLED", Message: "the job was cancelled"}
		}
		return out, nil
	})
}

// ReinterpretIn are the arguments of reinterpret.
type ReinterpretIn struct {
	SourceID             string         `json:"source_id"`
	InterpretationConfig map[string]any `json:"interpretation_config" jsonschema:"provider, model_id, temperature, prompt_hash, code_version"`
}

// ReinterpretOut reports the new interpretation run.
type ReinterpretOut struct {
	RunID               string `json:"run_id"`
	JobID               string `json:"job_id"`
	Status              string `json:"status" jsonschema:"running or queued when it outlasted the call: poll get_job"`
	EntitiesCreated     int    `json:"entities_created"`
	ObservationsCreated int    `json:"observations_created"`
	SourceID            string `json:"source_id"`
}

func reinterpretTool(d Deps) *Tool {
	return newTool(toolSpec{
		name: "reinterpret", title: "Reinterpret a file",
		description: "Interpret a stored file again with a new interpretation_config: adds observations, keeps the old ones.",
		toolset:     ToolsetFiles, ann: additiveNI, budget: BudgetList, requires: writes(knowledge.ResourceSources),
		shape: func(s *jsonschema.Schema) { maxLen(prop(s, "source_id"), idLimit) },
	}, func(ctx context.Context, call *Call, in ReinterpretIn) (ReinterpretOut, error) {
		if d.Files == nil {
			return ReinterpretOut{}, filesUnavailable
		}
		j, err := d.Files.Enqueue(ctx, call.Caller(), queuedBy(call.Principal), in.SourceID, in.InterpretationConfig)
		if err != nil {
			if e := filesError(err); e != nil && e.Body.Code == CodeFileNotFound {
				return ReinterpretOut{}, newError(http.StatusNotFound, CodeSourceNotFound, "no such source", map[string]any{"id": in.SourceID})
			}
			return ReinterpretOut{}, err
		}
		j, err = waitJob(ctx, d.Files, call, j)
		if err != nil {
			return ReinterpretOut{}, err
		}
		out := ReinterpretOut{RunID: runID(j), JobID: j.ID, Status: j.Status, SourceID: j.FileID}
		out.EntitiesCreated, _ = intOf(j.Result["entities_created"])
		out.ObservationsCreated, _ = intOf(j.Result["observations_created"])
		if j.Status == files.JobFailed {
			return out, newError(http.StatusInternalServerError, "ANALYSIS_FAILED", "interpretation failed: "+j.ErrorMessage,
				map[string]any{"job_id": j.ID, "cause": j.ErrorCode})
		}
		return out, nil
	})
}

// waitJob polls a job until it finishes or the call is about to run out of
// time, and reports its progress to the client when it asked for it.
func waitJob(ctx context.Context, fs *files.Service, call *Call, j files.Job) (files.Job, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(DefaultCallTimeout)
	}
	deadline = deadline.Add(-time.Second)
	report := progressFrom(ctx)
	last := -1
	for !j.Finished() && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return j, nil
		case <-time.After(200 * time.Millisecond):
		}
		next, err := fs.Job(ctx, call.Caller(), j.ID)
		if err != nil {
			return j, err
		}
		j = next
		if j.Progress.Percent != last {
			last = j.Progress.Percent
			report(float64(j.Progress.Percent), 100, j.Progress.Stage)
		}
	}
	return j, nil
}

func intOf(v any) (int, bool) {
	switch n := v.(type) {
	case float64:
		return int(n), true
	case int:
		return n, true
	case int64:
		return int(n), true
	}
	return 0, false
}
