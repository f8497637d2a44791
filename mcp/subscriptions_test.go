package mcp_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/graph"
	graphembedded "github.com/cairnkg/cairn/graph/embedded"
	graphpostgres "github.com/cairnkg/cairn/graph/postgres"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/mcp"
)

// inbox holds the resource notifications a client received, in order:
// "updated <uri>" and "list_changed".
type inbox chan string

// connectInbox connects a client as p whose resource notifications land in
// the returned inbox. version is the protocol version it asks for: the
// SDK's latest (empty) subscribes with SEP-2575's subscriptions/listen,
// and does not report a refused subscription; 2025-11-25 and earlier
// with resources/subscribe, as the hosts of today do.
func connectInbox(t *testing.T, s *mcp.Server, p consent.Principal, version string) (*mcpsdk.ClientSession, inbox) {
	t.Helper()
	return inboxClient(t, serveInMemory(t, s, p), version)
}

// inboxClient connects a client over ct (see connectInbox).
func inboxClient(t *testing.T, ct mcpsdk.Transport, version string) (*mcpsdk.ClientSession, inbox) {
	t.Helper()
	in := make(inbox, 256)
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, &mcpsdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcpsdk.ResourceUpdatedNotificationRequest) {
			in <- "updated " + r.Params.URI
		},
		ResourceListChangedHandler: func(context.Context, *mcpsdk.ResourceListChangedRequest) { in <- "list_changed" },
	})
	// Under SEP-2575 a subscription is a listen that the server
	// acknowledges once it holds it: "subscribed <uri>".
	client.AddReceivingMiddleware(func(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
		return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
			if p, ok := req.GetParams().(*mcpsdk.SubscriptionsAcknowledgedParams); ok {
				for _, u := range p.Notifications.ResourceSubscriptions {
					in <- "subscribed " + u
				}
			}
			return next(ctx, method, req)
		}
	})
	cs, err := client.Connect(t.Context(), ct, &mcpsdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, in
}

// until returns what arrived before want, failing the test if want does
// not arrive. The bound only ends a broken test; nothing is timed.
func (in inbox) until(t *testing.T, want string) []string {
	t.Helper()
	var before []string
	for {
		select {
		case got := <-in:
			if got == want {
				return before
			}
			before = append(before, got)
		case <-time.After(30 * time.Second):
			t.Fatalf("%q never arrived; got %q", want, before)
		}
	}
}

// none fails the test if any of got mentions one of words.
func none(t *testing.T, what string, got []string, words ...string) {
	t.Helper()
	for _, g := range got {
		for _, w := range words {
			if strings.Contains(g, w) {
				t.Errorf("%s: got %q", what, g)
			}
		}
	}
}

// subscribe subscribes cs, whose inbox is in, to uris, and waits until
// the server holds each subscription (at once, but for SEP-2575's listen).
func subscribe(t *testing.T, cs *mcpsdk.ClientSession, in inbox, uris ...string) {
	t.Helper()
	for _, u := range uris {
		if err := cs.Subscribe(t.Context(), &mcpsdk.SubscribeParams{URI: u}); err != nil {
			t.Fatalf("subscribe %s: %v", u, err)
		}
		if cs.InitializeResult().ProtocolVersion >= "2026-07-28" {
			in.until(t, "subscribed "+u)
		}
	}
}

