package mcp_test

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/mcp"
)

// stdioSession is a server session over mcp.StdioTransport, driven line by
// line as a client on the other end of stdin and stdout would.
type stdioSession struct {
	t      testing.TB
	in     *io.PipeWriter
	frames chan []byte
}

// startStdio connects srv over pipes through a StdioTransport with a small
// line limit (testLineLimit bytes), so that long lines stay cheap.
func startStdio(t testing.TB, srv *mcpsdk.Server) *stdioSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss, err := srv.Connect(t.Context(), &mcp.StdioTransport{Reader: inR, Writer: outW, MaxLineBytes: testLineLimit}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &stdioSession{t: t, in: inW, frames: make(chan []byte, 1000)}
	go func() {
		defer close(s.frames)
		dec := json.NewDecoder(outR)
		for {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				if err != io.EOF {
					s.frames <- []byte("not JSON: " + err.Error())
					_, _ = io.Copy(io.Discard, outR) // keep the server unblocked
				}
				return
			}
			s.frames <- raw
		}
	}()
	t.Cleanup(func() {
		inW.Close() // EOF on stdin ends the session
		ended := make(chan struct{})
		go func() { _ = ss.Wait(); close(ended) }()
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
			t.Error("the session did not end within 5s of stdin closing")
		}
		outW.Close()
	})
	return s
}

const testLineLimit = 32 << 10

// send writes one line. A server that stops reading fails the test rather
// than hanging it.
func (s *stdioSession) send(line string) {
	s.t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := io.WriteString(s.in, line+"\n")
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			s.t.Fatalf("write %.80q: %v", line, err)
		}
	case <-time.After(5 * time.Second):
		s.t.Fatalf("write %.80q: the server stopped reading", line)
	}
}

// next is the next frame the server writes.
func (s *stdioSession) next() []byte {
	s.t.Helper()
	select {
	case f, ok := <-s.frames:
		if !ok {
			s.t.Fatal("the server closed stdout: the session ended")
		}
		return f
	case <-time.After(5 * time.Second):
		s.t.Fatal("no answer within 5s")
	}
	return nil
}

// answer is one JSON-RPC response as written.
type answer struct {
	ID     any             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (s *stdioSession) nextAnswer() answer {
	s.t.Helper()
	f := s.next()
	var a answer
	if err := json.Unmarshal(f, &a); err != nil {
		s.t.Fatalf("frame %s is not one response: %v", f, err)
	}
	return a
}

// initialize opens the session at a protocol version.
func (s *stdioSession) initialize(version string) {
	s.t.Helper()
	s.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + version +
		`","capabilities":{},"clientInfo":{"name":"stdio-test","version":"1"}}}`)
	if a := s.nextAnswer(); a.ID != "init" || a.Error != nil {
		s.t.Fatalf("initialize: %+v", a)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// alive checks that a request sent now is answered, with id.
func (s *stdioSession) alive(method string, id int) {
	s.t.Helper()
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, id, method))
	a := s.nextAnswer()
	if a.ID != float64(id) || a.Error != nil || a.Result == nil {
		s.t.Fatalf("%s after the bad frame: %+v", method, a)
	}
}

func ping(id any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "ping"})
	return string(b)
}

// badFrames are lines the SDK's own stdio reader ends the session on (or
// would answer wrongly), with the error each must get: code and id.
var badFrames = []struct {
	name, line string
	code       int64
	id         any
}{
	{"not JSON", "hello", -32700, nil},
	{"JSON then garbage", ping(1) + " x", -32700, nil},
	{"invalid UTF-8", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + "\xff\xfe" + `"}}`, -32700, nil},
	{"nesting 10000 deep", strings.Repeat("[", 10000) + strings.Repeat("]", 10000), -32700, nil},
	{"nesting past the limit in a request", `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":` +
		strings.Repeat("[", mcp.DefaultMaxStdioDepth) + strings.Repeat("]", mcp.DefaultMaxStdioDepth) + `}}`, -32700, nil},
	{"line over the limit", `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"` + strings.Repeat("x", testLineLimit) + `"}}`, -32600, nil},
	{"a number", "42", -32600, nil},
	{"a string", `"ping"`, -32600, nil},
	{"null", "null", -32600, nil},
	{"an object that is no message", `{"foo":1}`, -32600, nil},
	{"wrong version tag, id echoed", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, -32600, float64(7)},
	{"string id echoed", `{"jsonrpc":"2.0","id":"s","method":5}`, -32600, "s"},
	{"id of a wrong type", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, nil},
	{"response without id", `{"jsonrpc":"2.0","result":{}}`, -32600, nil},
	{"empty batch", "[]", -32600, nil},
	{"batch under 2025-06-18", "[" + ping(4) + "]", -32600, nil},
}

