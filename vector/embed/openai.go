package embed

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of OpenAIConfig's zero values.
const (
	defaultBatchSize  = 64
	defaultMaxRetries = 3
	defaultTimeout    = 30 * time.Second
)

// probeText is what Probe embeds: short, so the probe is cheap everywhere.
const probeText = "cairn dimension probe"

// apiKeyEnv is the variable the command line reads the API key from; errors
// name it so that a rejected key is fixed without reading the docs.
const apiKeyEnv = "CAIRN_EMBED_API_KEY"

// OpenAIConfig configures NewOpenAI. Zero values of the optional fields
// select the documented defaults.
type OpenAIConfig struct {
	// BaseURL is the API root, e.g. https://api.openai.com/v1,
	// http://localhost:11434/v1 (Ollama) or http://vllm:8000/v1; requests go
	// to BaseURL + "/embeddings". Required.
	BaseURL string
	// Model is the embedding model name. Required.
	Model string
	// APIKey is sent as "Authorization: Bearer"; empty sends no header
	// (Ollama). It never appears in errors or logs.
	APIKey string
	// Dimensions is the expected vector length. 0 learns it from the first
	// response (see Probe); >0 is sent as "dimensions" only if
	// SendDimensions, and every response is checked against it.
	Dimensions int
	// SendDimensions sends the "dimensions" request field, which OpenAI's
	// text-embedding-3 models support and Ollama or vLLM may reject. It
	// requires Dimensions > 0.
	SendDimensions bool
	// BatchSize is the number of texts per request; 0 means 64.
	BatchSize int
	// MaxRetries is the number of retries on 429, 5xx and network errors;
	// 0 means 3 and a negative value means none.
	MaxRetries int
	// Timeout bounds each request attempt; 0 means 30s.
	Timeout time.Duration
	// HTTPClient sends the requests; nil means a client with Timeout.
	HTTPClient *http.Client
}

// OpenAI is an Embedder and Prober for any OpenAI-compatible /embeddings
// endpoint (OpenAI, Ollama, vLLM, TEI). It is safe for concurrent use.
type OpenAI struct {
	endpoint   string // BaseURL + "/embeddings"
	display    string // endpoint with any URL password redacted, for errors
	model      string
	apiKey     string
	sendDims   bool
	dims       int // configured Dimensions, sent when sendDims
	batchSize  int
	maxRetries int
	timeout    time.Duration
	client     *http.Client
	name       string

	// dim is the known vector length; 0 until learned from a response.
	dim atomic.Int64

	// sleep waits d or until ctx is done; tests replace it to not wait.
	sleep func(ctx context.Context, d time.Duration) error

	mu  sync.Mutex // guards rng
	rng *rand.Rand // backoff jitter
}

