// Package modeltest holds what the tests and benchmarks of Cairn's
// in-process embedding models (uselite, minilm) share: one Embed
// benchmark, so that their texts-per-second figures compare, and the
// helpers of their equivalence tests.
package modeltest
