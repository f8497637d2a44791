package mcp_test

import (
	"context"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/mcp"
)

// TestConsentDenialsAreLogged: a call that asks for log messages at
// warning (the request's log level, as the protocol carries it since
// 2026-07-28) and that consent refuses is followed by a
// notifications/message from cairn.consent naming the tool and the code
// the answer holds; a call that asks for errors only, or for nothing, gets
// none, and neither does an allowed call.
func TestConsentDenialsAreLogged(t *testing.T) {
	e := newEnv(t)
	p, _ := e.agent(t, e.owner.UserID, "narrow", [3]string{"read", "entities/person", "allow"})
	var mu sync.Mutex
	var got []*mcpsdk.LoggingMessageParams
	ct, st := mcpsdk.NewInMemoryTransports()
	ss, err := e.server.MCPServer(mcp.FixedPrincipal(p)).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, &mcpsdk.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcpsdk.LoggingMessageRequest) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, r.Params)
		},
	})
	cs, err := client.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	messages := func(want int) []*mcpsdk.LoggingMessageParams {
		// Notifications travel beside the answer: give them a moment.
		for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			mu.Lock()
			n := len(got)
			mu.Unlock()
			if n >= want || time.Now().After(deadline) {
				break
			}
		}
		time.Sleep(50 * time.Millisecond) // and for any that should not come
		mu.Lock()
		defer mu.Unlock()
		return append([]*mcpsdk.LoggingMessageParams(nil), got...)
	}
	call := func(tool string, args map[string]any, level mcpsdk.LoggingLevel) *mcpsdk.CallToolResult {
		params := &mcpsdk.CallToolParams{Name: tool, Arguments: args}
		if level != "" {
			params.Meta = mcpsdk.Meta{mcpsdk.MetaKeyLogLevel: level}
		}
		res, err := cs.CallTool(t.Context(), params)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	store := map[string]any{"entities": []any{map[string]any{"entity_type": "company", "name": "Acme"}}}
	for _, level := range []mcpsdk.LoggingLevel{"error", ""} {
		if res := call("store", store, level); !res.IsError || envelopeOf(t, res).Error.Code != mcp.CodeConsentDenied {
			t.Fatalf("level %q: store of a company = %+v; want CONSENT_DENIED", level, res)
		}
	}
	if msgs := messages(0); len(msgs) != 0 {
		t.Errorf("calls asking for errors or nothing got log messages %+v", msgs)
	}
	call("retrieve_entities", map[string]any{"entity_type": "person"}, "warning")
	if msgs := messages(0); len(msgs) != 0 {
		t.Errorf("an allowed call got log messages %+v", msgs)
	}
	call("store", store, "warning")
	msgs := messages(1)
	if len(msgs) != 1 || msgs[0].Logger != "cairn.consent" || msgs[0].Level != "warning" {
		t.Fatalf("log messages %+v, want one warning from cairn.consent", msgs)
	}
	data, _ := msgs[0].Data.(map[string]any)
	if data["tool"] != "store" || data["code"] != mcp.CodeConsentDenied || data["trace_id"] == "" {
		t.Errorf("log data %v", data)
	}
}

// TestJobFailuresAreLogged: a failed job is told, as a notifications/message
// from cairn.jobs at level error, to the sessions of its user whose client
// set a log level of error or below and whose agent may read sources; not
// to a session that set no level, nor to one of an agent denied sources,
// nor to another user's.
func TestJobFailuresAreLogged(t *testing.T) {
	e := newEnv(t)
	narrow, _ := e.agent(t, e.owner.UserID, "narrow", [3]string{"read", "entities/person", "allow"})
	other, err := e.control.CreateUser(t.Context(), "gus")
	if err != nil {
		t.Fatal(err)
	}
	otherP, _ := e.agent(t, other.ID, "helper", [3]string{"read", "*", "allow"})
	type session struct {
		name  string
		p     consent.Principal
		level mcpsdk.LoggingLevel
		got   chan *mcpsdk.LoggingMessageParams
	}
	sessions := []*session{
		{"owner at error", e.owner, "error", nil},
		{"owner at no level", e.owner, "", nil},
		{"agent denied sources", narrow, "debug", nil},
		{"another user", otherP, "debug", nil},
	}
	for _, s := range sessions {
		s.got = make(chan *mcpsdk.LoggingMessageParams, 4)
		ct, st := mcpsdk.NewInMemoryTransports()
		ss, err := e.server.MCPServer(mcp.FixedPrincipal(s.p)).Connect(t.Context(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
		client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, &mcpsdk.ClientOptions{
			LoggingMessageHandler: func(_ context.Context, r *mcpsdk.LoggingMessageRequest) { s.got <- r.Params },
		})
		cs, err := client.Connect(t.Context(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		if s.level != "" {
			if err := cs.SetLoggingLevel(t.Context(), &mcpsdk.SetLoggingLevelParams{Level: s.level}); err != nil {
				t.Fatal(err)
			}
		}
		// A first request registers the session with its principal.
		if _, err := cs.ListTools(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
	}
	e.server.JobFailed(t.Context(), files.Job{ID: "job_1", UserID: e.owner.UserID, FileID: "src_1", Status: files.JobFailed,
		ErrorCode: "FILE_TOO_COMPLEX", ErrorMessage: "the file took too long to read"})
	select {
	case m := <-sessions[0].got:
		data, _ := m.Data.(map[string]any)
		if m.Level != "error" || m.Logger != "cairn.jobs" || data["job_id"] != "job_1" || data["code"] != "FILE_TOO_COMPLEX" {
			t.Errorf("the owner was told %+v", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the owner's session that set level error was not told of the failed job")
	}
	time.Sleep(100 * time.Millisecond)
	for _, s := range sessions[1:] {
		select {
		case m := <-s.got:
			t.Errorf("%s was told %+v", s.name, m)
		default:
		}
	}
}
