package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cairnkg/cairn/knowledge"
)

// BytesPerToken is the rough size of a token in JSON text, used to turn
// token budgets into byte budgets.
const BytesPerToken = 4

// BudgetContext is the budget of context loading: about 2,000 tokens.
const BudgetContext = 2000 * BytesPerToken

// MinResponseBytes is the smallest budget a caller may ask for with
// max_response_bytes; below it not even one list item fits.
const MinResponseBytes = 512

// Arguments every tool accepts besides its own. They are taken out before
// the tool's arguments are validated and decoded.
const (
	argMaxResponseBytes = "max_response_bytes"
	argCursor           = "cursor"
)

// Meta describes a response: its size, whether it was cut to fit the
// budget, and how to continue.
type Meta struct {
	Bytes       int    `json:"bytes" jsonschema:"size of the result in bytes of JSON, without this meta"`
	BudgetBytes int    `json:"budget_bytes" jsonschema:"the response budget the result was fitted to"`
	Truncated   bool   `json:"truncated" jsonschema:"true when lists were cut to fit the budget"`
	ExecutionMS int64  `json:"execution_ms"`
	RequestID   string `json:"request_id" jsonschema:"identifies the call in the audit log and the server log"`
	NextCursor  string `json:"next_cursor,omitempty" jsonschema:"when truncated: call the tool again with the same arguments and this cursor for the rest"`
	Hint        string `json:"hint,omitempty"`
}

// callArgs are a call's arguments with the common ones taken out.
type callArgs struct {
	raw    json.RawMessage // the tool's own arguments
	hash   string          // identifies raw, so a cursor only continues the call it came from
	cursor *cursorState
}

// cursorState is what a continuation cursor carries: for each list of the
// result, how many items earlier pages returned.
type cursorState struct {
	Tool string         `json:"t"`
	Hash string         `json:"h"`
	Skip map[string]int `json:"s"`
}

// addCommonArgs declares max_response_bytes on every tool and cursor on the
// tools that only read. A write takes a cursor only when its shape declares
// one with acceptCursor, because repeating it writes nothing new (store,
// idempotent by content): re-running any other write to page its result
// would write again.
func addCommonArgs(in *jsonschema.Schema, budget int, readOnly bool) {
	if in.Properties == nil {
		in.Properties = map[string]*jsonschema.Schema{}
	}
	lo, hi := float64(MinResponseBytes), float64(budget)
	in.Properties[argMaxResponseBytes] = &jsonschema.Schema{Type: "integer", Minimum: &lo, Maximum: &hi,
		Description: fmt.Sprintf("lower this tool's response budget (%d bytes); lists are cut to fit and meta.next_cursor continues them", budget)}
	if readOnly {
		acceptCursor(in)
	}
}

// acceptCursor declares the cursor argument: the tool continues a cut
// answer when called again with the same arguments and meta.next_cursor.
func acceptCursor(in *jsonschema.Schema) {
	if in.Properties == nil {
		in.Properties = map[string]*jsonschema.Schema{}
	}
	n := 2048
	in.Properties[argCursor] = &jsonschema.Schema{Type: "string", MaxLength: &n,
		Description: "meta.next_cursor of a truncated response, to continue it (with the same other arguments)"}
}

// takesCursor reports whether a tool declares the cursor argument.
func takesCursor(t *Tool) bool { return t.input != nil && t.input.Properties[argCursor] != nil }

// completeLists is implemented by results with lists that are answered in
// full whatever the budget (every entity a store touched, every result of a
// batch): the budget applies to the rest of the result, and a continuation
// page leaves them out, as its first page held them all.
type completeLists interface {
	completeLists() []string
}

// addMeta declares meta on every tool's output.
func addMeta(out *jsonschema.Schema) {
	meta, err := jsonschema.For[Meta](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: meta schema: %v", err))
	}
	if out.Properties == nil {
		out.Properties = map[string]*jsonschema.Schema{}
	}
	out.Properties["meta"] = meta
}

// splitCallArgs takes max_response_bytes and cursor out of a call's
// arguments and checks them. Arguments that are not an object are passed
// on untouched, for the tool's validation to name the problem.
func splitCallArgs(raw json.RawMessage, t *Tool) (callArgs, int, error) {
	budget := t.Budget
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		trimmed = []byte("{}")
	}
	var m map[string]json.RawMessage
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &m) != nil {
		return callArgs{raw: raw}, budget, nil
	}
	var cursorText string
	if v, ok := m[argMaxResponseBytes]; ok {
		var n float64
		if err := json.Unmarshal(v, &n); err != nil || n != float64(int(n)) {
			return callArgs{}, 0, &knowledge.ValidationError{Field: argMaxResponseBytes, Expected: "integer", Got: rawKind(v), Message: "must be an integer number of bytes"}
		}
		if n < MinResponseBytes {
			return callArgs{}, 0, &knowledge.ValidationError{Field: argMaxResponseBytes, Expected: fmt.Sprintf("integer ≥ %d", MinResponseBytes),
				Got: fmt.Sprint(n), Message: fmt.Sprintf("must be at least %d", MinResponseBytes)}
		}
		budget = min(budget, int(n)) // a caller may lower the budget, not raise it
		delete(m, argMaxResponseBytes)
	}
	if v, ok := m[argCursor]; ok && takesCursor(t) {
		if err := json.Unmarshal(v, &cursorText); err != nil {
			return callArgs{}, 0, &knowledge.ValidationError{Field: argCursor, Expected: "string", Got: rawKind(v), Message: "must be the meta.next_cursor string of an earlier response"}
		}
		delete(m, argCursor)
	}
	rest, err := json.Marshal(m) // map keys sort, so equal arguments hash alike
	if err != nil {
		return callArgs{}, 0, err
	}
	sum := sha256.Sum256(rest)
	a := callArgs{raw: rest, hash: hex.EncodeToString(sum[:8])}
	if cursorText != "" {
		c, err := decodeCursor(cursorText)
		if err != nil || c.Tool != t.Name() || c.Hash != a.hash {
			return callArgs{}, 0, &knowledge.ValidationError{Field: argCursor, Expected: "the meta.next_cursor of a response to the same tool and arguments",
				Got: "another cursor", Message: "does not continue this call: repeat the same arguments with the cursor the response gave"}
		}
		a.cursor = c
	}
	return a, budget, nil
}

