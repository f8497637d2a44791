package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/telemetry"
)

// watch registers the backend's pools and its outbox with m: database/sql
// statistics of the embedded store's two pools, pgxpool statistics of
// PostgreSQL's three, and the entity-embedding outbox's depth and age where the
// graph driver can count it (the embedded store and PostgreSQL; not yet
// Neo4j). A nil m does nothing.
func (b *backend) watch(m *telemetry.Metrics) {
	if m == nil {
		return
	}
	if b.sqlite != nil {
		m.WatchSQL("sqlite_write", b.sqlite.Write)
		m.WatchSQL("sqlite_read", b.sqlite.Read)
	}
	if b.postgres != nil {
		m.WatchPgxPools(map[string]*pgxpool.Pool{"graph": b.postgres.Pool, "vectors": b.postgres.Vectors, "control": b.postgres.Control})
	}
	if s, ok := b.graph.(graph.OutboxStatter); ok {
		m.WatchQueue("outbox", func(ctx context.Context) (telemetry.QueueStats, error) {
			st, err := s.OutboxStats(ctx)
			return telemetry.QueueStats{Depth: st.Depth, Oldest: st.Oldest}, err
		})
	}
}

// startTracing sets up the tracing the OTEL_* environment asks for, and
// says so in the log when it is on.
func startTracing(ctx context.Context, getenv func(string) string, log *slog.Logger) (*telemetry.Tracing, error) {
	t, err := telemetry.NewTracing(ctx, getenv, version())
	if err != nil {
		return nil, usageError{err.Error()}
	}
	if t.Enabled {
		log.Info("tracing on: spans are exported by OTLP/HTTP", "endpoint", t.Endpoint)
	}
	return t, nil
}

// stopTracing exports the spans still buffered, for up to 5 seconds.
func stopTracing(ctx context.Context, t *telemetry.Tracing, log *slog.Logger) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := t.Shutdown(sctx); err != nil {
		log.Warn("tracing: flushing spans", "err", err)
	}
}

// serveMetrics serves m at /metrics on addr, without authentication, until
// the returned function is called, and returns the metrics' URL.
func serveMetrics(addr string, m *telemetry.Metrics, log *slog.Logger) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("listen on %s (--metrics-addr): %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", "err", err)
		}
	}()
	url = "http://" + ln.Addr().String() + "/metrics"
	log.Info("serving metrics without authentication", "url", url)
	return url, func() { _ = srv.Close() }, nil
}
