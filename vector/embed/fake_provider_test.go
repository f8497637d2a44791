package embed

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeProvider is an httptest OpenAI-compatible /embeddings endpoint. For
// the input "t<k>" it returns (k+2)·e_k (e_k is the k-th unit vector, k
// modulo the dimension), with the data in reverse order, so that tests see
// both out-of-order indexes and vectors that are not normalised.
type fakeProvider struct {
	t *testing.T
	// dim returns the vector length for request number n (0-based).
	dim func(n int) int
	// fail, when set, may answer request number n itself and return true.
	fail func(w http.ResponseWriter, n int) bool

	mu   sync.Mutex
	reqs []seenRequest
}

// seenRequest is what the fake provider recorded about one request.
type seenRequest struct {
	path    string
	auth    string
	hasAuth bool
	body    map[string]any
	inputs  []string
}

// newFakeProvider starts a fake provider and returns it with its base URL,
// which ends in "/v1".
func newFakeProvider(t *testing.T, dim int, fail func(w http.ResponseWriter, n int) bool) (*fakeProvider, string) {
	t.Helper()
	p := &fakeProvider{t: t, dim: func(int) int { return dim }, fail: fail}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv.URL + "/v1"
}

func (p *fakeProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		p.t.Errorf("fake provider: decode request: %v", err)
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	var inputs []string
	if in, ok := body["input"].([]any); ok {
		for _, x := range in {
			s, _ := x.(string)
			inputs = append(inputs, s)
		}
	}
	auth, hasAuth := r.Header["Authorization"]
	p.mu.Lock()
	p.reqs = append(p.reqs, seenRequest{
		path: r.URL.Path, auth: strings.Join(auth, ","), hasAuth: hasAuth, body: body, inputs: inputs,
	})
	n := len(p.reqs) - 1
	p.mu.Unlock()
	if p.fail != nil && p.fail(w, n) {
		return
	}
	writeEmbeddings(p.t, w, fakeVectors(inputs, p.dim(n)), true)
}

// requests returns a copy of the recorded requests.
func (p *fakeProvider) requests() []seenRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]seenRequest(nil), p.reqs...)
}

// fakeVectors computes the fake provider's vectors for inputs.
func fakeVectors(inputs []string, dim int) [][]float32 {
	out := make([][]float32, len(inputs))
	for i, in := range inputs {
		k, err := strconv.Atoi(strings.TrimPrefix(in, "t"))
		if err != nil {
			k = 0
		}
		v := make([]float32, dim)
		v[k%dim] = float32(k + 2)
		out[i] = v
	}
	return out
}

// writeEmbeddings writes an OpenAI-style success response, last index first
// when reverse is set.
func writeEmbeddings(t *testing.T, w http.ResponseWriter, vecs [][]float32, reverse bool) {
	t.Helper()
	type datum struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := make([]datum, 0, len(vecs))
	for i, v := range vecs {
		data = append(data, datum{Object: "embedding", Index: i, Embedding: v})
	}
	if reverse {
		for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
			data[i], data[j] = data[j], data[i]
		}
	}
	writeJSON(t, w, http.StatusOK, map[string]any{
		"object": "list", "data": data, "model": "fake", "usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1},
	})
}

// writeJSON writes v as a JSON response with the given status.
func writeJSON(t *testing.T, w http.ResponseWriter, status int, v any) {
	t.Helper()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		t.Errorf("fake provider: encode response: %v", err)
	}
}

// writeError writes an OpenAI-style error body.
func writeError(t *testing.T, w http.ResponseWriter, status int, msg string) {
	t.Helper()
	writeJSON(t, w, status, map[string]any{"error": map[string]any{"message": msg, "type": "test"}})
}

// sleepRecorder replaces OpenAI.sleep: it records the durations and returns
// at once (with ctx's error if it is done).
type sleepRecorder struct {
	mu     sync.Mutex
	sleeps []time.Duration
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.sleeps = append(s.sleeps, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepRecorder) durations() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.sleeps...)
}

// newTestOpenAI builds an OpenAI for baseURL whose sleeps are recorded
// rather than waited.
func newTestOpenAI(t *testing.T, cfg OpenAIConfig) (*OpenAI, *sleepRecorder) {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "test-model"
	}
	o, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatalf("NewOpenAI: %v", err)
	}
	rec := &sleepRecorder{}
	o.sleep = rec.sleep
	return o, rec
}

// texts returns "t0", "t1", … "t<n-1>".
func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "t" + strconv.Itoa(i)
	}
	return out
}

// wantUnit checks that v is the unit vector e_k.
func wantUnit(t *testing.T, v []float32, k int) {
	t.Helper()
	for i, x := range v {
		want := float32(0)
		if i == k {
			want = 1
		}
		if x != want {
			t.Fatalf("vector = %v, want unit vector e_%d", v, k)
		}
	}
}
