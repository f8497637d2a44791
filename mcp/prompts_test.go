package mcp_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/mcp"
)

// connectAs is connect for a principal.
func (e *env) connectAs(t testing.TB, p consent.Principal) *mcpsdk.ClientSession {
	t.Helper()
	return connectServer(t, e.server, p)
}

// promptText gets a prompt and returns the text of its messages.
func promptText(t *testing.T, cs *mcpsdk.ClientSession, name string, args map[string]string) string {
	t.Helper()
	res, err := cs.GetPrompt(t.Context(), &mcpsdk.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("prompt %s %v: %v", name, args, err)
	}
	var b strings.Builder
	for _, m := range res.Messages {
		if m.Role != "user" {
			t.Errorf("prompt %s: a message of role %q", name, m.Role)
		}
		text, ok := m.Content.(*mcpsdk.TextContent)
		if !ok {
			t.Fatalf("prompt %s: content %T, want text", name, m.Content)
		}
		b.WriteString(text.Text)
	}
	return b.String()
}

func complete(t *testing.T, cs *mcpsdk.ClientSession, prompt, arg, value string) []string {
	t.Helper()
	res, err := cs.Complete(t.Context(), &mcpsdk.CompleteParams{
		Ref: &mcpsdk.CompleteReference{Type: "ref/prompt", Name: prompt}, Argument: mcpsdk.CompleteParamsArgument{Name: arg, Value: value}})
	if err != nil {
		t.Fatalf("complete %s.%s %q: %v", prompt, arg, value, err)
	}
	return res.Completion.Values
}

