package mcp_test

import (
	"encoding/json"
	"testing"

	"github.com/cairnkg/cairn/mcp"
)

// FuzzToolArguments sends every tool arbitrary argument bytes, as an agent
// with partial consent. Whatever the bytes, the call must answer with JSON
// output or a coded error, never panic and never INTERNAL_ERROR. Seeds are
// each tool's consent-matrix arguments; run briefly with
// go test ./mcp -run XXX -fuzz FuzzToolArguments -fuzztime 20s.
func FuzzToolArguments(f *testing.F) {
	tools := mcp.AllTools(mcp.Deps{})
	for i, tool := range tools {
		if mc, ok := consentMatrix[tool.Name()]; ok {
			b, _ := json.Marshal(mc.args(fixture{company: "ent_a", company2: "ent_b", person: "ent_c", invoice: "ent_d", values: []string{"Acme"}}))
			f.Add(uint8(i), b)
		}
		f.Add(uint8(i), []byte(`{"max_response_bytes": 600, "cursor": "eyJ0IjoieCJ9"}`))
		f.Add(uint8(i), []byte(`null`))
	}
	e := newEnvWith(f, envOptions{contextStores: true})
	seedUser(f, e, e.owner, "F")
	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		tool := e.server.Tools()[int(which)%len(e.server.Tools())]
		p := e.owner
		if which%2 == 1 {
			// Half the calls as an agent with partial consent.
			p.Owner, p.AgentName, p.AgentID = false, "fuzz", "agt_fuzz"
		}
		out, merr := e.server.Invoke(t.Context(), p, tool.Name(), args)
		if merr != nil {
			if merr.Body.Code == mcp.CodeInternal || merr.Body.Code == "" {
				t.Fatalf("%s(%q): %s %s", tool.Name(), args, merr.Body.Code, merr.Body.Message)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("%s(%q): invalid JSON output", tool.Name(), args)
		}
	})
}
