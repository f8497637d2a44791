//go:build !amd64 || purego

package dot

func product(a, b []float32) float32 { return productGo(a, b) }
