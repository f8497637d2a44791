package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/mcp"
)

// cairn import FILE…|DIR stores files and interprets them: this is the file
// half of cairn import (export.go has the other, for a cairn export, which
// it recognises by its first line). Both open the store directly, beside
// a running serve or not.
//
// It is resumable because storing is: a file stored before is deduplicated
// (nothing written), and a file that already has an interpretation job is
// not queued again, so running the same command after an interruption
// carries on where it stopped, and the jobs the interruption left are
// resumed by the workers (this command's, or serve's).

// fileImportFlags are the flags of importing files.
type fileImportFlags struct {
	files     fileFlags
	interpret bool
	wait      bool
	agent     string
}

func (f *fileImportFlags) register(fs *flag.FlagSet) {
	f.files.register(fs)
	fs.BoolVar(&f.interpret, "interpret", true, "queue each new file's interpretation")
	fs.BoolVar(&f.wait, "wait", true, "run the interpretation jobs in this process and wait for them (false: a running serve runs them)")
	fs.StringVar(&f.agent, "agent", "", "import as this agent of the owner, under its consent rules (default: the owner agent)")
}

// importFiles imports the files at paths (directories are walked; hidden
// files and directories are skipped).
func importFiles(ctx context.Context, env *environment, cfg appConfig, f *fileImportFlags, paths []string) error {
	log, err := (&commonFlags{logLevel: "warn", logFormat: "text"}).logger(env.stderr)
	if err != nil {
		return err
	}
	list, err := collectFiles(paths)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return usageError{"import: no files found"}
	}
	if err := f.files.apply(&cfg, env.getenv); err != nil {
		return err
	}
	a, err := openApp(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()
	if a.files == nil {
		return errors.New("import: file storage is off: with PostgreSQL, set --blob-url (CAIRN_BLOB_URL) to the bucket serve uses")
	}
	// On a new store the import creates the owner, as stdio does, and
	// prints the owner key to stderr once.
	key, err := bootstrapOwner(ctx, a, env.getenv)
	if err != nil {
		return err
	}
	if key != "" {
		printWelcome(env.stderr, key, "http://127.0.0.1:7400/mcp (when you run cairn serve)", cfg, env.getenv("CAIRN_OWNER_KEY") != "")
	}
	p, err := a.control.OwnerPrincipal(ctx)
	if err != nil {
		return err
	}
	if f.agent != "" && f.agent != p.AgentName {
		if p, err = a.control.AgentPrincipal(ctx, p.UserName, f.agent); err != nil {
			return usageError{fmt.Sprintf("--agent %q: no such agent of the owner", f.agent)}
		}
	}
	authorize := mcp.JobCaller(a.policy, a.control.OwnerPrincipal)
	caller, err := authorize(ctx, files.Job{UserID: p.UserID, AgentID: p.AgentID, AgentName: p.AgentName})
	if err != nil {
		return err
	}
	bar := newTransferProgress(env.stderr, "import")
	var (
		jobs                           []string
		stored, dedup, skipped, failed int
		queued                         int
	)
	for i, path := range list {
		st, err := storeOne(ctx, a.files, caller, path)
		var unsupported *files.UnsupportedError
		var tooLarge *files.TooLargeError
		switch {
		case errors.As(err, &unsupported), errors.As(err, &tooLarge):
			skipped++
			fmt.Fprintf(env.stdout, "skipped  %s: %v\n", path, err)
			continue
		case err != nil:
			return fmt.Errorf("import %s: %w", path, err)
		}
		state := "stored  "
		if st.Deduplicated {
			state, dedup = "had     ", dedup+1
		} else {
			stored++
		}
		if f.interpret {
			// A file with a job is not queued again; an unfinished one (an
			// interrupted import's) is waited for.
			latest, has, err := a.files.LatestJob(ctx, caller, st.File.ID)
			switch {
			case err != nil:
				return err
			case !has:
				j, err := a.files.Enqueue(ctx, caller, files.QueuedBy{AgentID: p.AgentID, AgentName: p.AgentName}, st.File.ID, nil)
				if err != nil {
					return err
				}
				jobs, queued = append(jobs, j.ID), queued+1
			case !latest.Finished():
				jobs = append(jobs, latest.ID)
			}
		}
		fmt.Fprintf(env.stdout, "%s %s %s (%s)\n", state, st.File.ID, path, st.File.MimeType)
		bar.update(fmt.Sprintf("%s %d/%d files", progressBar(i+1, len(list)), i+1, len(list)))
	}
	bar.done()
	fmt.Fprintf(env.stdout, "%d files stored, %d stored before, %d skipped; %d interpretation jobs queued, %d unfinished from before\n",
		stored, dedup, skipped, queued, len(jobs)-queued)
	if !f.wait || len(jobs) == 0 {
		return nil
	}
	// Run the jobs here (and any this user's earlier import left), until
	// every job queued now has finished.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.files.Run(wctx, files.RunnerOptions{Workers: max(1, cfg.files.workers), Lease: cfg.files.lease, Authorize: authorize})
	}()
	defer func() { cancel(); <-done }()
	jbar := newTransferProgress(env.stderr, "interpret")
	pending := map[string]bool{}
	for _, id := range jobs {
		pending[id] = true
	}
	for len(pending) > 0 {
		select {
		case <-ctx.Done():
			fmt.Fprintf(env.stderr, "interrupted with %d jobs unfinished: run the same import again, or serve, to finish them\n", len(pending))
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		ids := make([]string, 0, len(pending))
		for id := range pending {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			j, err := a.files.Job(ctx, caller, id)
			if err != nil {
				return err
			}
			if !j.Finished() {
				continue
			}
			delete(pending, id)
			if j.Status != files.JobSucceeded {
				failed++
				fmt.Fprintf(env.stdout, "%-9s %s %s: %s %s\n", j.Status, j.ID, j.FileID, j.ErrorCode, j.ErrorMessage)
				continue
			}
			fmt.Fprintf(env.stdout, "%-9s %s %s: %v entities, %v observations\n", j.Status, j.ID, j.FileID, j.Result["entities_created"], j.Result["observations_created"])
		}
		n := len(jobs) - len(pending)
		jbar.update(fmt.Sprintf("%s %d/%d jobs", progressBar(n, len(jobs)), n, len(jobs)))
	}
	jbar.done()
	if failed > 0 {
		return fmt.Errorf("import: %d of %d interpretation jobs did not succeed", failed, len(jobs))
	}
	return nil
}

func storeOne(ctx context.Context, fs *files.Service, c knowledge.Caller, path string) (files.Stored, error) {
	f, err := os.Open(path)
	if err != nil {
		return files.Stored{}, err
	}
	defer f.Close()
	return fs.Put(ctx, c, f, files.PutRequest{Filename: filepath.Base(path)})
}

// collectFiles expands directories into their regular files, in order.
func collectFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if path != p && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() {
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// progressBar draws [=====>    ].
func progressBar(done, total int) string {
	const width = 24
	n := width * done / max(total, 1)
	bar := strings.Repeat("=", n)
	if n < width {
		bar += ">" + strings.Repeat(" ", width-n-1)
	}
	return "[" + bar + "]"
}
