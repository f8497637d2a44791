// Package vector is Cairn's portable memory store: free-text memories with
// embeddings, searched by meaning and by keyword.
//
// Callers use *Store; backends implement the small Driver interface
// (vector/embedded on the SQLite file, vector/pgvector on PostgreSQL) and
// prove it by passing the one conformance suite, vector/vectortest.
//
// The Store owns the rules every backend shares: validation, the embedding
// space recorded per (user, collection), and hybrid ranking. A search runs
// two signals through the driver, vector similarity (cosine, at least
// MinSimilarity) and full text, each over the rows that pass the filters,
// and fuses their rankings with reciprocal rank fusion (k = 60). Because the
// filters are applied inside each signal rather than to a fixed top-k, a
// filtered search returns min(limit, matching rows) hits.
//
// The package does not embed text itself: callers pass vectors together
// with the Space (embedder name and dimension) they come from, so that
// vectors of different models are never compared.
package vector
