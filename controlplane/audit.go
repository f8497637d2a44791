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

// auditRow is one audit record as audit_log stores it: integers that name
// its strings in the dictionaries (auditdict.go), and its request id packed.
type auditRow struct {
	at, latency                                                     int64
	userRef, caller, tool, resource, result, kind, action, decision int64
	request                                                         any
	count                                                           int64
}

const auditColumns = `at, latency_us, user_ref, caller, tool, resource, result, kind, action, decision, request, count`

// auditColumnCount is how many columns auditColumns names.
const auditColumnCount = 12

func (r auditRow) args() []any {
	return []any{r.at, r.latency, r.userRef, r.caller, r.tool, r.resource, r.result, r.kind, r.action, r.decision, r.request, r.count}
}

// auditRows turns records into rows, adding to the dictionaries the strings
// and callers they have not seen.
func (s *Store) auditRows(ctx context.Context, records []consent.AuditRecord) ([]auditRow, error) {
	strs := make([]string, 0, 8)
	callers := make([]auditCaller, 0, 1)
	for _, r := range records {
		strs = append(strs, r.UserID, r.Tool, r.Resource, r.ResultCode, r.Kind, string(r.Action), string(r.Decision))
		callers = append(callers, callerOf(r))
	}
	ids, err := s.stringIDs(ctx, strs, true)
	if err != nil {
		return nil, err
	}
	callerIDs, err := s.callerIDs(ctx, callers, true)
	if err != nil {
		return nil, err
	}
	rows := make([]auditRow, len(records))
	for i, r := range records {
		rows[i] = auditRow{at: micros(r.At), latency: r.Latency.Microseconds(), userRef: ids[r.UserID], caller: callerIDs[callerOf(r)],
			tool: ids[r.Tool], resource: ids[r.Resource], result: ids[r.ResultCode], kind: ids[r.Kind],
			action: ids[string(r.Action)], decision: ids[string(r.Decision)], request: s.packRequest(r.RequestID), count: int64(max(r.Count, 1))}
	}
	return rows, nil
}

func callerOf(r consent.AuditRecord) auditCaller {
	return auditCaller{UserID: r.UserID, AgentID: r.AgentID, AgentName: r.AgentName, KeyID: r.KeyID, Transport: r.Transport}
}

