package mcp_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/mcp"
	"github.com/cairnkg/cairn/migrations"
	"github.com/cairnkg/cairn/telemetry"
)

// BenchmarkDecide is the cost of one consent decision over an agent's rules
// (20 rules, the decision falling to a prefix rule).
func BenchmarkDecide(b *testing.B) {
	var rules []consent.Rule
	for i := range 18 {
		p, _ := consent.NormalizePattern(fmt.Sprintf("entities/type%02d", i))
		rules = append(rules, consent.Rule{Pattern: p, Action: consent.Read, Effect: consent.Allow})
	}
	rules = append(rules, consent.Rule{Pattern: "entities/inv*", Action: consent.Read, Effect: consent.Allow},
		consent.Rule{Pattern: "*", Action: consent.Read, Effect: consent.Deny})
	d := consent.NewDecider(false, rules)
	for b.Loop() {
		d.Decide(consent.Read, "entities/invoice")
	}
}

// BenchmarkCallConsentCost measures what consent adds to a call: the same
// retrieve_entities call (10 entities, 9 entity types decided) through
// Handle without any consent machinery, with the policy (rules read from
// the store once per call), with policy and audit log, and with policy,
// audit log and rate limiter (the production wiring), on the embedded
// store.
func BenchmarkCallConsentCost(b *testing.B) {
	variants, p := consentCostSetup(b)
	args := json.RawMessage(`{}`)
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			for b.Loop() {
				if _, merr := v.srv.Invoke(b.Context(), p, "retrieve_entities", args); merr != nil {
					b.Fatal(merr)
				}
			}
		})
	}
}

// BenchmarkCallConsentCostParallel is BenchmarkCallConsentCost with 8 calls
// per core at once, as a busy server sees them: the audit log's writes are
// shared by the calls waiting at the same time (group commit), so its cost
// per call here is below one commit.
func BenchmarkCallConsentCostParallel(b *testing.B) {
	variants, p := consentCostSetup(b)
	args := json.RawMessage(`{}`)
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, merr := v.srv.Invoke(b.Context(), p, "retrieve_entities", args); merr != nil {
						b.Error(merr)
						return
					}
				}
			})
		})
	}
}

// consentCostVariant is one wiring of the consent machinery.
type consentCostVariant struct {
	name string
	srv  *mcp.Server
}

// consentCostSetup stores 10 entities in a new embedded store and returns
// a server per wiring and an agent allowed to read some of them.
func consentCostSetup(b *testing.B) ([]consentCostVariant, consent.Principal) {
	b.Helper()
	db := sqlitetest.Open(b)
	g := graph.NewStore(embedded.New(db))
	b.Cleanup(func() {
		g.Close()
	})
	control := controlplane.New(db.Write, migrations.SQLite)
	key, _ := consent.NewKey()
	boot, err := control.EnsureOwner(b.Context(), "owner", consent.HashKey(key), consent.DisplayPrefix(key))
	if err != nil {
		b.Fatal(err)
	}
	agent, err := control.CreateAgent(b.Context(), boot.User.ID, "claude")
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range []consent.Rule{
		{Pattern: "entities/*", Action: consent.Read, Effect: consent.Allow},
		{Pattern: "entities/invoice", Action: consent.Read, Effect: consent.Deny},
		{Pattern: "graph", Action: consent.Read, Effect: consent.Allow},
	} {
		r.UserID, r.AgentID = boot.User.ID, agent.ID
		if _, err := control.SetRule(b.Context(), r); err != nil {
			b.Fatal(err)
		}
	}
	agentKey, _, err := control.CreateKey(b.Context(), boot.User.ID, agent.ID, time.Time{})
	if err != nil {
		b.Fatal(err)
	}
	_, p, err := control.KeyByHash(b.Context(), consent.HashKey(agentKey))
	if err != nil {
		b.Fatal(err)
	}
	ks := knowledge.NewService(g, schema.NewRegistry(), knowledge.Options{})
	var ents []map[string]any
	for i := range 10 {
		ents = append(ents, map[string]any{"entity_type": "person", "name": fmt.Sprintf("Person %d", i)})
	}
	if _, err := ks.Store(b.Context(), knowledge.Caller{UserID: boot.User.ID}, knowledge.StoreRequest{Entities: ents}); err != nil {
		b.Fatal(err)
	}
	audit := consent.NewAuditLog(control, consent.AuditLogOptions{})
	b.Cleanup(func() { audit.Close() })
	limiter := consent.NewLimiter(control, consent.LimiterOptions{Limits: map[consent.RateClass]int{consent.RateClassDefault: 1 << 30}})
	variants := []struct {
		name string
		deps mcp.Deps
	}{
		{"none", mcp.Deps{Knowledge: ks}},
		// What metrics alone add to a bare call.
		{"none+metrics", mcp.Deps{Knowledge: ks, Metrics: telemetry.NewMetrics()}},
		{"policy", mcp.Deps{Knowledge: ks, Policy: consent.NewPolicy(control)}},
		{"policy+audit", mcp.Deps{Knowledge: ks, Policy: consent.NewPolicy(control), Audit: audit}},
		{"policy+audit+limiter", mcp.Deps{Knowledge: ks, Policy: consent.NewPolicy(control), Audit: audit, Limiter: limiter}},
		// What serve runs: the production wiring with metrics, tracing off.
		{"policy+audit+limiter+metrics", mcp.Deps{Knowledge: ks, Policy: consent.NewPolicy(control), Audit: audit, Limiter: limiter,
			Metrics: telemetry.NewMetrics()}},
		// With tracing on: every span recorded (always sampled) by the
		// SDK, but no exporter, so the cost is that of making the spans.
		{"policy+audit+limiter+metrics+tracing", mcp.Deps{Knowledge: ks, Policy: consent.NewPolicy(control), Audit: audit, Limiter: limiter,
			Metrics: telemetry.NewMetrics(), Tracing: &telemetry.Tracing{Provider: sdktrace.NewTracerProvider(), Enabled: true}}},
	}
	var out []consentCostVariant
	for _, v := range variants {
		srv, err := mcp.NewServer(v.deps, mcp.Options{})
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, consentCostVariant{v.name, srv})
	}
	return out, p
}
