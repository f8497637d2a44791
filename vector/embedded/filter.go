package embedded

import (
	"encoding/json"
	"strings"

	"github.com/cairnkg/cairn/vector"
)

// whereClause returns the SQL condition, on memories aliased m, of f and
// its arguments.
func whereClause(f vector.Filter) (string, []any) { return whereClauseAs(f, seqIn) }

// seqForm is how whereClauseAs writes the filters whose rows are in tables
// of their own (tags, entity links), which a plan either reads first or
// probes memory by memory.
type seqForm int

const (
	// seqIn: m.seq IN (SELECT seq FROM …) for the first such filter
	// (when there are no keywords, whose list that is), probes for the
	// others: SQLite lists the filter's rows, then finds their memories.
	// Best when the filter keeps few.
	seqIn seqForm = iota
	// seqExists: EXISTS (SELECT 1 FROM … AND seq = m.seq): one probe per
	// memory SQLite walks, which a walk in the listing's order stops early
	// when the filter keeps many: listing the newest 10 of 100,000 with a
	// tag on half of them took 17.6 ms in the first form and 0.2 in this.
	seqExists
)

// whereClauseAs is whereClause with the tag and entity filters written as
// form says.
func whereClauseAs(f vector.Filter, form seqForm) (string, []any) {
	conds, args := filterConds(f, form)
	return strings.Join(conds, " AND "), args
}

// filterConds returns the conditions of whereClauseAs, the user's first
// and the collections' second, and their arguments.
func filterConds(f vector.Filter, form seqForm) ([]string, []any) {
	conds := []string{"m.user_id = ?", "m.collection IN (" + placeholders(len(f.Collections)) + ")"}
	args := []any{f.UserID}
	for _, c := range f.Collections {
		args = append(args, c)
	}
	// At most one filter is a list of seqs (m.seq IN …): given two, SQLite
	// seeks every pair of their seqs in memories_collection_seq (seq and
	// rowid are one column), 720,000 seeks for two tags on 1,200 and 600 of
	// 1,200 memories, 0.36 s. The keywords' list comes first, since FTS5
	// cannot be probed row by row; the others are probed (EXISTS).
	listed := form == seqExists || len(f.Keywords) > 0
	seq := func(table, column string, v any) {
		if listed {
			conds = append(conds, "EXISTS (SELECT 1 FROM "+table+" x WHERE x.user_id = ? AND x."+column+" = ? AND x.seq = m.seq)")
		} else {
			conds = append(conds, "m.seq IN (SELECT seq FROM "+table+" WHERE user_id = ? AND "+column+" = ?)")
			listed = true
		}
		args = append(args, f.UserID, v)
	}
	for _, t := range f.Tags {
		seq("memory_tags", "tag", t)
	}
	if f.EntityID != "" {
		seq("memory_entities", "entity_id", f.EntityID)
	}
	if len(f.Keywords) > 0 {
		conds = append(conds, "m.seq IN (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?)")
		args = append(args, ftsQuery(f.Keywords, " AND "))
	}
	if !f.OccurredFrom.IsZero() {
		conds = append(conds, "m.occurred_at >= ?")
		args = append(args, f.OccurredFrom.UnixMicro())
	}
	if !f.OccurredTo.IsZero() {
		conds = append(conds, "m.occurred_at <= ?")
		args = append(args, f.OccurredTo.UnixMicro())
	}
	if f.MinConfidence != nil {
		conds = append(conds, "m.confidence >= ?")
		args = append(args, *f.MinConfidence)
	}
	if f.SourceID != "" {
		conds = append(conds, "m.source_id = ?")
		args = append(args, f.SourceID)
	}
	for k, v := range f.Metadata {
		// Keys are validated as letters, digits and underscores.
		conds = append(conds, `json_extract(m.metadata, '$."`+k+`"') = ?`)
		args = append(args, v)
	}
	if f.ReadableTypes != nil {
		conds = append(conds, typesReadable)
		args = append(args, readableArg(f.ReadableTypes))
	}
	return conds, args
}

// typesReadable is the condition that every type of memory m is readable
// (Filter.ReadableTypes), with one argument, readableArg's: the readable
// types are one JSON argument, however many there are, and an untyped
// memory (stored as exactly '[]') passes without reading its types.
const typesReadable = `(m.types = '[]' OR NOT EXISTS (SELECT 1 FROM json_each(m.types) t
	WHERE t.value NOT IN (SELECT r.value FROM json_each(?) r)))`

// readableArg is typesReadable's argument.
func readableArg(types []string) string {
	b, _ := json.Marshal(types)
	return string(b)
}

// countQuery counts the memories f keeps. With a tag or entity filter, the
// count walks that filter's rows and looks each memory up by its seq
// (CROSS JOIN keeps that order; "+" keeps SQLite to the table's rowid
// rather than a seek into memories_collection_seq, 25 ms against 56):
// SQLite would otherwise list the filter's rows into a temporary index
// and then probe it once per memory, 68 ms for a tag on half of 100,000
// memories.
func countQuery(f vector.Filter) (string, []any) {
	var table, column string
	var v any
	switch {
	case len(f.Tags) > 0:
		table, column, v = "memory_tags", "tag", f.Tags[0]
		f.Tags = f.Tags[1:]
	case f.EntityID != "":
		table, column, v = "memory_entities", "entity_id", f.EntityID
		f.EntityID = ""
	default:
		where, args := whereClause(f)
		return `SELECT count(*) FROM memories m WHERE ` + where, args
	}
	conds, args := filterConds(f, seqExists)
	conds[0], conds[1] = "+"+conds[0], "+"+conds[1]
	return `SELECT count(*) FROM ` + table + ` j CROSS JOIN memories m ON m.seq = j.seq
		WHERE j.user_id = ? AND j.` + column + ` = ? AND ` + strings.Join(conds, " AND "), append([]any{f.UserID, v}, args...)
}

// listForm is how a listing of the first offset+limit of total memories
// writes its tag and entity filters: seqExists when the filters keep so
// many that walking the memories in order and probing them finds the page
// sooner than reading the filters' rows and sorting their memories
// (seqIn).
func listForm(total, offset, limit int) seqForm {
	if total > 1000 && total >= 20*(offset+limit) {
		return seqExists
	}
	return seqIn
}
