// Package embed turns texts into vectors for Cairn's semantic search.
//
// Every provider implements Embedder: one L2-normalised vector per text, in
// input order, so that cosine similarity is a plain dot product; an empty or
// whitespace-only text yields a zero vector. Name identifies provider and
// model and is stored with each collection, so that switching provider is
// detected and `cairn reembed` can rebuild the vectors.
//
// Two providers exist:
//
//   - NewLocal, the default: a deterministic, offline feature-hashing
//     embedder that needs no model files and gives bit-identical vectors on
//     every machine. It captures shared words and word forms, not meaning.
//   - NewOpenAI: any OpenAI-compatible /embeddings endpoint (OpenAI, Ollama,
//     vLLM, TEI), with batching, retries and dimension checks. Its dimension
//     may be learned from the provider; see Prober.
//
// New picks one of them from a Config filled by the command line.
package embed
