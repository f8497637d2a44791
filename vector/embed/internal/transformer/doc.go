// Package transformer holds the building blocks that Cairn's in-process
// transformer encoders (uselite, minilm) share: per-row bias and layer
// normalisation, and multi-head self-attention over sequences stacked one
// after another in one activation matrix, with both of its products on
// the gemm kernel. The models differ in how they wire these (pre- or
// post-norm, activations, pooling); that stays in their packages.
package transformer
