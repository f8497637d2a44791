package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // azblob:// buckets (Azure Blob Storage)
	"gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/gcsblob" // gs:// buckets (Google Cloud Storage)
	_ "gocloud.dev/blob/memblob" // mem:// buckets, for tests and trials
	_ "gocloud.dev/blob/s3blob"  // s3:// buckets (AWS S3 and S3-compatible stores: MinIO, R2, Ceph…)

	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/knowledge/interpret"
	"github.com/cairnkg/cairn/knowledge/interpret/isolate"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/mcp"
)

// llmAPIKeyEnv holds the interpretation model's API key. It has no flag: a
// key on the command line would show in ps and shell history.
const llmAPIKeyEnv = "CAIRN_LLM_API_KEY"

// fileSettings configure file storage and interpretation.
type fileSettings struct {
	blobURL    string
	maxBytes   int64
	quotaBytes int64
	workers    int
	lease      time.Duration
	roots      []string
	publicURL  string
	llm        *interpret.LLMConfig
	// interpretTimeout and interpretMemory bound the parse of one file in
	// its worker process (isolate.Options).
	interpretTimeout time.Duration
	interpretMemory  int64
}

// fileFlags are the flags of file storage and interpretation.
type fileFlags struct {
	blobURL        string
	maxBytes       int64
	quotaBytes     int64
	workers        int
	lease          time.Duration
	llmURL         string
	llmModel       string
	llmTemperature float64
	interpTimeout  time.Duration
	interpMemory   int64
}

func (f *fileFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.blobURL, "blob-url", "", "bucket of uploaded files: file:///path, s3://bucket?region=…, gs://bucket, azblob://container, mem://; default <data-dir>/blobs")
	fs.Int64Var(&f.maxBytes, "max-file-bytes", files.DefaultMaxFileBytes, "largest file store and POST /api/files accept")
	fs.Int64Var(&f.quotaBytes, "file-quota-bytes", 0, "total size of one user's files (0: no quota)")
	fs.IntVar(&f.workers, "job-workers", 2, "interpretation jobs this process runs at once (0: none; another process runs them)")
	fs.DurationVar(&f.lease, "job-lease", 30*time.Second, "how long a job stays with a worker that gives no sign of life; a job of a killed process resumes after it")
	fs.StringVar(&f.llmURL, "llm-url", "", "OpenAI-compatible API root that reads free text into entities (e.g. http://localhost:11434/v1); the key comes from "+llmAPIKeyEnv)
	fs.StringVar(&f.llmModel, "llm-model", "", "chat model of --llm-url")
	fs.Float64Var(&f.llmTemperature, "llm-temperature", 0, "sampling temperature of --llm-model")
	fs.DurationVar(&f.interpTimeout, "interpret-timeout", isolate.DefaultTimeout, "longest a file's parse may take before its job fails with FILE_TOO_COMPLEX (files are parsed in a worker process, killed at the limit)")
	fs.Int64Var(&f.interpMemory, "interpret-memory", isolate.DefaultMemoryBytes, "memory in bytes a file's parse may take before its job fails with FILE_TOO_COMPLEX (enforced on Linux)")
}

var fileEnv = []envVar{
	{"blob-url", "CAIRN_BLOB_URL"}, {"max-file-bytes", "CAIRN_MAX_FILE_BYTES"}, {"file-quota-bytes", "CAIRN_FILE_QUOTA_BYTES"},
	{"job-workers", "CAIRN_JOB_WORKERS"}, {"job-lease", "CAIRN_JOB_LEASE"}, {"llm-url", "CAIRN_LLM_URL"}, {"llm-model", "CAIRN_LLM_MODEL"},
	{"llm-temperature", "CAIRN_LLM_TEMPERATURE"}, {"interpret-timeout", "CAIRN_INTERPRET_TIMEOUT"}, {"interpret-memory", "CAIRN_INTERPRET_MEMORY"},
}

func (f *fileFlags) apply(cfg *appConfig, getenv func(string) string) error {
	if f.maxBytes <= 0 || f.quotaBytes < 0 || f.workers < 0 || f.lease < time.Second {
		return usageError{"--max-file-bytes must be positive, --file-quota-bytes and --job-workers 0 or more, --job-lease at least 1s"}
	}
	if f.interpTimeout < time.Second || f.interpMemory < 64<<20 {
		return usageError{"--interpret-timeout must be at least 1s, --interpret-memory at least 64 MiB (67108864)"}
	}
	cfg.files.interpretTimeout, cfg.files.interpretMemory = f.interpTimeout, f.interpMemory
	if (f.llmURL == "") != (f.llmModel == "") {
		return usageError{"--llm-url and --llm-model go together"}
	}
	cfg.files.blobURL, cfg.files.maxBytes, cfg.files.quotaBytes, cfg.files.workers, cfg.files.lease = f.blobURL, f.maxBytes, f.quotaBytes, f.workers, f.lease
	if f.llmURL != "" {
		cfg.files.llm = &interpret.LLMConfig{BaseURL: f.llmURL, Model: f.llmModel, Temperature: f.llmTemperature, APIKey: getenv(llmAPIKeyEnv)}
	}
	return nil
}