// NewOpenAI returns an embedder for any OpenAI-compatible /embeddings
// endpoint (OpenAI, Ollama, vLLM, TEI). It validates cfg but does not touch
// the network; call Probe to check reachability and credentials.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if strings.TrimSpace(cfg.BaseURL) == "" {
		return nil, errors.New("embed: openai: BaseURL is required")
	}
	u, err := url.Parse(strings.TrimSpace(cfg.BaseURL))
	if err != nil {
		return nil, fmt.Errorf("embed: openai: invalid BaseURL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("embed: openai: invalid BaseURL %q: want http(s)://host[/path]", u.Redacted())
	}
	model := strings.TrimSpace(cfg.Model)
	switch {
	case model == "":
		return nil, errors.New("embed: openai: Model is required")
	case cfg.Dimensions < 0:
		return nil, fmt.Errorf("embed: openai: Dimensions %d is negative", cfg.Dimensions)
	case cfg.SendDimensions && cfg.Dimensions == 0:
		return nil, errors.New("embed: openai: SendDimensions requires Dimensions > 0")
	case cfg.BatchSize < 0:
		return nil, fmt.Errorf("embed: openai: BatchSize %d is negative", cfg.BatchSize)
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("embed: openai: Timeout %s is negative", cfg.Timeout)
	}
	u = u.JoinPath("embeddings")
	o := &OpenAI{
		endpoint:   u.String(),
		display:    u.Redacted(),
		model:      model,
		apiKey:     strings.TrimSpace(cfg.APIKey), // a stray newline from a key file would make every request fail
		sendDims:   cfg.SendDimensions,
		dims:       cfg.Dimensions,
		batchSize:  cmp.Or(cfg.BatchSize, defaultBatchSize),
		maxRetries: max(cmp.Or(cfg.MaxRetries, defaultMaxRetries), 0),
		timeout:    cmp.Or(cfg.Timeout, defaultTimeout),
		client:     cfg.HTTPClient,
		name:       "openai:" + model,
		sleep:      sleepCtx,
		rng:        rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
	}
	if o.client == nil {
		o.client = &http.Client{Timeout: o.timeout}
	}
	if cfg.SendDimensions {
		// The model's output depends on the requested size.
		o.name += ":" + strconv.Itoa(cfg.Dimensions)
	}
	o.dim.Store(int64(cfg.Dimensions))
	return o, nil
}

// Dimension returns the configured or learned vector length, 0 if neither.
func (o *OpenAI) Dimension() int { return int(o.dim.Load()) }

// Name returns "openai:<model>", plus ":<dimensions>" when the dimensions are
// sent, since they change the vectors.
func (o *OpenAI) Name() string { return o.name }

// Probe embeds one short text so that Dimension is known and an unreachable
// endpoint or a rejected key is reported at start-up. Its errors are those
// of Embed.
func (o *OpenAI) Probe(ctx context.Context) error {
	_, err := o.Embed(ctx, []string{probeText})
	return err
}

// Embed sends the non-blank texts in batches of BatchSize and returns their
// normalised vectors in input order. Blank texts are not sent and get zero
// vectors of length Dimension; if every text is blank no request is made,
// and while the dimension is still unknown those vectors are empty.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("embed: openai: %w", err)
	}
	idx := make([]int, 0, len(texts))
	for i, t := range texts {
		if strings.TrimSpace(t) != "" {
			idx = append(idx, i)
		}
	}
	out := make([][]float32, len(texts))
	batch := make([]string, 0, min(o.batchSize, len(idx)))
	for start := 0; start < len(idx); start += o.batchSize {
		end := min(start+o.batchSize, len(idx))
		batch = batch[:0]
		for _, i := range idx[start:end] {
			batch = append(batch, texts[i])
		}
		vecs, err := o.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		for j, v := range vecs {
			out[idx[start+j]] = v
		}
	}
	if len(idx) < len(texts) {
		dim := o.Dimension()
		for i := range out {
			if out[i] == nil {
				out[i] = make([]float32, dim)
			}
		}
	}
	return out, nil
}

// embeddingRequest is the body of POST /embeddings.
type embeddingRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

// embedBatch embeds one batch, retrying transient failures with backoff.
func (o *OpenAI) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	req := embeddingRequest{Model: o.model, Input: texts, EncodingFormat: "float"}
	if o.sendDims {
		req.Dimensions = o.dims
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("embed: openai: encode request: %w", err)
	}
	for attempt := 0; ; attempt++ {
		vecs, retry, err := o.attempt(ctx, body, len(texts))
		if err == nil {
			return vecs, nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("embed: openai request: %w", ctxErr)
		}
		if !retry.ok {
			return nil, err
		}
		if attempt >= o.maxRetries {
			return nil, fmt.Errorf("%w (gave up after %d attempts)", err, attempt+1)
		}
		wait := retry.after
		if !retry.hasAfter {
			wait = o.backoff(attempt)
		}
		if err := o.sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("embed: openai: waiting to retry: %w", err)
		}
	}
}
