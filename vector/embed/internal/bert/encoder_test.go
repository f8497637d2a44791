package bert

import (
	"math"
	"testing"
)

// TestErf compares erf with math.Erf on a fine grid over [-6, 6].
func TestErf(t *testing.T) {
	worst := 0.0
	for i := -60000; i <= 60000; i++ {
		x := float64(i) / 1e4
		worst = max(worst, math.Abs(float64(erf(float32(x)))-math.Erf(float64(float32(x)))))
	}
	if worst > 5e-7 {
		t.Errorf("erf differs from math.Erf by up to %.3g", worst)
	}
}
