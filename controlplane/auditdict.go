package controlplane

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/cairnkg/cairn/migrations"
)

// The audit log stores each record's strings as small integers: ids of
// audit_strings (tool, kind, action, resource, decision, result code, user)
// and of audit_callers (user, agent id and name, key, transport together),
// and the request id in 8 bytes (see 010_compact_audit.sql). Both
// dictionaries only ever grow, and an entry never changes (triggers refuse
// it), so an entry read once holds for good, in every process: auditDict
// caches them, and asks the database only about what it has not seen.

// auditCaller is who made a call, and how.
type auditCaller struct {
	UserID, AgentID, AgentName, KeyID, Transport string
}

// auditDict caches the audit dictionaries in both directions.
type auditDict struct {
	strings dictCache[string]
	callers dictCache[auditCaller]
}

func newAuditDict() *auditDict {
	return &auditDict{strings: newDictCache[string](), callers: newDictCache[auditCaller]()}
}

// maxCached bounds each of the cache's maps: a client can make up tool
// names, and the cache must not grow with them. Past the bound the map
// starts over; the database still holds everything.
const maxCached = 1 << 16

// dictCache caches one dictionary: entries by value and by id.
type dictCache[V comparable] struct {
	mu    sync.RWMutex
	ids   map[V]int64
	value map[int64]V
}

func newDictCache[V comparable]() dictCache[V] {
	return dictCache[V]{ids: map[V]int64{}, value: map[int64]V{}}
}

func (d *dictCache[V]) add(id int64, v V) {
	d.mu.Lock()
	if len(d.ids) >= maxCached {
		clear(d.ids)
		clear(d.value)
	}
	d.ids[v], d.value[id] = id, v
	d.mu.Unlock()
}

// idsOf returns the ids of the values the cache holds, and the other
// values, each once.
func (d *dictCache[V]) idsOf(values []V) (map[V]int64, []V) {
	out := make(map[V]int64, len(values))
	var missing []V
	seen := map[V]bool{}
	d.mu.RLock()
	defer d.mu.RUnlock()
	for _, v := range values {
		if id, ok := d.ids[v]; ok {
			out[v] = id
		} else if !seen[v] {
			seen[v] = true
			missing = append(missing, v)
		}
	}
	return out, missing
}

// valuesOf returns the values of the ids the cache holds, and the other
// ids, as query arguments.
func (d *dictCache[V]) valuesOf(ids map[int64]bool) (map[int64]V, []any) {
	out := make(map[int64]V, len(ids))
	var missing []any
	d.mu.RLock()
	defer d.mu.RUnlock()
	for id := range ids {
		if v, ok := d.value[id]; ok {
			out[id] = v
		} else {
			missing = append(missing, id)
		}
	}
	return out, missing
}

// dictChunk bounds the parameters of one dictionary lookup.
const dictChunk = 500

// stringIDs returns the ids of values that the dictionary holds; with
// create, it first adds those it does not, each in a statement of its own
// (an entry that outlives a failed write is harmless: it names nothing).
func (s *Store) stringIDs(ctx context.Context, values []string, create bool) (map[string]int64, error) {
	out, missing := s.dict.strings.idsOf(values)
	if len(missing) == 0 {
		return out, nil
	}
	if create {
		for _, v := range missing {
			if _, err := s.db.ExecContext(ctx, `INSERT INTO audit_strings (value) VALUES ($1) ON CONFLICT (value) DO NOTHING`, v); err != nil {
				return nil, wrap("audit dictionary", err)
			}
		}
	}
	for start := 0; start < len(missing); start += dictChunk {
		part := missing[start:min(len(missing), start+dictChunk)]
		args := make([]any, len(part))
		for i, v := range part {
			args[i] = v
		}
		err := s.queryEach(ctx, `SELECT id, value FROM audit_strings WHERE value IN (`+params(1, len(part))+`)`, args, func(rows *sql.Rows) error {
			var id int64
			var v string
			if err := rows.Scan(&id, &v); err != nil {
				return err
			}
			s.dict.strings.add(id, v)
			out[v] = id
			return nil
		})
		if err != nil {
			return nil, wrap("audit dictionary", err)
		}
	}
	if create && len(out) < len(values) {
		for _, v := range missing {
			if _, ok := out[v]; !ok {
				return nil, fmt.Errorf("controlplane: audit dictionary: %q was not stored", v)
			}
		}
	}
	return out, nil
}

// callerIDs is stringIDs for callers.
func (s *Store) callerIDs(ctx context.Context, callers []auditCaller, create bool) (map[auditCaller]int64, error) {
	out, missing := s.dict.callers.idsOf(callers)
	for _, c := range missing {
		if create {
			if _, err := s.db.ExecContext(ctx, `INSERT INTO audit_callers (user_id, agent_id, agent_name, key_id, transport)
				VALUES ($1, $2, $3, $4, $5) ON CONFLICT (user_id, agent_id, agent_name, key_id, transport) DO NOTHING`,
				c.UserID, c.AgentID, c.AgentName, c.KeyID, c.Transport); err != nil {
				return nil, wrap("audit callers", err)
			}
		}
		var id int64
		err := s.db.QueryRowContext(ctx, `SELECT id FROM audit_callers
			WHERE user_id = $1 AND agent_id = $2 AND agent_name = $3 AND key_id = $4 AND transport = $5`,
			c.UserID, c.AgentID, c.AgentName, c.KeyID, c.Transport).Scan(&id)
		switch {
		case isNoRows(err) && !create:
			continue
		case err != nil:
			return nil, wrap("audit callers", err)
		}
		s.dict.callers.add(id, c)
		out[c] = id
	}
	return out, nil
}