// TestStdioSurvivesBadFrames sends each bad frame to one session and checks
// its error and that the session still answers afterwards.
func TestStdioSurvivesBadFrames(t *testing.T) {
	e := newEnv(t)
	s := startStdio(t, e.server.MCPServer(mcp.FixedPrincipal(e.owner)))
	s.initialize("2025-06-18")
	for i, bf := range badFrames {
		ok := t.Run(bf.name, func(t *testing.T) {
			s.t = t
			s.send(bf.line)
			a := s.nextAnswer()
			if a.Error == nil || a.Error.Code != bf.code || a.ID != bf.id {
				t.Fatalf("answer %+v (error %+v), want code %d and id %v", a, a.Error, bf.code, bf.id)
			}
			method := "ping"
			if i%2 == 0 {
				method = "tools/list"
			}
			s.alive(method, 100+i)
		})
		if !ok {
			t.FailNow() // the frames after it would meet a dead session
		}
	}
}

// TestStdioLines: blank lines are skipped, whitespace around a message and
// CRLF endings are accepted (the SDK's reader refuses trailing spaces), and
// a line of exactly the limit is served.
func TestStdioLines(t *testing.T) {
	e := newEnv(t)
	s := startStdio(t, e.server.MCPServer(mcp.FixedPrincipal(e.owner)))
	s.initialize("2025-06-18")
	s.send("")
	s.send(" \t ")
	s.send("  " + ping(1) + " \t\r")
	if a := s.nextAnswer(); a.ID != float64(1) || a.Error != nil {
		t.Fatalf("padded ping: %+v", a)
	}
	head, tail := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"pad":"`, `"}}}`
	s.send(head + strings.Repeat("x", testLineLimit-len(head)-len(tail)) + tail)
	if a := s.nextAnswer(); a.ID != float64(2) || a.Error != nil {
		t.Fatalf("ping of %d bytes: %+v", testLineLimit, a)
	}
	s.alive("ping", 3)
}

// TestStdioBatches runs batches under 2025-03-26, where JSON-RPC batches
// are part of the protocol.
func TestStdioBatches(t *testing.T) {
	e := newEnv(t)
	s := startStdio(t, e.server.MCPServer(mcp.FixedPrincipal(e.owner)))
	s.send("[" + ping(1) + "]")
	if a := s.nextAnswer(); a.Error == nil || a.Error.Code != -32600 {
		t.Fatalf("batch before initialize: %+v", a)
	}
	s.initialize("2025-03-26")

	s.send("[" + ping(1) + `,{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`)
	var answers []answer
	if err := json.Unmarshal(s.next(), &answers); err != nil {
		t.Fatalf("batch answer is not an array: %v", err)
	}
	got := map[any]bool{}
	for _, a := range answers {
		if a.Error != nil {
			t.Errorf("answer %v: %+v", a.ID, a.Error)
		}
		got[a.ID] = true
	}
	if len(answers) != 2 || !got[float64(1)] || !got[float64(2)] {
		t.Fatalf("batch answers %+v, want ids 1 and 2", answers)
	}

	// A notification in a batch: the SDK alone never answers the batch and
	// ends the session at two notifications in one batch.
	notif := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	s.send("[" + ping(3) + "," + notif + "]")
	if err := json.Unmarshal(s.next(), &answers); err != nil || len(answers) != 1 || answers[0].ID != float64(3) {
		t.Fatalf("batch with a notification: %+v %v", answers, err)
	}
	s.send("[" + notif + "," + notif + "]")
	s.alive("ping", 4)

	for _, bad := range []struct{ name, line string }{
		{"duplicate ids", "[" + ping(5) + "," + ping(5) + "]"},
		{"an element that is no message", "[" + ping(6) + ",1]"},
		{"empty", "[]"},
	} {
		s.send(bad.line)
		if a := s.nextAnswer(); a.Error == nil || a.Error.Code != -32600 || a.ID != nil {
			t.Fatalf("%s: %+v", bad.name, a)
		}
		s.alive("ping", 7)
	}
}