// TestSubscriptions subscribes the owner and an agent that may read
// companies and people (not invoices) and checks, on every backend, who is
// told what: updates after store, correct and relationships created and
// deleted, nothing about
// what a subscriber may not read (nor may it subscribe to it), nothing
// more once a rule denies it, nothing after unsubscribing, list_changed on
// a new type, and changes that another process on the same database made.
func TestSubscriptions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storeBackend) {
		e := newEnvWith(t, envOptions{backend: &b, subscriptionPoll: 10 * time.Millisecond})
		ids := storeIDs(t, e, companyArgs("Acme"), companyArgs("Beta"),
			map[string]any{"entity_type": "person", "name": "Ada Lovelace", "email": "ada@example.com"},
			map[string]any{"entity_type": "invoice", "invoice_number": "INV-1", "vendor_name": "Acme", "issue_date": "2025-01-15", "amount": 10.5})
		acme, beta, ada, invoice := ids[0], ids[1], ids[2], ids[3]
		agent, _ := e.agent(t, e.owner.UserID, "narrow", [3]string{"read", "entities/company", "allow"},
			[3]string{"read", "entities/person", "allow"}, [3]string{"read", "entities/pet", "allow"}, [3]string{"read", "graph", "allow"})

		owner, ownerIn := connectInbox(t, e.server, e.owner, "")
		narrow, narrowIn := connectInbox(t, e.server, agent, "2025-11-25")
		init := owner.InitializeResult().Capabilities.Resources
		if init == nil || !init.Subscribe || !init.ListChanged {
			t.Fatalf("resources capability %+v, want subscribe and listChanged", init)
		}
		subscribe(t, owner, ownerIn, "cairn://entity/"+acme, "cairn://entities/company", "cairn://entity/"+acme+"/relationships",
			"cairn://entity/"+invoice, "cairn://timeline/2025", "cairn://sources")
		subscribe(t, narrow, narrowIn, "neotoma://entity/"+acme, "cairn://entity/"+acme+"/relationships", "cairn://entity/"+ada)

		// What the agent may not read cannot be subscribed to, and says no
		// more than a missing entity does.
		missing := "cairn://entity/ent_00000000000000000000000000"
		errText := func(uri string) string {
			err := narrow.Subscribe(t.Context(), &mcpsdk.SubscribeParams{URI: uri})
			if err == nil {
				return "no error"
			}
			return strings.ReplaceAll(err.Error(), uri, "URI")
		}
		want := errText(missing)
		if !strings.Contains(strings.ToLower(want), "not found") {
			t.Fatalf("subscribing to a missing entity: %q", want)
		}
		for _, uri := range []string{"cairn://entity/" + invoice, "cairn://entities/invoice", "https://example.com/x"} {
			if got := errText(uri); got != want {
				t.Errorf("the agent subscribes to %s: %q, want %q", uri, got, want)
			}
		}

		// A correction tells both, each under the URI it subscribed with.
		e.mustCall(t, "correct", map[string]any{"entity_id": acme, "entity_type": "company", "field": "domain", "value": "acme.example"})
		ownerIn.until(t, "updated cairn://entity/"+acme)
		ownerIn.until(t, "updated cairn://entities/company")
		ownerIn.until(t, "updated cairn://sources")
		narrowIn.until(t, "updated neotoma://entity/"+acme)

		// The invoice, its timeline and an edge to it reach the owner only.
		e.mustCall(t, "correct", map[string]any{"entity_id": invoice, "entity_type": "invoice", "field": "amount", "value": 11})
		ownerIn.until(t, "updated cairn://entity/"+invoice)
		e.mustCall(t, "create_relationship", rel("REFERS_TO", invoice, acme))
		ownerIn.until(t, "updated cairn://entity/"+acme+"/relationships")
		e.mustCall(t, "correct", map[string]any{"entity_id": ada, "entity_type": "person", "field": "email", "value": "ada@lovelace.example"})
		none(t, "the agent, before Ada's correction", narrowIn.until(t, "updated cairn://entity/"+ada), invoice, "relationships", "sources")
		// An edge between two companies reaches it.
		e.mustCall(t, "create_relationship", rel("PART_OF", beta, acme))
		narrowIn.until(t, "updated cairn://entity/"+acme+"/relationships")
		// And so does its deletion.
		e.mustCall(t, "delete_relationship", rel("PART_OF", beta, acme))
		narrowIn.until(t, "updated cairn://entity/"+acme+"/relationships")

		// A new type is a list change, for those who may read it.
		e.mustCall(t, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "project", "name": "Apollo"}}})
		ownerIn.until(t, "list_changed")
		e.mustCall(t, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "pet", "name": "Rex"}}})
		none(t, "the agent, before the pets", narrowIn.until(t, "list_changed"), "updated")
		ownerIn.until(t, "list_changed")

		// A rule that denies companies ends the agent's notifications of
		// Acme while its subscription lasts.
		if _, err := e.control.SetRule(t.Context(), consent.Rule{UserID: agent.UserID, AgentID: agent.AgentID, Action: consent.Read, Pattern: "entities/company", Effect: consent.Deny}); err != nil {
			t.Fatal(err)
		}
		e.mustCall(t, "correct", map[string]any{"entity_id": acme, "entity_type": "company", "field": "domain", "value": "acme.test"})
		ownerIn.until(t, "updated cairn://entity/"+acme)
		e.mustCall(t, "correct", map[string]any{"entity_id": ada, "entity_type": "person", "field": "email", "value": "ada@example.org"})
		none(t, "the agent denied companies", narrowIn.until(t, "updated cairn://entity/"+ada), acme)

		// Unsubscribed, the agent hears of the people but not of Ada.
		// (Under SEP-2575 unsubscribing is cancelling a listen, which the
		// server learns of later.)
		if err := narrow.Unsubscribe(t.Context(), &mcpsdk.UnsubscribeParams{URI: "cairn://entity/" + ada}); err != nil {
			t.Fatal(err)
		}
		subscribe(t, narrow, narrowIn, "cairn://entities/person")
		e.mustCall(t, "correct", map[string]any{"entity_id": ada, "entity_type": "person", "field": "email", "value": "ada@example.net"})
		none(t, "the agent, unsubscribed from Ada", narrowIn.until(t, "updated cairn://entities/person"), ada)

		// Another process on the same database: its writes reach the
		// subscribers through the change log.
		other := otherProcess(t, e)
		if other == nil {
			return
		}
		if _, merr := other.Invoke(t.Context(), e.owner, "correct", []byte(`{"entity_id":"`+beta+`","entity_type":"company","field":"domain","value":"beta.example"}`)); merr != nil {
			t.Fatal(merr)
		}
		if got := ownerIn.until(t, "updated cairn://entities/company"); slices.Contains(got, "updated cairn://entity/"+beta) {
			t.Errorf("the owner is told of Beta, not subscribed to it: %q", got)
		}
	})
}

