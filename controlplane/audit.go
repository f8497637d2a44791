package controlplane

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/migrations"
)

// AppendAudit implements consent.AuditSink: it writes records in one
// transaction and returns once that has committed. The table refuses UPDATE and DELETE (triggers in
// 004_consent.sql), so the log is append-only for every client of the
// database, not just for Cairn.
func (s *Store) AppendAudit(ctx context.Context, records []consent.AuditRecord) error {
	if len(records) == 0 {
		return nil
	}
	if s.dialect == migrations.Postgres {
		return s.appendAuditMultiRow(ctx, records)
	}
	// On SQLite, one prepared single-row insert run per record in one
	// transaction is about 8 times faster than one statement with
	// thousands of parameters (BenchmarkAppendAudit); on PostgreSQL, where
	// every statement is a round trip, the multi-row insert is 6 times
	// faster.
	return s.tx(ctx, 0, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO audit_log (at, user_id, agent_id, agent_name, key_id, transport, tool, kind, action, resource, decision, result_code, latency_us, request_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`)
		if err != nil {
			return wrap("append audit", err)
		}
		defer stmt.Close()
		for _, r := range records {
			if _, err := stmt.ExecContext(ctx, micros(r.At), r.UserID, r.AgentID, r.AgentName, r.KeyID, r.Transport, r.Tool, r.Kind,
				string(r.Action), r.Resource, string(r.Decision), r.ResultCode, r.Latency.Microseconds(), r.RequestID); err != nil {
				return wrap("append audit", err)
			}
		}
		return nil
	})
}

// appendAuditMultiRow writes records with multi-row inserts, in chunks
// below PostgreSQL's parameter limit. One chunk is one statement, committed
// on its own; more chunks share a transaction, so that a failed write
// leaves none of its records behind. Either way the commit is as durable
// as the server's synchronous_commit makes it (on by default: the commit
// returns once the WAL is flushed); nothing here lowers it.
func (s *Store) appendAuditMultiRow(ctx context.Context, records []consent.AuditRecord) error {
	const chunkRows = 500
	if len(records) <= chunkRows {
		return insertAuditRows(ctx, s.db, records)
	}
	return s.tx(ctx, 0, func(tx *sql.Tx) error {
		for start := 0; start < len(records); start += chunkRows {
			if err := insertAuditRows(ctx, tx, records[start:min(len(records), start+chunkRows)]); err != nil {
				return err
			}
		}
		return nil
	})
}

// execer runs a statement on a pool or in a transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// insertAuditRows writes chunk with one multi-row insert.
func insertAuditRows(ctx context.Context, db execer, chunk []consent.AuditRecord) error {
	const cols = 14
	var b strings.Builder
	b.WriteString(`INSERT INTO audit_log (at, user_id, agent_id, agent_name, key_id, transport, tool, kind, action, resource, decision, result_code, latency_us, request_id) VALUES `)
	args := make([]any, 0, len(chunk)*cols)
	for i, r := range chunk {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(")
		for j := range cols {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "$%d", i*cols+j+1)
		}
		b.WriteString(")")
		args = append(args, micros(r.At), r.UserID, r.AgentID, r.AgentName, r.KeyID, r.Transport, r.Tool, r.Kind,
			string(r.Action), r.Resource, string(r.Decision), r.ResultCode, r.Latency.Microseconds(), r.RequestID)
	}
	if _, err := db.ExecContext(ctx, b.String(), args...); err != nil {
		return wrap("append audit", err)
	}
	return nil
}

// QueryAudit returns a user's audit records, newest first.
func (s *Store) QueryAudit(ctx context.Context, q consent.AuditQuery) ([]consent.AuditRecord, error) {
	if q.UserID == "" {
		return nil, fmt.Errorf("controlplane: query audit: a user is required")
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	where := []string{"user_id = $1"}
	args := []any{q.UserID}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if q.AgentName != "" {
		add("agent_name = $%d", q.AgentName)
	}
	if q.Tool != "" {
		add("tool = $%d", q.Tool)
	}
	if q.Kind != "" {
		add("kind = $%d", q.Kind)
	}
	if q.Decision != "" {
		add("decision = $%d", string(q.Decision))
	}
	if !q.Since.IsZero() {
		add("at >= $%d", micros(q.Since))
	}
	if !q.Until.IsZero() {
		add("at < $%d", micros(q.Until))
	}
	if q.BeforeID > 0 {
		add("id < $%d", q.BeforeID)
	}
	args = append(args, limit)
	rows, err := s.db.QueryContext(ctx, `SELECT id, at, user_id, agent_id, agent_name, key_id, transport, tool, kind, action, resource, decision, result_code, latency_us, request_id
		FROM audit_log WHERE `+strings.Join(where, " AND ")+fmt.Sprintf(` ORDER BY id DESC LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, wrap("query audit", err)
	}
	defer rows.Close()
	var out []consent.AuditRecord
	for rows.Next() {
		var r consent.AuditRecord
		var at, latency int64
		var action, decision string
		if err := rows.Scan(&r.ID, &at, &r.UserID, &r.AgentID, &r.AgentName, &r.KeyID, &r.Transport, &r.Tool, &r.Kind,
			&action, &r.Resource, &decision, &r.ResultCode, &latency, &r.RequestID); err != nil {
			return nil, wrap("query audit", err)
		}
		r.At, r.Latency = time.UnixMicro(at).UTC(), time.Duration(latency)*time.Microsecond
		r.Action, r.Decision = consent.Action(action), consent.Effect(decision)
		out = append(out, r)
	}
	return out, wrap("query audit", rows.Err())
}
