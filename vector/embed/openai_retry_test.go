package embed

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestOpenAIRetryAfter(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		retryAfter string
		want       time.Duration
	}{
		{name: "429 seconds", status: http.StatusTooManyRequests, retryAfter: "7", want: 7 * time.Second},
		{name: "503 seconds", status: http.StatusServiceUnavailable, retryAfter: "2", want: 2 * time.Second},
		{name: "capped", status: http.StatusTooManyRequests, retryAfter: "3600", want: maxRetryAfter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, base := newFakeProvider(t, 3, func(w http.ResponseWriter, n int) bool {
				if n > 0 {
					return false
				}
				w.Header().Set("Retry-After", tt.retryAfter)
				writeError(t, w, tt.status, "slow down")
				return true
			})
			o, rec := newTestOpenAI(t, OpenAIConfig{BaseURL: base})
			got, err := o.Embed(t.Context(), []string{"t1"})
			if err != nil {
				t.Fatal(err)
			}
			wantUnit(t, got[0], 1)
			if n := len(p.requests()); n != 2 {
				t.Errorf("requests = %d, want 2", n)
			}
			if s := rec.durations(); len(s) != 1 || s[0] != tt.want {
				t.Errorf("sleeps = %v, want [%v]", s, tt.want)
			}
		})
	}
}

func TestOpenAIRetriesExhausted(t *testing.T) {
	tests := []struct {
		name         string
		maxRetries   int
		failures     int // requests that fail before success
		wantAttempts int
		wantErr      bool
	}{
		{name: "default gives 4 attempts", maxRetries: 0, failures: 100, wantAttempts: 4, wantErr: true},
		{name: "two retries", maxRetries: 2, failures: 3, wantAttempts: 3, wantErr: true},
		{name: "no retries", maxRetries: -1, failures: 1, wantAttempts: 1, wantErr: true},
		{name: "recovers on last retry", maxRetries: 3, failures: 3, wantAttempts: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, base := newFakeProvider(t, 3, func(w http.ResponseWriter, n int) bool {
				if n >= tt.failures {
					return false
				}
				writeError(t, w, http.StatusInternalServerError, "upstream exploded")
				return true
			})
			o, rec := newTestOpenAI(t, OpenAIConfig{BaseURL: base, MaxRetries: tt.maxRetries})
			_, err := o.Embed(t.Context(), []string{"t1"})
			if gotErr := err != nil; gotErr != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && (!strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), "upstream exploded")) {
				t.Errorf("err = %q, want status 500 and the provider's message", err)
			}
			if n := len(p.requests()); n != tt.wantAttempts {
				t.Errorf("attempts = %d, want %d", n, tt.wantAttempts)
			}
			sleeps := rec.durations()
			if len(sleeps) != tt.wantAttempts-1 {
				t.Errorf("sleeps = %v, want %d", sleeps, tt.wantAttempts-1)
			}
			for i, d := range sleeps {
				full := min(backoffBase<<i, backoffCap)
				if d < full/2 || d > full {
					t.Errorf("sleep %d = %v, want within [%v, %v]", i, d, full/2, full)
				}
			}
		})
	}
}

func TestOpenAINoRetry(t *testing.T) {
	const key = "sk-secret-0123456789"
	tests := []struct {
		name     string
		status   int
		apiKey   string
		body     string
		wantMsgs []string
	}{
		{name: "400", status: 400, apiKey: key, body: `{"error":{"message":"input too long"}}`, wantMsgs: []string{"400", "input too long"}},
		{name: "401 echoing key", status: 401, apiKey: key, body: `{"error":{"message":"Incorrect API key provided: ` + key + `"}}`, wantMsgs: []string{"401", "rejected", apiKeyEnv}},
		{name: "401 without key", status: 401, body: `{"error":"unauthorized"}`, wantMsgs: []string{"401", "requires an API key", apiKeyEnv, "unauthorized"}},
		{name: "403", status: 403, apiKey: key, body: `forbidden`, wantMsgs: []string{"403", "rejected", apiKeyEnv, "forbidden"}},
		{name: "404", status: 404, apiKey: key, body: `{"message":"model not found","object":"error"}`, wantMsgs: []string{"404", "model not found", "test-model"}},
		{name: "long body truncated", status: 400, apiKey: key, body: strings.Repeat("x", 5000), wantMsgs: []string{"400", strings.Repeat("x", maxErrorMessage) + "…"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, base := newFakeProvider(t, 3, func(w http.ResponseWriter, _ int) bool {
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
				return true
			})
			o, rec := newTestOpenAI(t, OpenAIConfig{BaseURL: base, APIKey: tt.apiKey})
			_, err := o.Embed(t.Context(), []string{"t1"})
			if err == nil {
				t.Fatal("Embed succeeded, want error")
			}
			msg := err.Error()
			for _, want := range tt.wantMsgs {
				if !strings.Contains(msg, want) {
					t.Errorf("err = %q, want it to contain %q", msg, want)
				}
			}
			if strings.Contains(msg, key) {
				t.Errorf("err = %q contains the API key", msg)
			}
			if strings.Contains(msg, strings.Repeat("x", maxErrorMessage+1)) {
				t.Errorf("err has %d bytes, want the body truncated", len(msg))
			}
			if n := len(p.requests()); n != 1 {
				t.Errorf("attempts = %d, want 1", n)
			}
			if s := rec.durations(); len(s) != 0 {
				t.Errorf("sleeps = %v, want none", s)
			}
		})
	}
}

