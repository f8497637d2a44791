package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxStdioDepth bounds how deeply the arrays and objects of one stdio
// frame may nest. MCP envelopes take about five levels; the rest is room for
// the arguments of a tool.
const DefaultMaxStdioDepth = 64

// StdioTransport serves MCP as newline-delimited JSON on stdin and stdout,
// like the SDK's [mcpsdk.StdioTransport], but a bad frame does not end the
// session. The SDK's reader closes the connection on the first line it cannot
// take (not JSON, not a JSON-RPC message, a batch the protocol version
// forbids, a duplicate id in a batch, an oversized line), which would leave a
// client that launched cairn with a dead server. StdioTransport reads the
// lines itself, answers each bad one with a JSON-RPC error (-32700 parse
// error for a line that is not UTF-8 JSON or nests deeper than MaxDepth,
// -32600 invalid request for anything else, with id null unless the id could
// be read), and passes only lines the SDK is sure to accept on to an
// [mcpsdk.IOTransport], which keeps the framing and batching of valid
// messages.
//
// Batches are passed on only under protocol versions 2024-11-05 and
// 2025-03-26, as negotiated by a successful initialize, and with ids unique
// in the batch and not held by an earlier batch still being answered. The
// notifications and responses in a batch are passed on one by one and its
// calls as a batch: the SDK would otherwise wait for a response to a
// notification, never answer the batch, and end the session at the next
// batch holding a notification.
type StdioTransport struct {
	// Reader is where frames come from; nil means os.Stdin.
	Reader io.Reader
	// Writer is where answers go; nil means os.Stdout. It is never closed.
	Writer io.Writer
	// MaxLineBytes bounds one line, without its newline; a longer line is
	// skipped without being held in memory. 0 means DefaultMaxRequestBytes,
	// the bound of an HTTP request body.
	MaxLineBytes int
	// MaxDepth bounds the nesting of one line; 0 means DefaultMaxStdioDepth.
	MaxDepth int
}

// Connect implements [mcpsdk.Transport]. It starts a goroutine that reads
// Reader until it ends; like the SDK's stdio transport, that goroutine
// outlives the connection while a read of stdin is blocked.
func (t *StdioTransport) Connect(ctx context.Context) (mcpsdk.Connection, error) {
	in, out := t.Reader, t.Writer
	if in == nil {
		in = os.Stdin
	}
	if out == nil {
		out = os.Stdout
	}
	f := &frameFilter{maxLine: t.MaxLineBytes, maxDepth: t.MaxDepth, batchIDs: map[jsonrpc.ID]bool{}, initIDs: map[jsonrpc.ID]bool{}}
	if f.maxLine <= 0 {
		f.maxLine = DefaultMaxRequestBytes
	}
	if f.maxDepth <= 0 {
		f.maxDepth = DefaultMaxStdioDepth
	}
	f.out = &frameWriter{w: out, f: f}
	pr, pw := io.Pipe()
	go f.run(in, pw)
	// The filter bounds lines, so the SDK's own bound is off (-1).
	return (&mcpsdk.IOTransport{Reader: pr, Writer: f.out, MaxLineLength: -1}).Connect(ctx)
}

// frameFilter sits between stdin and the SDK's reader. It also watches what
// the SDK writes, to know the negotiated protocol version and which batch ids
// are still awaiting their answer, as the SDK knows them.
type frameFilter struct {
	maxLine, maxDepth int
	out               *frameWriter

	mu sync.Mutex
	// version is the protocol version of the first successful initialize
	// response; the SDK never changes it afterwards.
	version string
	// initIDs are initialize calls passed on whose response has not been
	// written yet (tracked only until version is known).
	initIDs map[jsonrpc.ID]bool
	// batchIDs are the ids of calls passed on in a batch whose batch answer
	// has not been written yet. The SDK ends the session when a batch reuses
	// one.
	batchIDs map[jsonrpc.ID]bool
}

// frameError is the JSON-RPC error a bad frame gets.
type frameError struct {
	id      jsonrpc.ID
	code    int64
	message string
}

var newline = []byte("\n")

// run passes the good lines of in to pw and answers the bad ones, until in
// ends (pw then ends too) or the SDK closes its side.
func (f *frameFilter) run(in io.Reader, pw *io.PipeWriter) {
	br := bufio.NewReaderSize(in, 64<<10)
	var buf []byte
	for {
		line, tooLong, readErr := readLine(br, buf[:0], f.maxLine)
		buf = line
		var frames [][]byte
		var ferr *frameError
		if tooLong {
			ferr = &frameError{code: jsonrpc.CodeInvalidRequest, message: fmt.Sprintf("line longer than %d bytes", f.maxLine)}
		} else {
			frames, ferr = f.check(line)
		}
		var err error
		if ferr != nil {
			err = f.out.writeError(ferr)
		}
		for _, fr := range frames {
			if err == nil {
				_, err = pw.Write(fr)
			}
			if err == nil {
				_, err = pw.Write(newline)
			}
		}
		switch {
		case err != nil:
			pw.CloseWithError(err)
			return
		case errors.Is(readErr, io.EOF):
			pw.Close()
			return
		case readErr != nil:
			pw.CloseWithError(readErr)
			return
		}
	}
}

// readLine appends the next line of br, without its newline, to buf. A line
// longer than max is read to its end but not kept: tooLong is set and line
// is empty. At the end of input err is io.EOF, and line is what came after
// the last newline.
func readLine(br *bufio.Reader, buf []byte, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if err == nil {
			chunk = chunk[:len(chunk)-1]
		}
		if !tooLong {
			if len(buf)+len(chunk) > max {
				tooLong, buf = true, buf[:0]
			} else {
				buf = append(buf, chunk...)
			}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return buf, tooLong, err
		}
	}
}

