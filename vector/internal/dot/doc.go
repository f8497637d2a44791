// Package dot is the inner product of two float32 vectors, the operation
// an exact nearest-neighbour scan spends its time in: on amd64 CPUs with
// AVX2 and FMA an assembly loop with four 8-wide accumulators, plain Go
// elsewhere (and with the purego build tag).
package dot
