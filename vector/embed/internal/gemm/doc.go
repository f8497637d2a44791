// Package gemm is the float32 matrix product Cairn's in-process embedding
// models spend their time in: C += A·B (MulAdd), A row-major (M×K), B
// packed once in panels of 16 columns (Pack), C row-major (M×N). The work
// is cut in blocks of 256 rows of B (which then stay in the first-level
// cache while every row block of A passes) and in micro-tiles of 6 rows ×
// 16 columns, computed by an AVX2/FMA assembly kernel on amd64 CPUs that
// have them, plain Go elsewhere (and with the purego build tag). On CPUs
// with AVX-512 a kernel of 6 rows × 32 columns takes two panels at once
// (a question's embedding about a fifth faster); it computes each element
// with the same fused multiply-adds in the same order, so its results are
// the AVX2 kernel's to the bit (TestFusedKernelsAgree).
//
// It is internal to vector/embed so that every model (uselite, minilm)
// runs on one copy of the kernel.
package gemm
