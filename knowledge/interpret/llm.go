package interpret

import (
	"context"
	"errors"
)

// LLMConfig selects an OpenAI-compatible chat endpoint.
type LLMConfig struct {
	BaseURL     string
	Model       string
	APIKey      string
	Temperature float64
}

type llmClient struct{ cfg LLMConfig }

func newLLMClient(cfg LLMConfig) *llmClient { return &llmClient{cfg: cfg} }

func (c *llmClient) extract(ctx context.Context, text string) ([]map[string]any, map[string]any, error) {
	return nil, nil, errors.New("not yet")
}
