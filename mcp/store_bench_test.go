package mcp_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/mcp"
	"github.com/cairnkg/cairn/migrations"
	"github.com/cairnkg/cairn/vector"
	vembedded "github.com/cairnkg/cairn/vector/embedded"
)

// BenchmarkStoreCall measures what the MCP layer adds to a store of 100
// new people (three fields each) on the embedded store, wired as cmd/cairn
// wires it, with 1,000 entities stored before: the knowledge call alone,
// then the same call through Handle without consent machinery, and with
// policy, audit log and rate limiter (the production wiring), as the owner.
// Each op adds 100 entities, so keep -benchtime to a few dozen ops:
//
//	go test -run '^$' -bench StoreCall -benchtime 30x ./mcp/
func BenchmarkStoreCall(b *testing.B) {
	db := sqlitetest.Open(b)
	g := graph.NewStore(embedded.New(db))
	b.Cleanup(func() {
		g.Close()
	})
	control := controlplane.New(db.Write, migrations.SQLite)
	key, _ := consent.NewKey()
	if _, err := control.EnsureOwner(b.Context(), "owner", consent.HashKey(key), consent.DisplayPrefix(key)); err != nil {
		b.Fatal(err)
	}
	_, owner, err := control.KeyByHash(b.Context(), consent.HashKey(key))
	if err != nil {
		b.Fatal(err)
	}
	ks := knowledge.NewService(g, schema.NewRegistry(), knowledge.Options{
		Profiles: control, Contradictions: control.WithReader(db.Read),
		EntityEmbeddings: vector.NewEntityStore(vembedded.New(db)),
	})
	next := 0
	people := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = map[string]any{
				"entity_type": "person", "name": fmt.Sprintf("quill %06d", next),
				"email": fmt.Sprintf("quill%06d@example.com", next), "company": fmt.Sprintf("company %d", next%500),
			}
			next++
		}
		return out
	}
	caller := knowledge.Caller{UserID: owner.UserID, AgentID: owner.AgentName, Allowed: func(knowledge.Action, string) bool { return true }}
	for range 10 {
		var ents []map[string]any
		for _, e := range people(100) {
			ents = append(ents, e.(map[string]any))
		}
		if _, err := ks.Store(b.Context(), caller, knowledge.StoreRequest{Entities: ents}); err != nil {
			b.Fatal(err)
		}
	}
	audit := consent.NewAuditLog(control, consent.AuditLogOptions{})
	b.Cleanup(func() { audit.Close() })
	limiter := consent.NewLimiter(control, consent.LimiterOptions{Limits: map[consent.RateClass]int{consent.RateClassDefault: 1 << 30}})
	server := func(d mcp.Deps) *mcp.Server {
		srv, err := mcp.NewServer(d, mcp.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return srv
	}
	bare := server(mcp.Deps{Knowledge: ks})
	production := server(mcp.Deps{Knowledge: ks, Policy: consent.NewPolicy(control), Audit: audit, Limiter: limiter})
	for _, v := range []struct {
		name string
		call func() error
	}{
		{"knowledge", func() error {
			var ents []map[string]any
			for _, e := range people(100) {
				ents = append(ents, e.(map[string]any))
			}
			_, err := ks.Store(b.Context(), caller, knowledge.StoreRequest{Entities: ents})
			return err
		}},
		{"handle", func() error { return invokeStore(b, bare, owner, people(100)) }},
		{"handle+policy+audit+limiter", func() error { return invokeStore(b, production, owner, people(100)) }},
	} {
		b.Run(v.name, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				if err := v.call(); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		})
	}
}

func invokeStore(b *testing.B, srv *mcp.Server, p consent.Principal, entities []any) error {
	args, err := json.Marshal(map[string]any{"entities": entities})
	if err != nil {
		return err
	}
	if _, merr := srv.Invoke(b.Context(), p, "store", args); merr != nil {
		return merr
	}
	return nil
}
