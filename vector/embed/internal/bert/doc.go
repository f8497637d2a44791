// Package bert runs the BERT sentence encoders of Cairn's offline
// embedders (vector/embed/minilm, vector/embed/bge) in pure Go, without
// cgo: the BERT uncased WordPiece tokenizer as the Hugging Face fast
// tokenizer runs it (Tokenizer), and the encoder (Encoder: word, position
// and token-type embeddings, post-norm BERT layers of 12 heads, width 384,
// feed-forward 1536 with exact GELU, then mean or [CLS] pooling and L2
// normalisation) on the matrix product of vector/embed/internal/gemm. The
// number of layers is read from the weights (ReadSafetensors, or a
// converted ONNX model), so the six layers of all-MiniLM-L6-v2 and the
// twelve of bge-small-en-v1.5 run on the same code. Each model's package
// compares it with that model's reference implementation.
package bert