// openFiles opens the bucket and the files service, recovers what an
// interrupted upload left, and gives the MCP layer the service.
//
// Without --blob-url the embedded store keeps files in <data-dir>/blobs.
// PostgreSQL has no such default: its processes may be replicas on several
// hosts, which must share a bucket, and a folder on one host's disk would
// lose files silently behind a load balancer. There, without --blob-url,
// file storage is off (its tools answer SERVICE_UNAVAILABLE) and the log
// says how to turn it on.
func (a *app) openFiles(ctx context.Context, cfg appConfig, deps *mcp.Deps) error {
	var (
		bucket *blob.Bucket
		err    error
	)
	if cfg.files.blobURL == "" && cfg.databaseURL != "" {
		a.log.Info("file storage is off: with PostgreSQL, set --blob-url (CAIRN_BLOB_URL) to a bucket every replica shares (s3://…, or file:///path on one host)")
		return nil
	}
	if cfg.files.blobURL == "" {
		bucket, err = fileblob.OpenBucket(filepath.Join(cfg.dataDir, "blobs"), &fileblob.Options{CreateDir: true, NoTempDir: true, DirFileMode: 0o700})
	} else {
		bucket, err = blob.OpenBucket(ctx, cfg.files.blobURL)
	}
	if err != nil {
		return fmt.Errorf("open the file bucket %s: %w", redactURL(cfg.files.blobURL), err)
	}
	spool := filepath.Join(cfg.dataDir, "spool")
	if cfg.databaseURL != "" {
		spool = ""
	} else if err := os.MkdirAll(spool, 0o700); err != nil {
		bucket.Close()
		return fmt.Errorf("create the upload spool: %w", err)
	}
	cleanSpool(spool)
	a.bucket = bucket
	a.files = files.New(files.Options{
		Bucket: bucket, Meta: a.control, Jobs: a.control, Knowledge: a.knowledge, MaxFileBytes: cfg.files.maxBytes,
		QuotaBytes: cfg.files.quotaBytes, SpoolDir: spool, Logger: a.log,
		Interpreters: interpret.NewSet(interpretConfig(a.knowledge.Schemas(), cfg.files.llm)),
		Parser: isolate.New(isolate.Options{Timeout: cfg.files.interpretTimeout, MemoryBytes: cfg.files.interpretMemory,
			MaxOutputBytes: 4 * cfg.files.maxBytes}), // 0: isolate.DefaultMaxOutputBytes
	})
	a.knowledge.SetFileEraser(a.files.EraseFile)
	deps.Files, deps.FileRoots = a.files, cfg.files.roots
	return nil
}

// recoverGrace is how old a pending file must be before recovery settles
// it. A file is pending only from after its upload has been read (spooled)
// until its blob and source are written, seconds even for 100 MB to an
// object store; another process on the same store (a replica, a cairn
// import beside serve) may be in that window, so younger rows are left.
const recoverGrace = 5 * time.Minute

// startFileRecovery settles what interrupted uploads left pending (see
// files.Service.Recover): at start, then every recoverGrace, so that a row
// too young at start is settled soon after.
func (a *app) startFileRecovery(ctx context.Context) {
	if a.files == nil {
		return
	}
	if _, err := a.files.Recover(ctx, recoverGrace); err != nil {
		a.log.Warn("recover interrupted uploads", "err", err)
	}
	a.background(ctx, func(ctx context.Context) {
		t := time.NewTicker(recoverGrace)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := a.files.Recover(ctx, recoverGrace); err != nil && ctx.Err() == nil {
					a.log.Warn("recover interrupted uploads", "err", err)
				}
			}
		}
	})
}

// interpretConfig lets the model see the schema registry as the file's
// user sees it: every type of the user's own, global or built-in, with its
// fields. The note type is left out of the model's targets: the text is
// already kept as a note.
func interpretConfig(reg *schema.Registry, llm *interpret.LLMConfig) interpret.Config {
	return interpret.Config{
		LLM: llm,
		Schemas: func(ctx context.Context, userID string) map[string]map[string]string {
			out := map[string]map[string]string{}
			set, err := reg.For(ctx, userID)
			if err != nil {
				return out // the model gets the built-in types
			}
			for _, s := range set.All() {
				if s.EntityType == "note" {
					continue
				}
				fields := map[string]string{}
				for name, f := range s.Fields {
					fields[name] = string(f.Type)
				}
				out[s.EntityType] = fields
			}
			return out
		},
	}
}

// cleanSpool removes upload spool files a killed process left.
func cleanSpool(dir string) {
	if dir == "" {
		return
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "cairn-upload-*"))
	for _, m := range matches {
		_ = os.Remove(m)
	}
}

// startJobs runs the interpretation workers until ctx ends or the app
// closes; jobs a killed process left running are resumed once their lease
// expires.
func (a *app) startJobs(ctx context.Context, workers int, lease time.Duration) {
	if a.files == nil || workers == 0 {
		return
	}
	a.background(ctx, func(ctx context.Context) {
		a.files.Run(ctx, files.RunnerOptions{Workers: workers, Lease: lease, Authorize: mcp.JobCaller(a.policy, a.control.OwnerPrincipal),
			AdmitUpload: mcp.UploadAdmitter(a.limiter), OnFailed: a.mcp.JobFailed})
	})
}

// redactURL hides a URL's password.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// rootsFlag is --file-roots: directories store's file_path may read.
type rootsFlag struct{ roots *[]string }

func (r rootsFlag) String() string {
	if r.roots == nil {
		return ""
	}
	return strings.Join(*r.roots, string(os.PathListSeparator))
}

func (r rootsFlag) Set(v string) error {
	for _, p := range filepath.SplitList(v) {
		if p = strings.TrimSpace(p); p != "" {
			abs, err := filepath.Abs(p)
			if err != nil {
				return err
			}
			*r.roots = append(*r.roots, abs)
		}
	}
	return nil
}