func TestOpenAIBadResponses(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string
	}{
		{name: "missing", data: `[{"index":0,"embedding":[1,0]}]`, want: "1 embeddings for 2 inputs"},
		{name: "duplicate", data: `[{"index":0,"embedding":[1,0]},{"index":0,"embedding":[0,1]}]`, want: "duplicated"},
		{name: "out of range", data: `[{"index":0,"embedding":[1,0]},{"index":2,"embedding":[0,1]}]`, want: "out of range"},
		{name: "negative", data: `[{"index":-1,"embedding":[1,0]},{"index":1,"embedding":[0,1]}]`, want: "out of range"},
		{name: "empty embedding", data: `[{"index":0,"embedding":[]},{"index":1,"embedding":[0,1]}]`, want: "empty embedding"},
		{name: "not json", data: `nonsense`, want: "decode response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, base := newFakeProvider(t, 2, func(w http.ResponseWriter, _ int) bool {
				w.Write([]byte(`{"data":` + tt.data + `}`))
				return true
			})
			o, _ := newTestOpenAI(t, OpenAIConfig{BaseURL: base})
			_, err := o.Embed(t.Context(), []string{"a", "b"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
			if n := len(p.requests()); n != 1 {
				t.Errorf("attempts = %d, want 1", n)
			}
		})
	}
}

func TestOpenAITransportErrorRetried(t *testing.T) {
	p, base := newFakeProvider(t, 3, func(w http.ResponseWriter, n int) bool {
		if n > 0 {
			return false
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return true
		}
		conn.Close()
		return true
	})
	o, rec := newTestOpenAI(t, OpenAIConfig{BaseURL: base})
	got, err := o.Embed(t.Context(), []string{"t2"})
	if err != nil {
		t.Fatal(err)
	}
	wantUnit(t, got[0], 2)
	if n := len(p.requests()); n != 2 {
		t.Errorf("attempts = %d, want 2", n)
	}
	if s := rec.durations(); len(s) != 1 {
		t.Errorf("sleeps = %v, want 1", s)
	}
}

func TestOpenAICancelDuringBackoff(t *testing.T) {
	_, base := newFakeProvider(t, 3, func(w http.ResponseWriter, _ int) bool {
		writeError(t, w, http.StatusServiceUnavailable, "busy")
		return true
	})
	o, _ := newTestOpenAI(t, OpenAIConfig{BaseURL: base})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// The real sleep, asked for an hour: the test only ends if it returns
	// on cancellation.
	o.sleep = func(ctx context.Context, _ time.Duration) error {
		cancel()
		return sleepCtx(ctx, time.Hour)
	}
	if _, err := o.Embed(ctx, []string{"t1"}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestSleepCtx(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		d    time.Duration
		want error
	}{
		{name: "cancelled", ctx: cancelled, d: time.Hour, want: context.Canceled},
		{name: "zero", ctx: t.Context(), d: 0, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := sleepCtx(tt.ctx, tt.d); !errors.Is(err, tt.want) {
				t.Errorf("sleepCtx = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		in     string
		want   time.Duration
		wantOK bool
	}{
		{name: "absent", in: ""},
		{name: "seconds", in: "12", want: 12 * time.Second, wantOK: true},
		{name: "zero", in: "0", want: 0, wantOK: true},
		{name: "capped", in: "99999999999999", want: maxRetryAfter, wantOK: true},
		{name: "negative", in: "-3"},
		{name: "garbage", in: "soon"},
		{name: "http date", in: now.Add(5 * time.Second).Format(http.TimeFormat), want: 5 * time.Second, wantOK: true},
		{name: "past date", in: now.Add(-time.Hour).Format(http.TimeFormat), want: 0, wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseRetryAfter(tt.in, now)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("parseRetryAfter(%q) = %v, %v, want %v, %v", tt.in, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
