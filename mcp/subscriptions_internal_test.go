package mcp

import (
	"encoding/json"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// TestSubscriptionsEndWithTheirSession: unsubscribing forgets the URI, and
// a session that ends takes its subscriptions with it; the last one stops
// the watcher, so that an idle server reads nothing.
func TestSubscriptionsEndWithTheirSession(t *testing.T) {
	g := graph.NewStore(embedded.New(sqlitetest.Open(t)))
	s, err := NewServer(Deps{Knowledge: knowledge.NewService(g, schema.NewRegistry(), knowledge.Options{})}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := consent.Principal{UserID: "u", AgentName: "owner", Owner: true}
	out, e := s.Invoke(t.Context(), p, "store", json.RawMessage(`{"entities":[{"entity_type":"company","name":"Acme"}]}`))
	if e != nil {
		t.Fatal(e)
	}
	var stored struct {
		Entities []struct {
			EntityID string `json:"entity_id"`
		} `json:"entities"`
	}
	if err := json.Unmarshal(out, &stored); err != nil {
		t.Fatal(err)
	}
	uri := "cairn://entity/" + stored.Entities[0].EntityID

	ct, st := mcpsdk.NewInMemoryTransports()
	ss, err := s.MCPServer(FixedPrincipal(p)).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), ct, &mcpsdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	subscribed := func() (uris int, open bool, watching bool) {
		s.subs.mu.Lock()
		defer s.subs.mu.Unlock()
		sub, open := s.subs.sessions[ss]
		if open {
			uris = len(sub.uris)
		}
		return uris, open, s.subs.stop != nil
	}
	if err := cs.Subscribe(t.Context(), &mcpsdk.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if n, open, watching := subscribed(); n != 1 || !open || !watching {
		t.Fatalf("subscribed: %d URIs, open %v, watching %v", n, open, watching)
	}
	if err := cs.Unsubscribe(t.Context(), &mcpsdk.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := subscribed(); n != 0 {
		t.Fatalf("unsubscribed: %d URIs", n)
	}
	if err := cs.Subscribe(t.Context(), &mcpsdk.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	// The session ends when the server's side sees the client go.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		_, open, watching := subscribed()
		if !open && !watching {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the client closed: session open %v, watcher running %v", open, watching)
		}
	}
}