func decodeCursor(s string) (*cursorState, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	var c cursorState
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	for _, n := range c.Skip {
		if n < 0 || n > 1_000_000 {
			return nil, fmt.Errorf("skip out of range")
		}
	}
	return &c, nil
}

func encodeCursor(c cursorState) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// metaReserve is room kept for the meta object itself.
const metaReserve = 320

// fitBudget encodes a tool's result with its meta, cutting the result's
// top-level lists from the end, largest list first, until it fits the
// budget. Lists the result names in completeLists are never cut and do not
// count against the budget. A cut result of a tool that takes a cursor
// carries one that skips what was returned. At least one item is always
// kept, so that paging with the cursor progresses; one item larger than the
// budget is returned whole.
func fitBudget(res any, t *Tool, args callArgs, budget int, start time.Time, requestID string) (json.RawMessage, error) {
	full, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var complete []string
	if c, ok := res.(completeLists); ok {
		complete = c.completeLists()
	}
	meta := Meta{BudgetBytes: budget, RequestID: requestID}
	if args.cursor == nil && len(full)+metaReserve <= budget || len(full) == 0 || full[0] != '{' {
		meta.Bytes = len(full)
		meta.ExecutionMS = time.Since(start).Milliseconds()
		return withMeta(full, meta)
	}
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(full))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	// Lists, and the skips earlier pages asked for.
	type list struct {
		name     string
		items    []any
		sizes    []int
		skip     int
		complete bool
	}
	var lists []*list
	for name, v := range obj {
		items, ok := v.([]any)
		if !ok {
			continue
		}
		l := &list{name: name, complete: slices.Contains(complete, name)}
		if args.cursor != nil {
			l.skip = min(args.cursor.Skip[name], len(items))
		}
		l.items = items[l.skip:]
		for _, it := range l.items {
			b, _ := json.Marshal(it)
			l.sizes = append(l.sizes, len(b)+1)
		}
		lists = append(lists, l)
	}
	slices.SortFunc(lists, func(a, b *list) int { return strings.Compare(a.name, b.name) })
	// size measures the result without its complete lists, which the
	// budget does not count.
	size := func() int {
		for _, l := range lists {
			obj[l.name] = l.items
			if l.complete {
				obj[l.name] = []any{}
			}
		}
		b, _ := json.Marshal(obj)
		return len(b)
	}
	n := size()
	cut := false
	kept := func() int {
		k := 0
		for _, l := range lists {
			if !l.complete {
				k += len(l.items)
			}
		}
		return k
	}
	for n+metaReserve > budget && kept() > 1 {
		var biggest *list
		bigSize := -1
		for _, l := range lists {
			s := 0
			for _, x := range l.sizes[:len(l.items)] {
				s += x
			}
			if !l.complete && len(l.items) > 0 && s > bigSize {
				biggest, bigSize = l, s
			}
		}
		last := len(biggest.items) - 1
		n -= biggest.sizes[last]
		biggest.items = biggest.items[:last]
		cut = true
	}
	// The running size is an estimate; check and finish exactly.
	for size()+metaReserve > budget && kept() > 1 {
		for i := len(lists) - 1; i >= 0; i-- {
			if l := lists[i]; !l.complete && len(l.items) > 0 {
				l.items = l.items[:len(l.items)-1]
				cut = true
				break
			}
		}
	}
	for _, l := range lists {
		obj[l.name] = l.items
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	meta.Bytes = len(b)
	meta.Truncated = cut
	if cut {
		meta.Hint = "truncated to fit the response budget; use pagination: call again with meta.next_cursor"
		if takesCursor(t) {
			c := cursorState{Tool: t.Name(), Hash: args.hash, Skip: map[string]int{}}
			for _, l := range lists {
				c.Skip[l.name] = l.skip + len(l.items)
			}
			meta.NextCursor = encodeCursor(c)
		} else {
			meta.Hint = "truncated to fit the response budget; use the read tools to see the rest"
		}
	}
	meta.ExecutionMS = time.Since(start).Milliseconds()
	return withMeta(b, meta)
}

// withMeta appends "meta" to an encoded object.
func withMeta(obj []byte, meta Meta) (json.RawMessage, error) {
	m, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	obj = bytes.TrimSpace(obj)
	if len(obj) < 2 || obj[0] != '{' {
		return obj, nil
	}
	out := make([]byte, 0, len(obj)+len(m)+10)
	out = append(out, obj[:len(obj)-1]...)
	if len(bytes.TrimSpace(obj[1:len(obj)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"meta":`...)
	out = append(out, m...)
	out = append(out, '}')
	return out, nil
}

// rawKind names the JSON type of a raw value, for validation messages.
func rawKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}
