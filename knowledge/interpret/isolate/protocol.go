package isolate

import (
	"encoding/gob"
	"encoding/json"
	"time"

	"github.com/cairnkg/cairn/knowledge/interpret"
)

// The parent and the worker speak gob over the worker's stdin and stdout:
// the parent writes a header and then a request, the worker writes one
// response and exits. Gob keeps the Go types of the values inside records
// (an int64 stays an int64), so that a Result read in the worker is the one
// interpret.Parse would have returned in process.

// header is written first, so that the worker limits itself before it
// reads the (untrusted) document.
type header struct {
	MemoryBytes int64
	CPUSeconds  int64
}

type request struct {
	Document interpret.Document
}

type response struct {
	Result interpret.Result
	// Err is the parser's error message; Unreadable and TooComplex (the
	// limit's name) say which kind it was.
	Err        string
	Unreadable bool
	TooComplex string
}

func init() {
	// The dynamic types a record's fields, a document's configuration or
	// a result's meta may hold, beside gob's basic types.
	for _, v := range []any{
		map[string]any{}, []any{}, []string{}, []map[string]any{}, map[string]string{},
		[]int64{}, []float64{}, json.Number(""), time.Time{},
	} {
		gob.Register(v)
	}
}
