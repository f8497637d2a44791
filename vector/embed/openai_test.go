package embed

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestOpenAIOutOfOrderAndNormalised(t *testing.T) {
	p, base := newFakeProvider(t, 4, nil)
	o, _ := newTestOpenAI(t, OpenAIConfig{BaseURL: base})
	got, err := o.Embed(t.Context(), texts(3))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		wantUnit(t, v, i)
	}
	if n := len(p.requests()); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
	if d := o.Dimension(); d != 4 {
		t.Errorf("Dimension() = %d, want 4 (learned)", d)
	}
}

func TestOpenAIBatching(t *testing.T) {
	tests := []struct {
		name      string
		batchSize int
		n         int
		wantSizes []int
	}{
		{name: "130 by 64", batchSize: 64, n: 130, wantSizes: []int{64, 64, 2}},
		{name: "default size", batchSize: 0, n: 65, wantSizes: []int{64, 1}},
		{name: "exact", batchSize: 5, n: 10, wantSizes: []int{5, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, base := newFakeProvider(t, tt.n, nil)
			o, _ := newTestOpenAI(t, OpenAIConfig{BaseURL: base, BatchSize: tt.batchSize})
			got, err := o.Embed(t.Context(), texts(tt.n))
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range got {
				wantUnit(t, v, i)
			}
			reqs := p.requests()
			if len(reqs) != len(tt.wantSizes) {
				t.Fatalf("requests = %d, want %d", len(reqs), len(tt.wantSizes))
			}
			for i, r := range reqs {
				if len(r.inputs) != tt.wantSizes[i] {
					t.Errorf("request %d has %d inputs, want %d", i, len(r.inputs), tt.wantSizes[i])
				}
			}
		})
	}
}

func TestOpenAIBlankTexts(t *testing.T) {
	tests := []struct {
		name       string
		dims       int
		in         []string
		wantInputs [][]string
		wantZero   []bool
		wantLen    int
	}{
		{
			name: "mixed", in: []string{"t0", " ", "t2", "", "\t\n"},
			wantInputs: [][]string{{"t0", "t2"}}, wantZero: []bool{false, true, false, true, true}, wantLen: 3,
		},
		{
			name: "all blank, known dimension", dims: 3, in: []string{"", "  "},
			wantInputs: nil, wantZero: []bool{true, true}, wantLen: 3,
		},
		{
			name: "all blank, unknown dimension", in: []string{""},
			wantInputs: nil, wantZero: []bool{true}, wantLen: 0,
		},
		{name: "no texts", in: nil, wantInputs: nil, wantLen: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, base := newFakeProvider(t, 3, nil)
			o, _ := newTestOpenAI(t, OpenAIConfig{BaseURL: base, Dimensions: tt.dims})
			got, err := o.Embed(t.Context(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.in) {
				t.Fatalf("got %d vectors, want %d", len(got), len(tt.in))
			}
			for i, v := range got {
				if len(v) != tt.wantLen || isZero(v) != tt.wantZero[i] {
					t.Errorf("vector %d = %v, want len %d zero=%v", i, v, tt.wantLen, tt.wantZero[i])
				}
			}
			reqs := p.requests()
			if len(reqs) != len(tt.wantInputs) {
				t.Fatalf("requests = %d, want %d", len(reqs), len(tt.wantInputs))
			}
			for i, r := range reqs {
				if strings.Join(r.inputs, "|") != strings.Join(tt.wantInputs[i], "|") {
					t.Errorf("request %d inputs = %q, want %q", i, r.inputs, tt.wantInputs[i])
				}
			}
		})
	}
}

func TestOpenAIRequest(t *testing.T) {
	tests := []struct {
		name     string
		suffix   string // appended to the base URL
		cfg      OpenAIConfig
		wantAuth string // "" means no header
		wantDims float64
	}{
		{name: "key", cfg: OpenAIConfig{APIKey: "sk-test"}, wantAuth: "Bearer sk-test"},
		{name: "no key", cfg: OpenAIConfig{}},
		{name: "trailing slash", suffix: "/", cfg: OpenAIConfig{}},
		{name: "dimensions not sent", cfg: OpenAIConfig{Dimensions: 3}},
		{name: "dimensions sent", cfg: OpenAIConfig{Dimensions: 3, SendDimensions: true}, wantDims: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, base := newFakeProvider(t, 3, nil)
			tt.cfg.BaseURL = base + tt.suffix
			tt.cfg.Model = "text-embedding-3-small"
			o, _ := newTestOpenAI(t, tt.cfg)
			if _, err := o.Embed(t.Context(), []string{"t1"}); err != nil {
				t.Fatal(err)
			}
			r := p.requests()[0]
			if r.path != "/v1/embeddings" {
				t.Errorf("path = %q, want /v1/embeddings", r.path)
			}
			if r.hasAuth != (tt.wantAuth != "") || r.auth != tt.wantAuth {
				t.Errorf("Authorization = %q (present %v), want %q", r.auth, r.hasAuth, tt.wantAuth)
			}
			if r.body["model"] != "text-embedding-3-small" || r.body["encoding_format"] != "float" {
				t.Errorf("body = %v, want model and encoding_format float", r.body)
			}
			dims, ok := r.body["dimensions"]
			if ok != (tt.wantDims != 0) || ok && dims != tt.wantDims {
				t.Errorf("dimensions = %v (present %v), want %v", dims, ok, tt.wantDims)
			}
		})
	}
}

