package modeltest

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// Require stops tb when err, the error of a model's New, says the model
// is not built in: it skips with one line naming the script that
// provisions it, or fails under CI=true, where every model is built in.
func Require(tb testing.TB, err error, script string) {
	tb.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%v; CI needs the model (%s)", err, script)
	}
	tb.Skipf("model files not built in; run %s", script)
}

// ReadFixture decodes the JSON file at path into v.
func ReadFixture(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// MaxDiff is the largest absolute difference between two vectors'
// components; +Inf when their lengths differ.
func MaxDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var d float64
	for i := range a {
		d = max(d, math.Abs(float64(a[i])-float64(b[i])))
	}
	return d
}
