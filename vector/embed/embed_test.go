package embed

import (
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	valid := OpenAIConfig{BaseURL: "http://localhost:11434/v1", Model: "nomic-embed-text"}
	tests := []struct {
		name     string
		cfg      Config
		wantName string
		wantErr  []string // substrings of the error; nil means success
	}{
		{name: "empty is local", cfg: Config{}, wantName: localName},
		{name: "local", cfg: Config{Provider: "local"}, wantName: localName},
		{name: "case and space", cfg: Config{Provider: " Local "}, wantName: localName},
		{name: "openai", cfg: Config{Provider: "openai", OpenAI: valid}, wantName: "openai:nomic-embed-text"},
		{name: "openai without model", cfg: Config{Provider: "openai", OpenAI: OpenAIConfig{BaseURL: valid.BaseURL}}, wantErr: []string{"Model is required"}},
		{name: "bogus", cfg: Config{Provider: "bogus"}, wantErr: []string{`"bogus"`, "local", "openai"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(tt.cfg)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("New = %v, want error", e)
				}
				if e != nil {
					t.Errorf("New returned a non-nil embedder with an error")
				}
				for _, want := range tt.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("err = %q, want it to contain %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := e.Name(); got != tt.wantName {
				t.Errorf("Name() = %q, want %q", got, tt.wantName)
			}
		})
	}
}

func TestNewOpenAIValidation(t *testing.T) {
	tests := []struct {
		name    string
		cfg     OpenAIConfig
		wantErr string // "" means valid
	}{
		{name: "valid", cfg: OpenAIConfig{BaseURL: "https://api.openai.com/v1", Model: "m"}},
		{name: "valid with query", cfg: OpenAIConfig{BaseURL: "https://host/openai?api-version=1", Model: "m"}},
		{name: "missing base URL", cfg: OpenAIConfig{Model: "m"}, wantErr: "BaseURL is required"},
		{name: "unparsable URL", cfg: OpenAIConfig{BaseURL: "http://[::1", Model: "m"}, wantErr: "invalid BaseURL"},
		{name: "no scheme", cfg: OpenAIConfig{BaseURL: "localhost:11434/v1", Model: "m"}, wantErr: "invalid BaseURL"},
		{name: "ftp", cfg: OpenAIConfig{BaseURL: "ftp://host/v1", Model: "m"}, wantErr: "invalid BaseURL"},
		{name: "missing model", cfg: OpenAIConfig{BaseURL: "http://host/v1", Model: "  "}, wantErr: "Model is required"},
		{name: "negative dimensions", cfg: OpenAIConfig{BaseURL: "http://host", Model: "m", Dimensions: -1}, wantErr: "Dimensions"},
		{name: "send without dimensions", cfg: OpenAIConfig{BaseURL: "http://host", Model: "m", SendDimensions: true}, wantErr: "SendDimensions"},
		{name: "negative batch", cfg: OpenAIConfig{BaseURL: "http://host", Model: "m", BatchSize: -1}, wantErr: "BatchSize"},
		{name: "negative timeout", cfg: OpenAIConfig{BaseURL: "http://host", Model: "m", Timeout: -1}, wantErr: "Timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := NewOpenAI(tt.cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("NewOpenAI: %v", err)
				}
				if !strings.Contains(o.endpoint, "/embeddings") {
					t.Errorf("endpoint = %q, want it to end in /embeddings", o.endpoint)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestNewOpenAIDefaults(t *testing.T) {
	o, err := NewOpenAI(OpenAIConfig{BaseURL: "http://host/v1/", Model: "m", MaxRetries: -5})
	if err != nil {
		t.Fatal(err)
	}
	if o.endpoint != "http://host/v1/embeddings" {
		t.Errorf("endpoint = %q", o.endpoint)
	}
	if o.batchSize != defaultBatchSize || o.maxRetries != 0 || o.timeout != defaultTimeout || o.client == nil || o.client.Timeout != defaultTimeout {
		t.Errorf("defaults: batch %d retries %d timeout %v client %v", o.batchSize, o.maxRetries, o.timeout, o.client)
	}
}
