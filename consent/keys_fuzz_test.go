package consent_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/cairnkg/cairn/consent"
)

func TestKeyFromHeaders(t *testing.T) {
	const key = "cairn_sk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"
	tests := []struct {
		name    string
		headers map[string]string
		want    error
	}{
		{name: "bearer", headers: map[string]string{"Authorization": "Bearer " + key}},
		{name: "bearer any case", headers: map[string]string{"Authorization": "bearer " + key}},
		{name: "x-api-key", headers: map[string]string{"X-API-Key": key}},
		{name: "missing", headers: nil, want: consent.ErrMissingKey},
		{name: "basic scheme", headers: map[string]string{"Authorization": "Basic " + key}, want: consent.ErrMalformedKey},
		{name: "no scheme", headers: map[string]string{"Authorization": key}, want: consent.ErrMalformedKey},
		{name: "short", headers: map[string]string{"X-API-Key": "abc"}, want: consent.ErrMalformedKey},
		{name: "control char", headers: map[string]string{"X-API-Key": key + "\x01"}, want: consent.ErrMalformedKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.headers {
				h.Set(k, v)
			}
			got, err := consent.KeyFromHeaders(h)
			if !errors.Is(err, tt.want) || (tt.want == nil && got != key) {
				t.Errorf("KeyFromHeaders = %q, %v; want %q, %v", got, err, key, tt.want)
			}
		})
	}
}

func FuzzKeyFromHeaders(f *testing.F) {
	f.Add("Bearer cairn_sk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG", "")
	f.Add("", "cairn_sk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG")
	f.Add("Basic abc", "x")
	f.Add("Bearer  ", "")
	f.Fuzz(func(t *testing.T, authorization, apiKey string) {
		h := http.Header{}
		if authorization != "" {
			h["Authorization"] = []string{authorization}
		}
		if apiKey != "" {
			h["X-Api-Key"] = []string{apiKey}
		}
		key, err := consent.KeyFromHeaders(h)
		switch {
		case err == nil:
			if consent.CheckKeyFormat(key) != nil {
				t.Fatalf("accepted a key that fails CheckKeyFormat: %q", key)
			}
		case errors.Is(err, consent.ErrMissingKey), errors.Is(err, consent.ErrMalformedKey):
		default:
			t.Fatalf("unexpected error %v", err)
		}
	})
}