// otherProcess returns a server on its own graph store over e's database,
// as another process would have; nil (after a log line) when the backend
// keeps no change log that other processes could read.
func otherProcess(t *testing.T, e *env) *mcp.Server {
	t.Helper()
	if !e.know.HasChangeLog() {
		t.Log("this graph keeps no change log: other processes' changes are not told")
		return nil
	}
	var d graph.Driver
	switch {
	case e.stores.sqlite != nil:
		d = graphembedded.New(e.stores.sqlite)
	case e.stores.pg != nil:
		d = graphpostgres.New(e.stores.pg.Pool)
	default:
		t.Fatal("no database to share")
	}
	k := knowledge.NewService(graph.NewStore(d), schema.NewRegistry(), knowledge.Options{})
	srv, err := mcp.NewServer(mcp.Deps{Knowledge: k}, mcp.Options{Version: "other"})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestSubscriptionsOverHTTP: over Streamable HTTP, a client that
// initializes (2025-11-25) and one that speaks SEP-2575 (the SDK's latest)
// are both told of a correction of the entity they subscribed to, and of
// a new type.
func TestSubscriptionsOverHTTP(t *testing.T) {
	e, srv := newHTTPWith(t, envOptions{}, mcp.HTTPOptions{})
	acme := storeIDs(t, e, companyArgs("Acme"))[0]
	uri := "cairn://entity/" + acme
	var inboxes []inbox
	for _, version := range []string{"2025-11-25", ""} {
		cs, in := inboxClient(t, &mcpsdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{e.key}}}, version)
		subscribe(t, cs, in, uri)
		inboxes = append(inboxes, in)
	}
	e.mustCall(t, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "project", "name": "Apollo"}}})
	for _, in := range inboxes {
		in.until(t, "list_changed")
	}
	e.mustCall(t, "correct", map[string]any{"entity_id": acme, "entity_type": "company", "field": "domain", "value": "acme.example"})
	for _, in := range inboxes {
		in.until(t, "updated "+uri)
	}
}
