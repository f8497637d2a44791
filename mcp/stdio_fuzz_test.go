package mcp_test

import (
	"encoding/json"
	"testing"

	"github.com/cairnkg/cairn/mcp"
)

// FuzzStdioFrames sends arbitrary bytes as a line of a stdio session (under
// a protocol version with batches or one without), then a ping. Whatever the
// bytes, the ping must be answered: no line may end the session, and every
// frame the server writes must be JSON. Run briefly with
// go test ./mcp -run XXX -fuzz FuzzStdioFrames -fuzztime 20s.
func FuzzStdioFrames(f *testing.F) {
	for _, bf := range badFrames {
		f.Add(false, []byte(bf.line))
		f.Add(true, []byte(bf.line))
	}
	notif := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	for _, seed := range []string{
		ping(1),
		"[" + ping(1) + "," + ping(2) + "]",
		"[" + ping(1) + "," + notif + "," + notif + "]",
		"[" + ping(1) + "," + ping(1) + "]",
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`[{"jsonrpc":"2.0","id":9,"result":{}}]`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}` + "\r\n" + "[",
		`{"jsonrpc":"2.0","id":1,"method":"ping"} {"jsonrpc":"2.0","id":2,"method":"ping"}`,
		"\x00\n\t \r",
	} {
		f.Add(true, []byte(seed))
	}
	e := newEnv(f)
	srv := e.server.MCPServer(mcp.FixedPrincipal(e.owner))
	const pingID = "ping-after-the-fuzzed-line"
	f.Fuzz(func(t *testing.T, batches bool, line []byte) {
		s := startStdio(t, srv)
		version := "2025-06-18"
		if batches {
			version = "2025-03-26"
		}
		s.initialize(version)
		s.send(string(line))
		s.send(ping(pingID))
		for {
			frame := s.next()
			var a answer
			if json.Unmarshal(frame, &a) == nil && a.ID == pingID {
				if a.Error != nil {
					t.Fatalf("ping after %q: %+v", line, a.Error)
				}
				return
			}
		}
	})
}
