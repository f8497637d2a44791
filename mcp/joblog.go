package mcp

import (
	"context"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
)

// JobFailed tells the open sessions of a failed interpretation job's user,
// in this process, that it failed: a notifications/message at level error
// from the logger "cairn.jobs" with the job's and its file's ids, the
// error code and message (what get_job answers), to each session whose
// agent may read sources (a job is about a stored file) and whose client
// asked for log messages at error or below (logging/setLevel); the SDK
// sends nothing to the others. It is files.RunnerOptions.OnFailed for the
// workers of cairn serve. A job that fails in another process is told by
// that process to its own sessions.
func (s *Server) JobFailed(ctx context.Context, j files.Job) {
	for ss, sub := range s.subs.sessionsOf(j.UserID) {
		if pol := s.deps.Policy; pol != nil {
			d, err := pol.For(ctx, sub.p)
			if err != nil || !d.Allowed(consent.Read, knowledge.ResourceSources) {
				continue
			}
		}
		lctx, cancel := context.WithTimeout(ctx, notifyTimeout)
		_ = ss.Log(lctx, &mcpsdk.LoggingMessageParams{Level: "error", Logger: "cairn.jobs", Data: map[string]any{
			"job_id": j.ID, "file_id": j.FileID, "status": j.Status, "code": j.ErrorCode, "message": j.ErrorMessage,
		}})
		cancel()
	}
}
