package postgres

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Planner statistics. PostgreSQL plans a prepared statement again only when
// something invalidates its cached plan, and for growing tables that is
// ANALYZE (which autovacuum runs, once a minute at most, and never when it is
// off). pgx prepares every statement it sends, so a connection that planned a
// statement while the tables were small keeps that plan as they grow: a
// sequential scan that cost nothing on an empty table is one per call on a
// full one. Measured with `cairn bench` on a new database, 10,000 entities
// loaded through the API with no ANALYZE in between: 100 REFERS_TO
// relationships took 132 ms at p50 by the end of the load, against 10 ms
// with the statistics kept current (docs/performance.md).
//
// The analyzer keeps them current while Cairn writes: once the pool's
// statements have changed wakeRows rows, it asks, every second for a
// while, which of the tables have changed by more than the server's own
// autovacuum thresholds since they were last analysed, and analyses
// those. It decides as autovacuum would, only sooner, so on a server whose
// autovacuum keeps up it finds nothing to do. Reads, writes that change
// nothing (the background workers' polls) and a trickle of single rows
// (the readiness probe's write) do not wake it.

// DefaultAnalyzeEvery is how often the analyzer looks while it is awake,
// when Options.AnalyzeEvery asks for it.
const DefaultAnalyzeEvery = time.Second

// staleTables lists the tables of the current schema whose rows changed
// since their last ANALYZE by more than autovacuum_analyze_threshold plus
// autovacuum_analyze_scale_factor of their rows (the server's settings,
// which a table's own storage parameters override), as autovacuum reckons;
// a table never analysed counts its rows as none. Only tables the role may
// analyse (it owns them or the database) are listed: PostgreSQL skips the
// others with a warning in its log, which would come back every second.
// Each comes quoted, ready for ANALYZE.
const staleTables = `
SELECT format('%I.%I', s.schemaname, s.relname)
FROM pg_stat_user_tables s
JOIN pg_class c ON c.oid = s.relid
CROSS JOIN LATERAL (
  SELECT
    coalesce((SELECT split_part(o, '=', 2) FROM unnest(c.reloptions) o WHERE o LIKE 'autovacuum_analyze_threshold=%'),
      current_setting('autovacuum_analyze_threshold'))::float8 AS base,
    coalesce((SELECT split_part(o, '=', 2) FROM unnest(c.reloptions) o WHERE o LIKE 'autovacuum_analyze_scale_factor=%'),
      current_setting('autovacuum_analyze_scale_factor'))::float8 AS scale
) t
WHERE s.schemaname = current_schema()
  AND s.n_mod_since_analyze > t.base + t.scale * greatest(c.reltuples, 0)
  AND (pg_has_role(c.relowner, 'USAGE')
    OR pg_has_role((SELECT datdba FROM pg_database WHERE datname = current_database()), 'USAGE'))
ORDER BY 1`

// analyzer runs ANALYZE on stale tables over a connection of its own,
// whose statements the pool's tracer does not see.
type analyzer struct {
	cfg   *pgx.ConnConfig
	every time.Duration
	// changed counts the rows the pool's statements changed
	// (writeTracer) since the analyzer last took them.
	changed atomic.Int64
	// looks counts the analyzer's questions to the server, for tests.
	looks  atomic.Int64
	cancel context.CancelFunc
	done   chan struct{}
}

// wakeRows is how many changed rows wake the analyzer: the fewest
// autovacuum analyses a table for (autovacuum_analyze_threshold's default).
const wakeRows = 50

// statsLag is how long after the pool's last change the analyzer keeps
// looking: a server process reports its changes to the statistics system
// up to about ten seconds after its transactions, when it goes idle.
const statsLag = 15 * time.Second

// newAnalyzer returns an analyzer of the database cfg connects to and
// hooks it to the pool's configuration, whose connections tell it when a
// statement changed rows. start starts it.
func newAnalyzer(cfg *pgxpool.Config, every time.Duration) *analyzer {
	a := &analyzer{cfg: cfg.ConnConfig.Copy(), every: every, done: make(chan struct{})}
	// Named, for whoever wonders in pg_stat_activity who runs ANALYZE.
	if a.cfg.RuntimeParams == nil {
		a.cfg.RuntimeParams = map[string]string{}
	}
	a.cfg.RuntimeParams["application_name"] = "cairn analyzer"
	cfg.ConnConfig.Tracer = writeTracer{a}
	return a
}

// writeTracer is the pool's tracer: it counts for the analyzer the rows
// that statements, statements of batches and COPYs changed.
type writeTracer struct{ a *analyzer }

func (w writeTracer) note(tag pgconn.CommandTag, err error) {
	if err == nil && (tag.Insert() || tag.Update() || tag.Delete() || strings.HasPrefix(tag.String(), "COPY")) {
		w.a.changed.Add(tag.RowsAffected())
	}
}

func (w writeTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (w writeTracer) TraceQueryEnd(_ context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	w.note(d.CommandTag, d.Err)
}

func (w writeTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (w writeTracer) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	w.note(d.CommandTag, d.Err)
}

func (w writeTracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (w writeTracer) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	return ctx
}

func (w writeTracer) TraceCopyFromEnd(_ context.Context, _ *pgx.Conn, d pgx.TraceCopyFromEndData) {
	w.note(d.CommandTag, d.Err)
}

func (a *analyzer) start() {
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	go a.run(ctx)
}

func (a *analyzer) run(ctx context.Context) {
	defer close(a.done)
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	tick := time.NewTicker(a.every)
	defer tick.Stop()
	var lastChange time.Time
	var rows int64 // changed since the analyzer last woke
	for {
		var now time.Time
		select {
		case <-ctx.Done():
			return
		case now = <-tick.C:
		}
		if rows += a.changed.Swap(0); rows >= wakeRows {
			lastChange, rows = now, 0
		}
		if now.Sub(lastChange) > statsLag {
			// Idle: nothing changed that was not looked at, and the
			// connection is not kept open for nothing.
			if conn != nil {
				conn.Close(ctx)
				conn = nil
			}
			continue
		}
		// A failure (the server restarting, say) is retried at the next
		// tick with a new connection; the pool's users meet it too.
		if conn == nil || conn.IsClosed() {
			c, err := pgx.ConnectConfig(ctx, a.cfg)
			if err != nil {
				continue
			}
			conn = c
		}
		if _, err := a.analyzeStale(ctx, conn); err != nil {
			conn.Close(context.Background())
			conn = nil
		}
	}
}

// analyzeStale analyses the stale tables and returns them. SKIP_LOCKED
// leaves a table that autovacuum or another Cairn process is analysing,
// or that a migration holds, to them.
func (a *analyzer) analyzeStale(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	a.looks.Add(1)
	rows, err := conn.Query(ctx, staleTables)
	if err != nil {
		return nil, err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) == 0 {
		return nil, err
	}
	_, err = conn.Exec(ctx, `ANALYZE (SKIP_LOCKED) `+strings.Join(tables, ", "))
	return tables, err
}

// stop ends the analyzer.
func (a *analyzer) stop() {
	if a.cancel != nil {
		a.cancel()
		<-a.done
	}
}
