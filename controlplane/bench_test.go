package controlplane_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/cairnkg/cairn/consent"
)

// BenchmarkAppendAudit writes audit records in batches of 256, as the
// background writer does; ns/op is per batch.
func BenchmarkAppendAudit(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			s := be.open(b)
			batch := make([]consent.AuditRecord, 256)
			for i := range batch {
				batch[i] = consent.AuditRecord{At: time.Now(), UserID: "u", AgentID: "a", AgentName: "claude", KeyID: "k", Transport: "http",
					Tool: "retrieve_entities", Kind: consent.AuditDecision, Action: consent.Read, Resource: fmt.Sprintf("entities/t%d", i%9),
					Decision: consent.Allow, ResultCode: "OK", Latency: time.Millisecond, RequestID: "trace_0123456789abcdef"}
			}
			for b.Loop() {
				if err := s.AppendAudit(b.Context(), batch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHitRate is one rate-limit check: one atomic upsert.
func BenchmarkHitRate(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			s := be.open(b)
			start := time.Now().Truncate(time.Minute)
			for b.Loop() {
				if _, err := s.HitRate(b.Context(), "key", consent.RateClassDefault, start); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