// agentCallers returns the ids of a user's callers with an agent name.
func (s *Store) agentCallers(ctx context.Context, userID, agentName string) ([]int64, error) {
	var ids []int64
	err := s.queryEach(ctx, `SELECT id, user_id, agent_id, agent_name, key_id, transport FROM audit_callers
		WHERE user_id = $1 AND agent_name = $2 ORDER BY id`, []any{userID, agentName}, func(rows *sql.Rows) error {
		var id int64
		var c auditCaller
		if err := rows.Scan(&id, &c.UserID, &c.AgentID, &c.AgentName, &c.KeyID, &c.Transport); err != nil {
			return err
		}
		s.dict.callers.add(id, c)
		ids = append(ids, id)
		return nil
	})
	return ids, wrap("audit callers", err)
}

// resolve returns the strings and callers that ids name, from the cache
// and, for those it does not hold, from the database.
func (s *Store) resolve(ctx context.Context, stringIDs, callerIDs map[int64]bool) (map[int64]string, map[int64]auditCaller, error) {
	strs, missingStrs := s.dict.strings.valuesOf(stringIDs)
	callers, missingCallers := s.dict.callers.valuesOf(callerIDs)
	for start := 0; start < len(missingStrs); start += dictChunk {
		part := missingStrs[start:min(len(missingStrs), start+dictChunk)]
		err := s.queryEach(ctx, `SELECT id, value FROM audit_strings WHERE id IN (`+params(1, len(part))+`)`, part, func(rows *sql.Rows) error {
			var id int64
			var v string
			if err := rows.Scan(&id, &v); err != nil {
				return err
			}
			s.dict.strings.add(id, v)
			strs[id] = v
			return nil
		})
		if err != nil {
			return nil, nil, wrap("audit dictionary", err)
		}
	}
	for start := 0; start < len(missingCallers); start += dictChunk {
		part := missingCallers[start:min(len(missingCallers), start+dictChunk)]
		err := s.queryEach(ctx, `SELECT id, user_id, agent_id, agent_name, key_id, transport FROM audit_callers WHERE id IN (`+params(1, len(part))+`)`,
			part, func(rows *sql.Rows) error {
				var id int64
				var c auditCaller
				if err := rows.Scan(&id, &c.UserID, &c.AgentID, &c.AgentName, &c.KeyID, &c.Transport); err != nil {
					return err
				}
				s.dict.callers.add(id, c)
				callers[id] = c
				return nil
			})
		if err != nil {
			return nil, nil, wrap("audit callers", err)
		}
	}
	return strs, callers, nil
}

// queryEach runs a query and calls fn for every row.
func (s *Store) queryEach(ctx context.Context, query string, args []any, fn func(*sql.Rows) error) error {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// params returns n placeholders numbered from first: "$1, $2, $3".
func params(first, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", first+i)
	}
	return b.String()
}

// Request ids of Cairn's form are "trace_" and 16 lowercase hex digits.
const tracePrefix = "trace_"

// traceBytes returns the 8 bytes of a request id of Cairn's form.
func traceBytes(id string) ([]byte, bool) {
	hexDigits, ok := strings.CutPrefix(id, tracePrefix)
	if !ok || len(hexDigits) != 16 {
		return nil, false
	}
	b, err := hex.DecodeString(hexDigits)
	if err != nil || hex.EncodeToString(b) != hexDigits { // uppercase would not read back as written
		return nil, false
	}
	return b, true
}

// packRequest is how the request column holds a request id: on SQLite the
// 8 bytes of a trace id as a BLOB, any other id as TEXT; on PostgreSQL
// (bytea) a 0 byte and the 8 bytes, or a 1 byte and the id's UTF-8.
func (s *Store) packRequest(id string) any {
	b, trace := traceBytes(id)
	switch {
	case s.dialect == migrations.SQLite && trace:
		return b
	case s.dialect == migrations.SQLite:
		return id
	case trace:
		return append([]byte{0}, b...)
	}
	return append([]byte{1}, id...)
}

// unpackRequest reverses packRequest.
func (s *Store) unpackRequest(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case []byte:
		if s.dialect == migrations.SQLite {
			if len(v) == 8 {
				return tracePrefix + hex.EncodeToString(v), nil
			}
			return string(v), nil
		}
		switch {
		case len(v) == 9 && v[0] == 0:
			return tracePrefix + hex.EncodeToString(v[1:]), nil
		case len(v) >= 1 && v[0] == 1:
			return string(v[1:]), nil
		}
	}
	return "", fmt.Errorf("controlplane: audit log: request id stored as %T %v", v, v)
}