// TestPromptsFollowConsent lists and gets every prompt as the owner and as
// an agent that may read companies but not invoices nor the graph: the
// agent's prompts, and the completions of their arguments, show nothing of
// the invoice, which the owner's do, and what it asks about shows as a
// snapshot where the owner gets its neighbourhood.
func TestPromptsFollowConsent(t *testing.T) {
	e := newEnv(t)
	e.mustCall(t, "store", map[string]any{"entities": []any{
		map[string]any{"entity_type": "company", "name": "Acme Rockets", "domain": "acme.example"},
		map[string]any{"entity_type": "invoice", "invoice_number": "INV-991", "vendor_name": "Zephyr Clinic", "issue_date": "2026-01-15", "amount": 777.25},
	}})
	// It may read companies and the profile, not invoices nor the graph.
	agent, _ := e.agent(t, e.owner.UserID, "narrow", [3]string{"read", "entities/company", "allow"}, [3]string{"read", "profile", "allow"})
	owner, narrow := e.connect(t), e.connectAs(t, agent)

	// initialize advertises what is served: tools, prompts, resources
	// with subscriptions and list changes (subscriptions.go), and
	// completions; the tools and prompts never change.
	caps := narrow.InitializeResult().Capabilities
	if caps.Prompts == nil || caps.Completions == nil || caps.Tools == nil || caps.Resources == nil ||
		!caps.Resources.Subscribe || !caps.Resources.ListChanged || caps.Tools.ListChanged || caps.Prompts.ListChanged {
		t.Errorf("capabilities %+v, want tools, prompts, resources with subscriptions and list changes, and completions", caps)
	}

	listed, err := narrow.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range listed.Prompts {
		names = append(names, p.Name)
	}
	for _, want := range []string{mcp.PromptLoadContext, mcp.PromptAboutEntity, mcp.PromptSummarisePeriod} {
		if !slices.Contains(names, want) {
			t.Errorf("prompts/list = %v, want %s in it", names, want)
		}
	}

	if got := promptText(t, narrow, mcp.PromptAboutEntity, map[string]string{"entity": "Acme"}); !strings.Contains(got, "acme.example") || strings.Contains(got, "relationships") {
		t.Errorf("about Acme, as the agent that may not read the graph: %s", got)
	}
	if got := promptText(t, owner, mcp.PromptAboutEntity, map[string]string{"entity": "Acme"}); !strings.Contains(got, "acme.example") || !strings.Contains(got, "related_entities") {
		t.Errorf("about Acme, as the owner: %s", got)
	}
	if got := promptText(t, owner, mcp.PromptAboutEntity, map[string]string{"entity": "Zephyr"}); !strings.Contains(got, "INV-991") {
		t.Errorf("about Zephyr, as the owner: %s", got)
	}
	if got := promptText(t, narrow, mcp.PromptAboutEntity, map[string]string{"entity": "Zephyr"}); strings.Contains(got, "INV-991") || !strings.Contains(got, "knows nothing") {
		t.Errorf("about Zephyr, as the agent denied invoices: %s", got)
	}
	for _, name := range []string{mcp.PromptLoadContext, mcp.PromptSummarisePeriod} {
		args := map[string]string{"topic": "clinic"}
		if name == mcp.PromptSummarisePeriod {
			args = map[string]string{"period": "2026-01"}
		}
		if got := promptText(t, narrow, name, args); strings.Contains(got, "INV-991") || strings.Contains(got, "Zephyr") {
			t.Errorf("%s as the agent denied invoices shows the invoice: %s", name, got)
		}
		if got := promptText(t, owner, name, args); !strings.Contains(got, "INV-991") && !strings.Contains(got, "Zephyr") {
			t.Errorf("%s as the owner does not show the invoice: %s", name, got)
		}
	}

	if got := complete(t, narrow, mcp.PromptAboutEntity, "entity", "Ac"); !slices.Equal(got, []string{"Acme Rockets"}) {
		t.Errorf("completions of Ac as the agent = %v", got)
	}
	if got := complete(t, narrow, mcp.PromptAboutEntity, "entity", "Zeph"); len(got) != 0 {
		t.Errorf("completions of Zeph as the agent denied invoices = %v", got)
	}
	if got := complete(t, owner, mcp.PromptAboutEntity, "entity", "Zeph"); len(got) != 1 {
		t.Errorf("completions of Zeph as the owner = %v", got)
	}
	if got := complete(t, owner, mcp.PromptSummarisePeriod, "period", "2026"); !slices.Contains(got, "2026") || !slices.Contains(got, "2026-01") {
		t.Errorf("completions of the period 2026 as the owner = %v", got)
	}
	if got := complete(t, narrow, mcp.PromptSummarisePeriod, "period", "2026"); len(got) != 0 {
		t.Errorf("completions of the period 2026 as the agent denied invoices = %v (the invoice's date is its only event)", got)
	}

	// The resource templates' variables complete the same way, as the
	// templates list them.
	completeURI := func(cs *mcpsdk.ClientSession, uri, arg, value string) []string {
		t.Helper()
		res, err := cs.Complete(t.Context(), &mcpsdk.CompleteParams{
			Ref: &mcpsdk.CompleteReference{Type: "ref/resource", URI: uri}, Argument: mcpsdk.CompleteParamsArgument{Name: arg, Value: value}})
		if err != nil {
			t.Fatalf("complete %s %s %q: %v", uri, arg, value, err)
		}
		return res.Completion.Values
	}
	if got := completeURI(owner, "cairn://entities/{entity_type}{?offset}", "entity_type", "in"); !slices.Equal(got, []string{"invoice"}) {
		t.Errorf("entity types from in, as the owner = %v", got)
	}
	if got := completeURI(narrow, "neotoma://entities/{entity_type}{?offset}", "entity_type", ""); !slices.Equal(got, []string{"company"}) {
		t.Errorf("entity types as the agent denied invoices = %v", got)
	}
	// An agent that may read companies and not the profile (which a whole
	// context load needs) still completes and lists them.
	noProfileAgent, _ := e.agent(t, e.owner.UserID, "noprofile", [3]string{"read", "entities/company", "allow"})
	noProfile := e.connectAs(t, noProfileAgent)
	if got := completeURI(noProfile, "cairn://entities/{entity_type}{?offset}", "entity_type", ""); !slices.Equal(got, []string{"company"}) {
		t.Errorf("entity types as an agent without profile read = %v", got)
	}
	if res, err := noProfile.ListResources(t.Context(), nil); err != nil || len(res.Resources) != 1 || res.Resources[0].URI != "cairn://entities/company" {
		t.Errorf("resources/list as an agent without profile read = %+v, %v; want the companies alone", res, err)
	}
	if got := completeURI(owner, "cairn://entity/{entity_id}", "entity_id", "Zeph"); len(got) != 1 || !strings.HasPrefix(got[0], "ent_") {
		t.Errorf("entity ids of Zeph as the owner = %v", got)
	}
	if got := completeURI(narrow, "cairn://entity/{entity_id}/observations{?offset}", "entity_id", "Zeph"); len(got) != 0 {
		t.Errorf("entity ids of Zeph as the agent denied invoices = %v", got)
	}
	if got := completeURI(owner, "cairn://timeline/{period}{?offset}", "period", "2026-"); !slices.Equal(got, []string{"2026-01"}) {
		t.Errorf("periods from 2026- as the owner = %v", got)
	}
	if got := completeURI(narrow, "cairn://timeline/{period}{?offset}", "period", "2026"); len(got) != 0 {
		t.Errorf("periods as the agent denied invoices = %v", got)
	}

	// A period that is none is an error that says what a period is.
	_, err = owner.GetPrompt(t.Context(), &mcpsdk.GetPromptParams{Name: mcp.PromptSummarisePeriod, Arguments: map[string]string{"period": "last week"}})
	if err == nil || !strings.Contains(err.Error(), "YYYY") && !strings.Contains(err.Error(), "2026-03") {
		t.Errorf("period last week: %v", err)
	}
}

