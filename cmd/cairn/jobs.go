package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
)

func jobsCommand() *command {
	return &command{
		name:    "jobs",
		summary: "list, show or cancel the owner's file interpretation jobs",
		usage:   "jobs list [--status S] [--limit N] | jobs show JOB | jobs cancel JOB [flags]",
		help: `
Jobs interpret stored files in the background (docs/files.md). list shows
the owner's jobs, newest first; show prints one as JSON (progress, result,
error); cancel cancels a queued job at once and asks a running one to stop
at its next batch (what it stored stays).`,
		env: commonEnv,
		setup: func(fs *flag.FlagSet) runFunc {
			var common commonFlags
			common.register(fs)
			status := fs.String("status", "", "list only jobs in this status: queued, running, succeeded, failed or cancelled")
			limit := fs.Int("limit", 50, "list at most this many jobs")
			return func(ctx context.Context, env *environment) error {
				args := fs.Args()
				if len(args) == 0 {
					return usageError{"jobs takes list, show JOB or cancel JOB"}
				}
				// Flags may follow the action too: jobs list --status failed.
				verb := args[0]
				if err := fs.Parse(args[1:]); err != nil {
					return usageError{err.Error()}
				}
				args = append([]string{verb}, fs.Args()...)
				if (verb == "list" && len(args) != 1) || ((verb == "show" || verb == "cancel") && len(args) != 2) {
					return usageError{"usage: cairn jobs list | show JOB | cancel JOB"}
				}
				if verb != "list" && verb != "show" && verb != "cancel" {
					return usageError{fmt.Sprintf("jobs: unknown action %q (list, show or cancel)", verb)}
				}
				log, err := common.logger(env.stderr)
				if err != nil {
					return err
				}
				a, err := openApp(ctx, common.appConfig(), log)
				if err != nil {
					return err
				}
				defer a.Close()
				if a.files == nil {
					return fmt.Errorf("jobs: file storage is off: with PostgreSQL, set --blob-url (CAIRN_BLOB_URL)")
				}
				owner, err := a.control.OwnerPrincipal(ctx)
				if err != nil {
					return err
				}
				c := knowledge.Caller{UserID: owner.UserID, AgentID: owner.AgentName}
				switch verb {
				case "list":
					js, err := a.files.ListJobs(ctx, c, files.JobQuery{Status: *status, Limit: *limit})
					if err != nil {
						return err
					}
					tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "JOB\tSTATUS\tSTAGE\tPROGRESS\tFILE\tCREATED")
					for _, j := range js {
						fmt.Fprintf(tw, "%s\t%s\t%s\t%d%% (%d/%d)\t%s\t%s\n", j.ID, j.Status, j.Progress.Stage, j.Progress.Percent,
							j.Progress.ItemsDone, j.Progress.ItemsTotal, j.FileID, j.CreatedAt.Format("2006-01-02 15:04:05"))
					}
					return tw.Flush()
				case "show":
					j, err := a.files.Job(ctx, c, args[1])
					if err != nil {
						return err
					}
					return printJob(env, j)
				default:
					j, err := a.files.CancelJob(ctx, c, args[1])
					if err != nil {
						return err
					}
					return printJob(env, j)
				}
			}
		},
	}
}

func printJob(env *environment, j files.Job) error {
	out := map[string]any{
		"job_id": j.ID, "file_id": j.FileID, "status": j.Status, "stage": j.Progress.Stage, "percent": j.Progress.Percent,
		"items_done": j.Progress.ItemsDone, "items_total": j.Progress.ItemsTotal, "attempts": j.Attempts,
		"cancel_requested": j.CancelRequested, "result": j.Result, "created_at": j.CreatedAt,
	}
	if j.ErrorCode != "" {
		out["error"] = map[string]string{"code": j.ErrorCode, "message": j.ErrorMessage}
	}
	if !j.FinishedAt.IsZero() {
		out["finished_at"] = j.FinishedAt
	}
	enc := json.NewEncoder(env.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
