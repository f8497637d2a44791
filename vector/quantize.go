package vector

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Entity embeddings are stored with 8-bit scalar quantization: a vector of
// n float32s becomes 4+n bytes, a quarter of what it was. Ranking compares
// them by cosine, which cares about directions, not magnitudes; one scale
// per vector keeps the largest component exact and every other within half
// a step (scale/2) of its value. The recall this costs is measured by
// TestInt8Recall: over 10,000 entity texts embedded by the local embedder,
// 99.5% of the 10 nearest neighbours of a query under the packed vectors
// are those under the float32 ones (recall@10 0.995; the misses sit at the
// boundary, within a hair of the 10th).
//
// Memories keep their float32 vectors: they are searched by the vector
// backends themselves (an exact scan, pgvector's operators), and their
// result order is a contract those searches keep.

// PackInt8 encodes v as its scale (the largest absolute component divided
// by 127, a little-endian float32) followed by one signed byte per
// component: round(x/scale). A zero vector has scale 0 and zero bytes.
// Components that are not finite cannot be packed: the caller validates
// them first (EntityStore.Put does).
func PackInt8(v []float32) []byte {
	var maxAbs float32
	for _, x := range v {
		maxAbs = max(maxAbs, float32(math.Abs(float64(x))))
	}
	out := make([]byte, 4+len(v))
	scale := maxAbs / 127
	binary.LittleEndian.PutUint32(out, math.Float32bits(scale))
	if scale == 0 {
		return out
	}
	for i, x := range v {
		q := math.Round(float64(x) / float64(scale))
		out[4+i] = byte(int8(max(-127, min(127, q))))
	}
	return out
}

// Finite reports whether every component of v is a finite number, as
// PackInt8 and the stores require.
func Finite(v []float32) bool {
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}

// UnpackInt8 decodes what PackInt8 encoded: component i is its byte times
// the scale. It reports an error for a value of the wrong length.
func UnpackInt8(b []byte, dimension int) ([]float32, error) {
	if len(b) != 4+dimension {
		return nil, fmt.Errorf("vector: packed vector of %d bytes for dimension %d", len(b), dimension)
	}
	scale := math.Float32frombits(binary.LittleEndian.Uint32(b))
	v := make([]float32, dimension)
	for i := range v {
		v[i] = float32(int8(b[4+i])) * scale
	}
	return v, nil
}

// DotInt8 returns, for v := UnpackInt8(b, len(a)), the dot product of a
// and v and the sum of the squares of v's components, each added up in
// float64 in the order of the components, without unpacking b: the same
// sums as a loop over a and v computes. ok is false when b is not a packed
// vector of len(a) components.
func DotInt8(a []float32, b []byte) (dot, sumSquares float64, ok bool) {
	if len(b) != 4+len(a) {
		return 0, 0, false
	}
	scale := math.Float32frombits(binary.LittleEndian.Uint32(b))
	b = b[4 : len(a)+4]
	for i, x := range a {
		y := float64(float32(int8(b[i])) * scale) // as UnpackInt8 computes it
		dot += float64(x) * y
		sumSquares += y * y
	}
	return dot, sumSquares, true
}

// RoundInt8 returns v as it reads back after PackInt8 and UnpackInt8: what
// EntityStore.Get returns for a vector that Put stored.
func RoundInt8(v []float32) []float32 {
	out, _ := UnpackInt8(PackInt8(v), len(v))
	return out
}
