package dot

// Product returns Σ a[i]·b[i] over a's elements; b must be at least as
// long as a. The sum is taken in partial sums, so it may differ from a
// sequential one in the last bits, and between CPUs with and without the
// assembly loop; on one machine it is always the same.
func Product(a, b []float32) float32 {
	b = b[:len(a)]
	return product(a, b)
}

// productGo is the portable loop, four partial sums.
func productGo(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}
