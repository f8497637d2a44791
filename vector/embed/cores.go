package embed

import "context"

// coresKey is the context key of WithCores.
type coresKey struct{}

// WithCores returns a context that bounds, for the Embed calls made with
// it, how many goroutines an in-process model spreads a call's work over
// (its batches, and a short text's matrix products): n, at least 1. Work
// beside the requests uses it (Limit) so that the model leaves cores to
// them. Remote providers ignore it.
func WithCores(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, coresKey{}, max(n, 1))
}

// Cores returns the bound WithCores put in ctx, or 0 when there is none
// (the model may use every core GOMAXPROCS allows).
func Cores(ctx context.Context) int {
	n, _ := ctx.Value(coresKey{}).(int)
	return n
}
