package embed

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Response size limits: a whole batch of embeddings, and the part of an
// error body that is read for its message.
const (
	maxResponseBytes  = 64 << 20
	maxErrorBodyBytes = 64 << 10
	maxErrorMessage   = 512
)

// attempt sends one request and decodes its response. retry says whether
// the failure is transient (429, 5xx, transport) and when to try again.
func (o *OpenAI) attempt(ctx context.Context, body []byte, n int) ([][]float32, retryInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, retryInfo{}, fmt.Errorf("embed: openai: build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if o.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.apiKey)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, retryInfo{ok: true}, fmt.Errorf("embed: openai request: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, retryInfoFor(resp), o.statusError(resp)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, retryInfo{ok: true}, fmt.Errorf("embed: openai: read response from %s: %w", o.display, err)
	}
	if len(data) > maxResponseBytes {
		return nil, retryInfo{}, fmt.Errorf("embed: openai: response from %s exceeds %d MiB", o.display, maxResponseBytes>>20)
	}
	vecs, err := o.decode(data, n)
	return vecs, retryInfo{}, err
}

// statusError describes a non-2xx response with the provider's own message.
// A 401 or 403 names the environment variable that holds the key.
func (o *OpenAI) statusError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
	detail := fmt.Sprintf("status %d", resp.StatusCode)
	if msg := truncate(o.redact(providerMessage(raw)), maxErrorMessage); msg != "" {
		detail += ": " + msg
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		if o.apiKey == "" {
			return fmt.Errorf("embed: openai: %s requires an API key (%s); set %s", o.display, detail, apiKeyEnv)
		}
		return fmt.Errorf("embed: openai: API key rejected by %s (%s); check %s", o.display, detail, apiKeyEnv)
	case http.StatusNotFound:
		return fmt.Errorf("embed: openai: %s (%s); check the base URL and the model %q", o.display, detail, o.model)
	}
	return fmt.Errorf("embed: openai: %s (%s)", o.display, detail)
}

// providerMessage extracts the message from the error bodies of OpenAI and
// Ollama ({"error":{"message":…}}), TEI ({"error":"…"}) and vLLM
// ({"message":…}), falling back to the raw body.
func providerMessage(raw []byte) string {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &body) == nil {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(body.Error, &obj) == nil && obj.Message != "":
			return obj.Message
		case json.Unmarshal(body.Error, &s) == nil && s != "":
			return s
		case body.Message != "":
			return body.Message
		}
	}
	return strings.TrimSpace(string(raw))
}

// redact removes the API key from s, in case a provider echoes it.
func (o *OpenAI) redact(s string) string {
	if o.apiKey == "" {
		return s
	}
	return strings.ReplaceAll(s, o.apiKey, "[redacted]")
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// embeddingResponse is the body of a successful POST /embeddings.
type embeddingResponse struct {
	Data []struct {
		Index     *int   `json:"index"`
		Embedding vector `json:"embedding"`
	} `json:"data"`
}

// decode places each embedding by its index, checks the dimension and
// normalises it. An embedding without an index is taken by position.
func (o *OpenAI) decode(data []byte, n int) ([][]float32, error) {
	var r embeddingResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("embed: openai: decode response from %s: %w", o.display, err)
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("embed: openai: response has %d embeddings for %d inputs", len(r.Data), n)
	}
	out := make([][]float32, n)
	for j, d := range r.Data {
		i := j
		if d.Index != nil {
			i = *d.Index
		}
		switch {
		case i < 0 || i >= n:
			return nil, fmt.Errorf("embed: openai: response index %d out of range [0,%d)", i, n)
		case out[i] != nil:
			return nil, fmt.Errorf("embed: openai: response index %d is duplicated", i)
		case len(d.Embedding) == 0:
			return nil, fmt.Errorf("embed: openai: response index %d has an empty embedding", i)
		}
		if err := o.checkDim(len(d.Embedding)); err != nil {
			return nil, err
		}
		if err := normalise(d.Embedding); err != nil {
			return nil, fmt.Errorf("embed: openai: response index %d: %w", i, err)
		}
		out[i] = d.Embedding
	}
	return out, nil
}

// checkDim learns the dimension from the first vector and enforces it on
// every later one, across concurrent calls.
func (o *OpenAI) checkDim(n int) error {
	if o.dim.CompareAndSwap(0, int64(n)) {
		return nil
	}
	if want := o.dim.Load(); int64(n) != want {
		return fmt.Errorf("%w: %s returned %d values, expected %d", ErrDimensionMismatch, o.name, n, want)
	}
	return nil
}

// normalise scales v to unit length in place; a zero vector stays zero.
func normalise(v []float32) error {
	var ss float64
	for _, x := range v {
		f := float64(x)
		ss += float64(f * f)
	}
	if math.IsNaN(ss) || math.IsInf(ss, 0) {
		return errors.New("embedding has non-finite values")
	}
	if ss == 0 {
		return nil
	}
	norm := math.Sqrt(ss)
	for i, x := range v {
		v[i] = float32(float64(x) / norm)
	}
	return nil
}

// vector decodes an embedding sent as a JSON array of numbers or, by
// providers that ignore encoding_format, as base64 little-endian float32.
type vector []float32

func (v *vector) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '"' {
		return json.Unmarshal(b, (*[]float32)(v))
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("base64 embedding: %w", err)
	}
	if len(raw)%4 != 0 {
		return fmt.Errorf("base64 embedding of %d bytes is not float32", len(raw))
	}
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	*v = out
	return nil
}
