//go:build !amd64 || purego

package gemm

import "testing"

func forEachKernel(t *testing.T, f func(t *testing.T)) { t.Run("go", f) }

func fusedKernels() []string { return nil }
