package transformer

import "math"

// Grow returns buf resliced to n zeroed values, reallocating only when its
// capacity is short, so that a pooled workspace does not allocate
// megabytes per batch.
func Grow(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	buf = buf[:n]
	clear(buf)
	return buf
}

// AddBias adds bias to each of the m rows of dst (width len(bias)).
func AddBias(dst, bias []float32, m int) {
	n := len(bias)
	for i := range m {
		row := dst[i*n : (i+1)*n]
		for j, b := range bias {
			row[j] += b
		}
	}
}

// LayerNorm normalises each of the m rows of src (width n) to zero mean
// and unit variance (eps added to the variance), then scales and shifts
// it, writing to dst. The sums run in float64; the variance is rounded to
// float32 before eps is added, as TensorFlow.js and PyTorch do on CPU.
func LayerNorm(dst, src, scale, bias []float32, m, n int, eps float32) {
	for i := range m {
		s := src[i*n : (i+1)*n]
		d := dst[i*n : (i+1)*n]
		var sum float64
		for _, v := range s {
			sum += float64(v)
		}
		mean := float32(sum / float64(n))
		var sq float64
		for _, v := range s {
			c := v - mean
			sq += float64(c * c)
		}
		inv := float32(1 / math.Sqrt(float64(float32(sq/float64(n))+eps)))
		for j, v := range s {
			d[j] = scale[j]*inv*(v-mean) + bias[j]
		}
	}
}
