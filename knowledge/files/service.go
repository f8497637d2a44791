package files

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"gocloud.dev/blob"

	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/interpret"
)

// Defaults of Options.
const (
	DefaultMaxFileBytes = 100 << 20
	// DefaultURLTTL is how long a signed URL lives unless asked otherwise;
	// MaxURLTTL bounds what may be asked.
	DefaultURLTTL = time.Hour
	MaxURLTTL     = 7 * 24 * time.Hour
)

// Options configure a Service. Bucket, Meta, Jobs and Knowledge are
// required; the zero value of every other field is usable.
type Options struct {
	Bucket    *blob.Bucket
	Meta      Meta
	Jobs      JobStore
	Knowledge *knowledge.Service
	// MaxFileBytes bounds one file; 0 means DefaultMaxFileBytes.
	MaxFileBytes int64
	// QuotaBytes bounds the total size of one user's files; 0 means no
	// quota.
	QuotaBytes int64
	// SpoolDir holds uploads while they are hashed and checked, before
	// they go to the bucket; empty means os.TempDir().
	SpoolDir string
	// BaseURL is where this process's HTTP server answers (e.g.
	// http://127.0.0.1:7400): signed URLs point to BaseURL/files/{id}.
	// Empty means the bucket's own signed URLs, where it has them.
	BaseURL string
	// Interpreters enrich what Parser read with the model (Set.Enrich);
	// nil means interpret.NewSet(interpret.Config{}).
	Interpreters *interpret.Set
	// Parser runs the deterministic interpreters on a file; nil means
	// interpret.Parse in this process, which a hostile file can hang or
	// exhaust and which a cancelled job cannot stop. The service
	// (cmd/cairn) sets an isolate.Runner, which parses in a worker process
	// it kills at the end of the job's context or at a limit.
	Parser Parser
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Service stores files and runs their interpretation. It is safe for
// concurrent use.
type Service struct {
	bucket       *blob.Bucket
	meta         Meta
	jobs         JobStore
	know         *knowledge.Service
	maxBytes     int64
	quota        int64
	spool        string
	baseURL      string
	interpreters *interpret.Set
	parser       Parser
	log          *slog.Logger
	now          func() time.Time
	// wake nudges local workers when a job is queued.
	wake chan struct{}
}

// New returns a Service.
func New(o Options) *Service {
	s := &Service{
		bucket: o.Bucket, meta: o.Meta, jobs: o.Jobs, know: o.Knowledge,
		maxBytes: cmp.Or(o.MaxFileBytes, DefaultMaxFileBytes), quota: o.QuotaBytes,
		spool: o.SpoolDir, baseURL: o.BaseURL, interpreters: o.Interpreters, parser: o.Parser, log: o.Logger, now: o.Now,
		wake: make(chan struct{}, 1),
	}
	if s.interpreters == nil {
		s.interpreters = interpret.NewSet(interpret.Config{})
	}
	if s.parser == nil {
		s.parser = inProcess{}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Parser runs the deterministic interpreters (interpret.Parse) on a file.
// Parse must return promptly once ctx ends.
type Parser interface {
	Parse(ctx context.Context, d interpret.Document) (interpret.Result, error)
}

// inProcess is interpret.Parse in this process. It cannot stop a parse
// once started: when ctx ends it returns at once and leaves the parse to
// finish, or not, in the background.
type inProcess struct{}

func (inProcess) Parse(ctx context.Context, d interpret.Document) (interpret.Result, error) {
	type parsed struct {
		r   interpret.Result
		err error
	}
	done := make(chan parsed, 1)
	go func() {
		r, err := interpret.Parse(d)
		done <- parsed{r, err}
	}()
	select {
	case p := <-done:
		return p.r, p.err
	case <-ctx.Done():
		return interpret.Result{}, context.Cause(ctx)
	}
}

// MaxFileBytes is the largest file the service accepts.
func (s *Service) MaxFileBytes() int64 { return s.maxBytes }

// SetBaseURL sets where signed URLs point, once the HTTP server knows its
// address.
func (s *Service) SetBaseURL(u string) { s.baseURL = u }

func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }
