package main

import (
	"flag"
	"fmt"

	"github.com/cairnkg/cairn/knowledge"
)

// fieldFlags bound what one call may store, for serve and stdio.
type fieldFlags struct {
	maxFieldBytes int
}

func (f *fieldFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.maxFieldBytes, "max-field-bytes", knowledge.DefaultMaxFieldBytes,
		"largest stored field value, in bytes of its JSON encoding (entity fields, corrections, relationship metadata, provenance, memory metadata);\n        a call with a larger one is refused whole with VALIDATION_ERROR")
}

var fieldEnv = []envVar{{"max-field-bytes", "CAIRN_MAX_FIELD_BYTES"}}

// apply sets the bound in cfg.
func (f *fieldFlags) apply(cfg *appConfig) error {
	if f.maxFieldBytes < 1 {
		return usageError{fmt.Sprintf("--max-field-bytes: %d is not a positive number of bytes", f.maxFieldBytes)}
	}
	cfg.maxFieldBytes = f.maxFieldBytes
	return nil
}