// AppendAudit implements consent.AuditSink: it writes records in one
// transaction and returns once that has committed. The table refuses UPDATE
// and DELETE but for retention's (triggers in 010_compact_audit.sql), so
// the log is append-only for every client of the database, not just for
// Cairn. Strings new to the dictionaries are added first, each committed
// on its own: an entry that names no record is harmless.
func (s *Store) AppendAudit(ctx context.Context, records []consent.AuditRecord) error {
	if len(records) == 0 {
		return nil
	}
	rows, err := s.auditRows(ctx, records)
	if err != nil {
		return fmt.Errorf("controlplane: append audit: %w", err)
	}
	if s.dialect == migrations.Postgres {
		return s.appendAuditMultiRow(ctx, rows)
	}
	// On SQLite, one prepared single-row insert run per record in one
	// transaction is about 8 times faster than one statement with
	// thousands of parameters (BenchmarkAppendAudit); on PostgreSQL, where
	// every statement is a round trip, the multi-row insert is 6 times
	// faster.
	return s.tx(ctx, 0, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO audit_log (`+auditColumns+`) VALUES (`+params(1, auditColumnCount)+`)`)
		if err != nil {
			return wrap("append audit", err)
		}
		defer stmt.Close()
		for _, r := range rows {
			if _, err := stmt.ExecContext(ctx, r.args()...); err != nil {
				return wrap("append audit", err)
			}
		}
		return nil
	})
}

// appendAuditMultiRow writes rows with multi-row inserts, in chunks below
// PostgreSQL's parameter limit. One chunk is one statement, committed on
// its own; more chunks share a transaction, so that a failed write leaves
// none of its records behind. Either way the commit is as durable as the
// server's synchronous_commit makes it (on by default: the commit returns
// once the WAL is flushed); nothing here lowers it.
func (s *Store) appendAuditMultiRow(ctx context.Context, rows []auditRow) error {
	const chunkRows = 500
	if len(rows) <= chunkRows {
		return insertAuditRows(ctx, s.db, rows)
	}
	return s.tx(ctx, 0, func(tx *sql.Tx) error {
		for start := 0; start < len(rows); start += chunkRows {
			if err := insertAuditRows(ctx, tx, rows[start:min(len(rows), start+chunkRows)]); err != nil {
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
func insertAuditRows(ctx context.Context, db execer, chunk []auditRow) error {
	const cols = auditColumnCount
	var b strings.Builder
	b.WriteString(`INSERT INTO audit_log (` + auditColumns + `) VALUES `)
	args := make([]any, 0, len(chunk)*cols)
	for i, r := range chunk {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(" + params(i*cols+1, cols) + ")")
		args = append(args, r.args()...)
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
	// The filters' strings name dictionary entries: a string the
	// dictionary does not hold is in no record.
	strs := []string{q.UserID}
	for _, v := range []string{q.Tool, q.Kind, string(q.Decision)} {
		if v != "" {
			strs = append(strs, v)
		}
	}
	ids, err := s.stringIDs(ctx, strs, false)
	if err != nil {
		return nil, fmt.Errorf("controlplane: query audit: %w", err)
	}
	if len(ids) < len(strs) {
		return nil, nil
	}
	var where []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	add("user_ref = $%d", ids[q.UserID])
	if q.AgentName != "" {
		callers, err := s.agentCallers(ctx, q.UserID, q.AgentName)
		if err != nil {
			return nil, fmt.Errorf("controlplane: query audit: %w", err)
		}
		if len(callers) == 0 {
			return nil, nil
		}
		in := make([]string, len(callers))
		for i, c := range callers {
			args = append(args, c)
			in[i] = fmt.Sprintf("$%d", len(args))
		}
		where = append(where, "caller IN ("+strings.Join(in, ", ")+")")
	}
	if q.Tool != "" {
		add("tool = $%d", ids[q.Tool])
	}
	if q.Kind != "" {
		add("kind = $%d", ids[q.Kind])
	}
	if q.Decision != "" {
		add("decision = $%d", ids[string(q.Decision)])
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
	out, err := s.scanAudit(ctx, strings.Join(where, " AND ")+fmt.Sprintf(` ORDER BY id DESC LIMIT $%d`, len(args)), args)
	if err != nil {
		return nil, fmt.Errorf("controlplane: query audit: %w", err)
	}
	return out, nil
}

// scanAudit reads the records that a WHERE clause (with its ORDER BY and
// LIMIT) selects, and resolves their dictionary entries.
func (s *Store) scanAudit(ctx context.Context, where string, args []any) ([]consent.AuditRecord, error) {
	type scanned struct {
		id  int64
		row auditRow
	}
	var rows []scanned
	err := s.queryEach(ctx, `SELECT id, `+auditColumns+` FROM audit_log WHERE `+where, args, func(r *sql.Rows) error {
		var x scanned
		if err := r.Scan(&x.id, &x.row.at, &x.row.latency, &x.row.userRef, &x.row.caller, &x.row.tool, &x.row.resource, &x.row.result,
			&x.row.kind, &x.row.action, &x.row.decision, &x.row.request, &x.row.count); err != nil {
			return err
		}
		rows = append(rows, x)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	strIDs, callerIDs := map[int64]bool{}, map[int64]bool{}
	for _, x := range rows {
		for _, id := range []int64{x.row.tool, x.row.resource, x.row.result, x.row.kind, x.row.action, x.row.decision} {
			strIDs[id] = true
		}
		callerIDs[x.row.caller] = true
	}
	strs, callers, err := s.resolve(ctx, strIDs, callerIDs)
	if err != nil {
		return nil, err
	}
	out := make([]consent.AuditRecord, len(rows))
	for i, x := range rows {
		c, ok := callers[x.row.caller]
		if !ok {
			return nil, fmt.Errorf("audit record %d: caller %d is not in the dictionary", x.id, x.row.caller)
		}
		str := func(id int64) string {
			v, found := strs[id]
			ok = ok && found
			return v
		}
		request, err := s.unpackRequest(x.row.request)
		if err != nil {
			return nil, err
		}
		out[i] = consent.AuditRecord{ID: x.id, At: time.UnixMicro(x.row.at).UTC(), UserID: c.UserID, AgentID: c.AgentID, AgentName: c.AgentName,
			KeyID: c.KeyID, Transport: c.Transport, Tool: str(x.row.tool), Kind: str(x.row.kind), Action: consent.Action(str(x.row.action)),
			Resource: str(x.row.resource), Decision: consent.Effect(str(x.row.decision)), ResultCode: str(x.row.result),
			Latency: time.Duration(x.row.latency) * time.Microsecond, RequestID: request, Count: int(x.row.count)}
		if !ok {
			return nil, fmt.Errorf("audit record %d names a string that is not in the dictionary", x.id)
		}
	}
	return out, nil
}