func TestOpenAIProbe(t *testing.T) {
	p, base := newFakeProvider(t, 5, nil)
	o, _ := newTestOpenAI(t, OpenAIConfig{BaseURL: base})
	var _ Prober = o
	if d := o.Dimension(); d != 0 {
		t.Fatalf("Dimension() before Probe = %d, want 0", d)
	}
	if err := o.Probe(t.Context()); err != nil {
		t.Fatal(err)
	}
	if d := o.Dimension(); d != 5 {
		t.Errorf("Dimension() after Probe = %d, want 5", d)
	}
	if in := p.requests()[0].inputs; len(in) != 1 || in[0] != probeText {
		t.Errorf("probe inputs = %q, want [%q]", in, probeText)
	}
}

func TestOpenAIDimensionMismatch(t *testing.T) {
	tests := []struct {
		name  string
		cfg   OpenAIConfig
		dims  []int // per request
		calls int   // Embed calls; the last must fail
	}{
		{name: "learned then changed", dims: []int{3, 4}, calls: 2},
		{name: "configured", cfg: OpenAIConfig{Dimensions: 3}, dims: []int{4}, calls: 1},
		{name: "configured and sent", cfg: OpenAIConfig{Dimensions: 3, SendDimensions: true}, dims: []int{1536}, calls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, base := newFakeProvider(t, 0, nil)
			p.dim = func(n int) int { return tt.dims[n] }
			tt.cfg.BaseURL = base
			o, _ := newTestOpenAI(t, tt.cfg)
			var err error
			for i := range tt.calls {
				_, err = o.Embed(t.Context(), []string{"t1"})
				if i < tt.calls-1 && err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			if !errors.Is(err, ErrDimensionMismatch) {
				t.Fatalf("err = %v, want ErrDimensionMismatch", err)
			}
			want, got := tt.dims[0], tt.dims[len(tt.dims)-1]
			if tt.cfg.Dimensions > 0 {
				want = tt.cfg.Dimensions
			}
			for _, n := range []int{want, got} {
				if !strings.Contains(err.Error(), " "+strconv.Itoa(n)) {
					t.Errorf("err = %q, want both lengths %d and %d", err, want, got)
				}
			}
			if n := len(p.requests()); n != tt.calls {
				t.Errorf("requests = %d, want %d (no retry)", n, tt.calls)
			}
		})
	}
}

func TestOpenAIBase64Embedding(t *testing.T) {
	_, base := newFakeProvider(t, 2, func(w http.ResponseWriter, _ int) bool {
		raw := make([]byte, 8)
		binary.LittleEndian.PutUint32(raw, math.Float32bits(3))
		binary.LittleEndian.PutUint32(raw[4:], math.Float32bits(4))
		writeJSON(t, w, http.StatusOK, map[string]any{"data": []map[string]any{
			{"index": 0, "embedding": base64.StdEncoding.EncodeToString(raw)},
		}})
		return true
	})
	o, _ := newTestOpenAI(t, OpenAIConfig{BaseURL: base})
	got, err := o.Embed(t.Context(), []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	if v := got[0]; len(v) != 2 || math.Abs(float64(v[0])-0.6) > 1e-6 || math.Abs(float64(v[1])-0.8) > 1e-6 {
		t.Errorf("vector = %v, want [0.6 0.8]", v)
	}
}

func TestOpenAIConcurrent(t *testing.T) {
	_, base := newFakeProvider(t, 8, nil)
	o, _ := newTestOpenAI(t, OpenAIConfig{BaseURL: base, BatchSize: 3})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			got, err := o.Embed(t.Context(), texts(8))
			if err != nil {
				errs <- err
				return
			}
			for i, v := range got {
				if v[i] != 1 {
					errs <- errors.New("wrong vector under concurrency")
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestOpenAIName(t *testing.T) {
	tests := []struct {
		name string
		cfg  OpenAIConfig
		want string
	}{
		{name: "model", cfg: OpenAIConfig{Model: "text-embedding-3-small"}, want: "openai:text-embedding-3-small"},
		{name: "dimensions not sent", cfg: OpenAIConfig{Model: "nomic-embed-text", Dimensions: 768}, want: "openai:nomic-embed-text"},
		{name: "dimensions sent", cfg: OpenAIConfig{Model: "text-embedding-3-large", Dimensions: 256, SendDimensions: true}, want: "openai:text-embedding-3-large:256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.BaseURL = "http://localhost:11434/v1"
			o, err := NewOpenAI(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := o.Name(); got != tt.want {
				t.Errorf("Name() = %q, want %q", got, tt.want)
			}
		})
	}
}
