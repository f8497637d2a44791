// Package evalset is Cairn's own evaluation of memory retrieval: a set of
// multi-session conversations written for Cairn (no public benchmark data),
// whose turns are saved as memories and whose questions name the turns
// that answer them, and the harness that measures a configuration on it
// (recall@1, @5 and @10 and hit@5 per kind of question, ingest throughput,
// search latency). `cairn bench --retrieval` runs it with any embedder
// `cairn serve` accepts; `go test -bench Retrieval ./vector/evalset` runs
// it on the embedded store. See docs/memories.md for the figures.
package evalset