// check returns the frames to pass on for one line, or the error to answer
// it with. A blank line is neither.
func (f *frameFilter) check(line []byte) ([][]byte, *frameError) {
	line = bytes.Trim(line, " \t\r\n")
	switch {
	case len(line) == 0:
		return nil, nil
	case !utf8.Valid(line):
		return nil, &frameError{code: jsonrpc.CodeParseError, message: "parse error: line is not valid UTF-8"}
	case nestsDeeper(line, f.maxDepth):
		return nil, &frameError{code: jsonrpc.CodeParseError, message: fmt.Sprintf("parse error: JSON nests deeper than %d levels", f.maxDepth)}
	case !json.Valid(line):
		return nil, &frameError{code: jsonrpc.CodeParseError, message: "parse error: line is not JSON"}
	case line[0] == '[':
		return f.checkBatch(line)
	}
	// The SDK decodes a frame with this same function.
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, &frameError{id: readID(line), code: jsonrpc.CodeInvalidRequest, message: "invalid request: " + err.Error()}
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method == "initialize" {
		f.mu.Lock()
		if f.version == "" {
			f.initIDs[req.ID] = true
		}
		f.mu.Unlock()
	}
	return [][]byte{line}, nil
}

// checkBatch is check for a JSON array.
func (f *frameFilter) checkBatch(line []byte) ([][]byte, *frameError) {
	invalid := func(format string, args ...any) *frameError {
		return &frameError{code: jsonrpc.CodeInvalidRequest, message: "invalid request: " + fmt.Sprintf(format, args...)}
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(line, &elems); err != nil {
		return nil, invalid("%v", err)
	}
	if len(elems) == 0 {
		return nil, invalid("empty batch")
	}
	f.mu.Lock()
	version := f.version
	f.mu.Unlock()
	switch version {
	case "2024-11-05", "2025-03-26":
	case "":
		return nil, invalid("batch before initialize has negotiated a protocol version")
	default:
		return nil, invalid("JSON-RPC batches are not allowed under protocol version %s", version)
	}
	var frames [][]byte
	var calls [][]byte
	ids := map[jsonrpc.ID]bool{}
	for i, raw := range elems {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return nil, invalid("batch element %d: %v", i, err)
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			if ids[req.ID] {
				return nil, invalid("duplicate id %v in batch", req.ID.Raw())
			}
			ids[req.ID] = true
			calls = append(calls, raw)
		} else {
			frames = append(frames, raw)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for id := range ids {
		if f.batchIDs[id] {
			return nil, invalid("id %v is still in use by an earlier batch", id.Raw())
		}
	}
	if len(calls) > 0 {
		for id := range ids {
			f.batchIDs[id] = true
		}
		frames = append(frames, append(append([]byte("["), bytes.Join(calls, []byte(","))...), ']'))
	}
	return frames, nil
}

// observe notes what the SDK writes: the version an initialize negotiated,
// and the ids of a batch that has been answered.
func (f *frameFilter) observe(p []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p = bytes.TrimSpace(p)
	switch {
	case len(p) == 0:
	case p[0] == '{' && len(f.initIDs) > 0:
		msg, err := jsonrpc.DecodeMessage(p)
		resp, ok := msg.(*jsonrpc.Response)
		if err != nil || !ok || !f.initIDs[resp.ID] {
			return
		}
		delete(f.initIDs, resp.ID)
		var result struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if resp.Error == nil && json.Unmarshal(resp.Result, &result) == nil && result.ProtocolVersion != "" {
			f.version = result.ProtocolVersion
			clear(f.initIDs)
		}
	case p[0] == '[' && len(f.batchIDs) > 0:
		var elems []json.RawMessage
		if json.Unmarshal(p, &elems) != nil {
			return
		}
		for _, raw := range elems {
			if resp, ok := decodeResponse(raw); ok {
				delete(f.batchIDs, resp.ID)
			}
		}
	}
}

func decodeResponse(raw []byte) (*jsonrpc.Response, bool) {
	msg, err := jsonrpc.DecodeMessage(raw)
	if err != nil {
		return nil, false
	}
	resp, ok := msg.(*jsonrpc.Response)
	return resp, ok
}

// readID is the id of an object that is not a valid message, when it has
// one of a valid type; otherwise the null id.
func readID(line []byte) jsonrpc.ID {
	var fields map[string]json.RawMessage
	if json.Unmarshal(line, &fields) != nil {
		return jsonrpc.ID{}
	}
	var v any
	if json.Unmarshal(fields["id"], &v) != nil {
		return jsonrpc.ID{}
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		return jsonrpc.ID{}
	}
	return id
}

// nestsDeeper reports whether the arrays and objects of data nest deeper
// than max, counting brackets outside strings.
func nestsDeeper(data []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// frameWriter is the one writer of stdout: the SDK writes each frame with
// one Write ending in a newline, and the filter writes its errors, under the
// same lock so frames never interleave.
type frameWriter struct {
	mu sync.Mutex
	w  io.Writer
	f  *frameFilter
}

// Write writes one frame of the SDK's.
func (w *frameWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.f.observe(p)
	return w.w.Write(p)
}

// Close does nothing: stdout outlives the session.
func (w *frameWriter) Close() error { return nil }

// writeError writes the answer to a bad frame.
func (w *frameWriter) writeError(e *frameError) error {
	type wireError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	b, err := json.Marshal(struct {
		JSONRPC string    `json:"jsonrpc"`
		ID      any       `json:"id"`
		Error   wireError `json:"error"`
	}{"2.0", e.id.Raw(), wireError{e.code, e.message}})
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.w.Write(append(b, '\n'))
	return err
}