// TestPromptAndResourceErrorsAreInvalidParams: a prompt argument that is
// missing or malformed, an over-long completion value and an over-long
// resource id answer JSON-RPC's invalid params (-32602) with what is
// wrong, not a code of 0 that a host cannot tell from a crash.
func TestPromptAndResourceErrorsAreInvalidParams(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(t)
	long := strings.Repeat("y", 100_000)
	calls := map[string]func() error{
		"about_entity without entity": func() error {
			_, err := cs.GetPrompt(t.Context(), &mcpsdk.GetPromptParams{Name: mcp.PromptAboutEntity, Arguments: map[string]string{}})
			return err
		},
		"about_entity with 100,000 bytes": func() error {
			_, err := cs.GetPrompt(t.Context(), &mcpsdk.GetPromptParams{Name: mcp.PromptAboutEntity, Arguments: map[string]string{"entity": long}})
			return err
		},
		"summarise_period of last week": func() error {
			_, err := cs.GetPrompt(t.Context(), &mcpsdk.GetPromptParams{Name: mcp.PromptSummarisePeriod, Arguments: map[string]string{"period": "last week"}})
			return err
		},
		"a completion of 100,000 bytes": func() error {
			_, err := cs.Complete(t.Context(), &mcpsdk.CompleteParams{Ref: &mcpsdk.CompleteReference{Type: "ref/prompt", Name: mcp.PromptAboutEntity},
				Argument: mcpsdk.CompleteParamsArgument{Name: "entity", Value: long}})
			return err
		},
		"an entity id of 100,000 bytes": func() error {
			_, err := cs.ReadResource(t.Context(), &mcpsdk.ReadResourceParams{URI: "cairn://entity/" + long})
			return err
		},
	}
	for name, call := range calls {
		err := call()
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || rpc.Message == "" {
			t.Errorf("%s: %v (%T), want JSON-RPC invalid params saying what is wrong", name, err, err)
		}
	}
}

// BenchmarkCompletion times completion/complete over the in-memory
// transport, with 10,000 entities on each store backend (PostgreSQL and
// Neo4j when their tests' variables are set), each with a date
// (so the timeline has years): 9,900 of 20 types and 100 (1%) of a rare
// type. Entity names from a prompt, and the templates' entity types,
// entity ids (from names, and from the beginning of an id) and periods,
// as the owner; names and ids also as an agent that may read the rare type
// only (-narrow), whose completions must not cost a scan of what it may
// not read. Every name begins "Name 0" and ends "Smith": every entity
// matches those. It reports the median and 95th percentile of each (issue
// 38 asks for 20 ms at 10,000 entities).
func BenchmarkCompletion(b *testing.B) {
	for _, be := range storeBackends {
		b.Run(be.name, func(b *testing.B) { benchmarkCompletion(b, be) })
	}
}

