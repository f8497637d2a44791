package mcp_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/mcp"
)

// env is a Cairn wired on a fresh store (embedded unless envOptions.backend
// says otherwise), with its owner, its consent policy, audit log and rate
// limiter (on a clock the test moves).
type env struct {
	server  *mcp.Server
	control *controlplane.Store
	audit   *consent.AuditLog
	clock   *fakeClock
	owner   consent.Principal
	key     string
	files   *files.Service
	know    *knowledge.Service
	stores  backendStores
}

// envOptions vary newEnvWith.
type envOptions struct {
	limits map[consent.RateClass]int // nil: the defaults
	// contextStores wires the profile and contradiction stores (newEnv
	// has none, as a server without them).
	contextStores bool
	// backend is the store (nil: the embedded one).
	backend *storeBackend
	// subscriptionPoll is mcp.Options.SubscriptionPoll.
	subscriptionPoll time.Duration
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvWith(t, envOptions{})
}

func newEnvWith(t testing.TB, opts envOptions) *env {
	t.Helper()
	b := opts.backend
	if b == nil {
		b = &embeddedBackend
	}
	st := b.open(t)
	g, memories, control := st.graph, st.memories, st.control
	key, err := consent.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := control.EnsureOwner(t.Context(), "owner", consent.HashKey(key), consent.DisplayPrefix(key)); err != nil {
		t.Fatal(err)
	}
	owner, err := control.OwnerPrincipal(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2026, 11, 23, 12, 0, 30, 0, time.UTC)}
	kopts := knowledge.Options{Memories: memories, SourceTypes: files.SourceTypes(control), GraphForget: control}
	if opts.contextStores {
		kopts.Profiles, kopts.Contradictions = control, st.contradictions
	}
	audit := consent.NewAuditLog(control, consent.AuditLogOptions{})
	t.Cleanup(func() { audit.Close() })
	know := knowledge.NewService(g, schema.NewRegistry(), kopts)
	limiter := consent.NewLimiter(control, consent.LimiterOptions{Limits: opts.limits, Now: clock.Now})
	fs := newFiles(t, control, know, consent.NewPolicy(control), limiter)
	srv, err := mcp.NewServer(mcp.Deps{
		Knowledge: know,
		Files:     fs,
		Policy:    consent.NewPolicy(control),
		Limiter:   limiter,
		Audit:     audit,
		Consent:   control,
		// The deadline has its own test (TestCallTimeout); here a call
		// that is slow under -race on a loaded machine must not fail a
		// test about something else.
	}, mcp.Options{Version: "test", CallTimeout: 10 * time.Minute, Toolsets: mcp.AllToolsets, SubscriptionPoll: opts.subscriptionPoll})
	if err != nil {
		t.Fatal(err)
	}
	return &env{server: srv, control: control, audit: audit, clock: clock, owner: owner, key: key, files: fs, know: know, stores: st}
}

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// agent creates an agent of a user with the given rules ("read entities/*
// allow" as {action, pattern, effect}) and returns its principal and key.
func (e *env) agent(t testing.TB, userID, name string, rules ...[3]string) (consent.Principal, string) {
	t.Helper()
	ctx := t.Context()
	a, err := e.control.CreateAgent(ctx, userID, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		if _, err := e.control.SetRule(ctx, consent.Rule{UserID: userID, AgentID: a.ID, Action: consent.Action(r[0]), Pattern: r[1], Effect: consent.Effect(r[2])}); err != nil {
			t.Fatal(err)
		}
	}
	key, _, err := e.control.CreateKey(ctx, userID, a.ID, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	_, p, err := e.control.KeyByHash(ctx, consent.HashKey(key))
	if err != nil {
		t.Fatal(err)
	}
	return p, key
}

// callAs invokes a tool as a principal.
func (e *env) callAs(t testing.TB, p consent.Principal, tool string, args any) (map[string]any, *mcp.Error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	out, merr := e.server.Invoke(t.Context(), p, tool, raw)
	if merr != nil {
		return nil, merr
	}
	checkOutput(t, e.server, tool, out)
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%s returned invalid JSON: %v", tool, err)
	}
	return m, nil
}

// call invokes a tool through the dispatch path every transport uses.
func (e *env) call(t testing.TB, tool string, args any) (map[string]any, *mcp.Error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	out, merr := e.server.Invoke(t.Context(), e.owner, tool, raw)
	if merr != nil {
		return nil, merr
	}
	checkOutput(t, e.server, tool, out)
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%s returned invalid JSON: %v", tool, err)
	}
	return m, nil
}

// mustCall is call that fails the test on a tool error.
func (e *env) mustCall(t testing.TB, tool string, args any) map[string]any {
	t.Helper()
	out, merr := e.call(t, tool, args)
	if merr != nil {
		t.Fatalf("%s: %v", tool, merr)
	}
	return out
}

// connect returns an MCP client session on the server over in-memory
// transports, as the owner.
func (e *env) connect(t testing.TB) *mcpsdk.ClientSession {
	t.Helper()
	return connectServer(t, e.server, e.owner)
}

// envelopeOf decodes the error envelope of a failed tool result.
func envelopeOf(t *testing.T, res *mcpsdk.CallToolResult) mcp.Envelope {
	t.Helper()
	if !res.IsError || len(res.Content) != 1 {
		t.Fatalf("result is not a tool error: %+v", res)
	}
	text, ok := res.Content[0].(*mcpsdk.TextContent)
	if !ok {
		t.Fatalf("error content is %T, want text", res.Content[0])
	}
	var env mcp.Envelope
	dec := json.NewDecoder(strings.NewReader(text.Text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("error text is not the envelope: %v\n%s", err, text.Text)
	}
	return env
}