func benchmarkCompletion(b *testing.B, be storeBackend) {
	// The agent's key is rate-limited as any is; the benchmark times the
	// answers, not the limiter's refusals.
	e := newEnvWith(b, envOptions{backend: &be, limits: map[consent.RateClass]int{consent.RateClassDefault: 1 << 30, consent.RateClassStore: 1 << 30}})
	for i := 0; i < 10_000; i += 100 {
		var ents []any
		for j := i; j < i+100; j++ {
			typ := fmt.Sprintf("kind_%02d", j%20)
			if j%100 == 0 {
				typ = "rare"
			}
			ents = append(ents, map[string]any{"entity_type": typ, "name": fmt.Sprintf("Name %05d Smith", j),
				"date": fmt.Sprintf("%04d-%02d-15", 2000+j%25, 1+j%12)})
		}
		e.mustCall(b, "store", map[string]any{"entities": ents})
	}
	cs := e.connect(b)
	agent, _ := e.agent(b, e.owner.UserID, "narrow", [3]string{"read", "entities/rare", "allow"})
	narrow := e.connectAs(b, agent)
	names := []string{"Name 0", "Smith", "Name 07"}
	cases := []struct {
		name string
		cs   *mcpsdk.ClientSession
		ref  *mcpsdk.CompleteReference
		arg  string
		vals []string
	}{
		{"prompt-entity", cs, &mcpsdk.CompleteReference{Type: "ref/prompt", Name: mcp.PromptAboutEntity}, "entity", names},
		{"resource-entity_type", cs, &mcpsdk.CompleteReference{Type: "ref/resource", URI: "cairn://entities/{entity_type}{?offset}"}, "entity_type", []string{"", "kind_1", "k"}},
		{"resource-entity_id", cs, &mcpsdk.CompleteReference{Type: "ref/resource", URI: "cairn://entity/{entity_id}"}, "entity_id", names},
		{"resource-entity_id-prefix", cs, &mcpsdk.CompleteReference{Type: "ref/resource", URI: "cairn://entity/{entity_id}"}, "entity_id", []string{"ent_", "ent_a", "ent_0"}},
		{"resource-period", cs, &mcpsdk.CompleteReference{Type: "ref/resource", URI: "cairn://timeline/{period}{?offset}"}, "period", []string{"", "20", "2024-"}},
		{"prompt-entity-narrow", narrow, &mcpsdk.CompleteReference{Type: "ref/prompt", Name: mcp.PromptAboutEntity}, "entity", names},
		{"resource-entity_id-narrow", narrow, &mcpsdk.CompleteReference{Type: "ref/resource", URI: "cairn://entity/{entity_id}"}, "entity_id", names},
		{"resource-entity_id-prefix-narrow", narrow, &mcpsdk.CompleteReference{Type: "ref/resource", URI: "cairn://entity/{entity_id}"}, "entity_id", []string{"ent_", "ent_a", "ent_0"}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var times []time.Duration
			i := 0
			for b.Loop() {
				start := time.Now()
				res, err := c.cs.Complete(b.Context(), &mcpsdk.CompleteParams{Ref: c.ref, Argument: mcpsdk.CompleteParamsArgument{Name: c.arg, Value: c.vals[i%len(c.vals)]}})
				times = append(times, time.Since(start))
				if err != nil || len(res.Completion.Values) == 0 {
					b.Fatalf("%q: %+v, %v", c.vals[i%len(c.vals)], res, err)
				}
				i++
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(times[len(times)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}

// TestCompletionRanking completes entity names and ids on every store
// backend: nothing of a type the caller may not read, even when that type
// holds every other match; no merged entity's id; at most ten values, with
// hasMore when there are others; and the ranking the completion keys give
// (every backend keeps them): names that begin with the value before
// names with a later word that does, case-insensitive in any script, then
// entities found only by the words of their snapshots; and ids from the
// beginning of an id.
func TestCompletionRanking(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storeBackend) {
		e := newEnvWith(t, envOptions{backend: &b})
		idOf := func(out map[string]any, i int) string {
			return out["entities"].([]any)[i].(map[string]any)["entity_id"].(string)
		}
		out := e.mustCall(t, "store", map[string]any{"entities": []any{
			map[string]any{"entity_type": "company", "name": "Rocket Acme Labs"},
			map[string]any{"entity_type": "company", "name": "ACME Rockets"},
			map[string]any{"entity_type": "company", "name": "Acme"},
			map[string]any{"entity_type": "company", "name": "Globex", "domain": "acme.example"},
			map[string]any{"entity_type": "person", "name": "Émile Zola"},
			map[string]any{"entity_type": "person", "name": "Åsa Berg-Émile"},
			map[string]any{"entity_type": "company", "name": "Acme Corporation"},
		}})
		acme, dup := idOf(out, 2), idOf(out, 6)
		e.mustCall(t, "merge_entities", map[string]any{"from_entity_id": dup, "to_entity_id": acme})
		// The merge may rename Acme after the entity merged into it.
		acmeName := e.mustCall(t, "retrieve_entity_snapshot", map[string]any{"entity_id": acme})["canonical_name"].(string)
		// Twelve invoices that all begin with Acme, which a caller who may
		// read companies only must not see, nor be slowed by.
		var invoices []any
		for i := range 12 {
			invoices = append(invoices, map[string]any{"entity_type": "invoice", "invoice_number": fmt.Sprintf("Acme %02d", i), "amount": i})
		}
		e.mustCall(t, "store", map[string]any{"entities": invoices})
		companies, _ := e.agent(t, e.owner.UserID, "companies", [3]string{"read", "entities/company", "allow"})
		owner, narrow := e.connect(t), e.connectAs(t, companies)
		// Every backend keeps completion keys: the order is the keys'.
		ranked := slices.Equal[[]string]

		if got := complete(t, narrow, mcp.PromptAboutEntity, "entity", "acme"); !ranked(got, []string{acmeName, "ACME Rockets", "Rocket Acme Labs", "Globex"}) {
			t.Errorf("acme as the company reader = %q, want the name that is acme, the one that begins with it, the one with a later word that does, the one whose domain has it", got)
		}
		if got := complete(t, narrow, mcp.PromptAboutEntity, "entity", "ACME R"); !ranked(got, []string{"ACME Rockets", "Rocket Acme Labs"}) {
			t.Errorf("ACME R = %q, want the name that begins with it, then the one whose words hold both", got)
		}
		if got := complete(t, owner, mcp.PromptAboutEntity, "entity", "ÉMI"); !ranked(got, []string{"Émile Zola", "Åsa Berg-Émile"}) {
			t.Errorf("ÉMI = %q, want Émile Zola, then the name with a later word Émile", got)
		}
		if got := complete(t, owner, mcp.PromptAboutEntity, "entity", "åsa"); !slices.Equal(got, []string{"Åsa Berg-Émile"}) {
			t.Errorf("åsa = %q", got)
		}
		res, err := owner.Complete(t.Context(), &mcpsdk.CompleteParams{Ref: &mcpsdk.CompleteReference{Type: "ref/prompt", Name: mcp.PromptAboutEntity},
			Argument: mcpsdk.CompleteParamsArgument{Name: "entity", Value: "acm"}})
		if err != nil {
			t.Fatal(err)
		}
		// Fourteen names begin with acm: as many as the answer holds (at
		// most ten, and MCP's cap of 100), in the order of their keys,
		// and more to come.
		v := res.Completion.Values
		if len(v) < 5 || len(v) > 10 || !res.Completion.HasMore {
			t.Errorf("acm as the owner = %q (has more %v), want five to ten, and more", v, res.Completion.HasMore)
		}
		for i := range v {
			if !strings.HasPrefix(graph.CompletionKey(v[i]), "acm") || i > 0 && graph.CompletionKey(v[i-1]) > graph.CompletionKey(v[i]) {
				t.Errorf("acm as the owner = %q, want names that begin with acm, in order", v)
				break
			}
		}

		ids := func(cs *mcpsdk.ClientSession, value string) []string {
			t.Helper()
			res, err := cs.Complete(t.Context(), &mcpsdk.CompleteParams{Ref: &mcpsdk.CompleteReference{Type: "ref/resource", URI: "cairn://entity/{entity_id}"},
				Argument: mcpsdk.CompleteParamsArgument{Name: "entity_id", Value: value}})
			if err != nil {
				t.Fatalf("entity_id %q: %v", value, err)
			}
			return res.Completion.Values
		}
		if got := ids(narrow, "acme"); len(got) != 4 || !slices.Contains(got, acme) || got[0] != acme {
			t.Errorf("ids of acme = %q, want Acme's first of four", got)
		}
		if got := ids(owner, acme[:len(acme)-2]); !slices.Contains(got, acme) {
			t.Errorf("ids from %q = %q, want %s", acme[:len(acme)-2], got, acme)
		}
		if got := ids(owner, dup); len(got) != 0 {
			t.Errorf("the merged entity's id %s is offered: %q", dup, got)
		}
		for _, id := range ids(narrow, "ent_") {
			snap := e.mustCall(t, "retrieve_entity_snapshot", map[string]any{"entity_id": id})
			if typ, _ := snap["entity_type"].(string); typ != "company" {
				t.Errorf("the company reader is offered %s (%v)", id, snap)
			}
		}
	})
}
