package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// Epitome's tables (list_tables, query_table, add_record) are a view of the
// schema registry: a table is an entity type, its columns the schema's
// fields, its records the entities. Consent on tables/<name> is consent on
// entities/<name> (the consent package maps the alias).

// ListTablesIn are the arguments of list_tables (none).
type ListTablesIn struct{}

// TableOut describes one table.
type TableOut struct {
	TableName     string   `json:"table_name"`
	Description   string   `json:"description"`
	RecordCount   int      `json:"record_count"`
	Columns       []string `json:"columns"`
	SchemaVersion string   `json:"schema_version"`
	Scope         string   `json:"scope" jsonschema:"global or user"`
}

// ListTablesOut lists tables.
type ListTablesOut struct {
	Tables []TableOut `json:"tables"`
	Total  int        `json:"total"`
}

func listTablesTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:        "list_tables",
		title:       "List tables",
		description: "List your tables (entity types with records or your own schema) with record counts, columns and descriptions.",
		toolset:     ToolsetTables, ann: readOnly, budget: BudgetSummary,
	}, func(ctx context.Context, call *Call, _ ListTablesIn) (ListTablesOut, error) {
		tables, err := d.Knowledge.Tables(ctx, call.Caller())
		if err != nil {
			return ListTablesOut{}, err
		}
		out := ListTablesOut{Tables: []TableOut{}}
		for _, t := range tables {
			out.Tables = append(out.Tables, TableOut{TableName: t.Schema.EntityType, Description: t.Schema.Description, RecordCount: t.Count,
				Columns: t.Schema.FieldNames(), SchemaVersion: t.Schema.Version, Scope: t.Schema.Scope()})
		}
		out.Total = len(out.Tables)
		return out, nil
	})
}

// QueryTableIn are the arguments of query_table.
type QueryTableIn struct {
	TableName string         `json:"tableName"`
	Filters   map[string]any `json:"filters,omitempty" jsonschema:"{column: value} for equality, or {column: {op: value}} with op eq, ne, gt, gte, lt, lte, contains, in"`
	SQL       *string        `json:"sql,omitempty" jsonschema:"not supported: use filters"`
	Limit     *int           `json:"limit,omitempty"`
	Offset    *int           `json:"offset,omitempty"`
}

// RecordOut is one table record.
type RecordOut struct {
	ID                string         `json:"id" jsonschema:"the entity id"`
	Data              map[string]any `json:"data"`
	LastObservationAt string         `json:"last_observation_at"`
}

// QueryTableOut is a page of records.
type QueryTableOut struct {
	TableName string      `json:"table_name"`
	Records   []RecordOut `json:"records"`
	Total     int         `json:"total" jsonschema:"records that pass the filters"`
}

func queryTableTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:        "query_table",
		title:       "Query a table",
		description: "Read a table's records, newest first, with structured filters on columns and limit/offset.",
		toolset:     ToolsetTables, ann: readOnly, budget: BudgetSummary,
		shape: func(s *jsonschema.Schema) {
			maxLen(prop(s, "tableName"), 128)
			bounds(prop(s, "limit"), 1, knowledge.MaxTableLimit)
			bounds(prop(s, "offset"), 0, 1_000_000)
			setDefault(prop(s, "limit"), 50)
		},
	}, func(ctx context.Context, call *Call, in QueryTableIn) (QueryTableOut, error) {
		if in.SQL != nil {
			return QueryTableOut{}, &knowledge.ValidationError{Field: "sql", Expected: "filters", Got: "string",
				Message: "SQL queries are not supported: pass filters, e.g. {\"calories\": {\"gt\": 500}, \"food\": \"pizza\"}"}
		}
		filters, err := tableFilters(in.Filters)
		if err != nil {
			return QueryTableOut{}, err
		}
		limit, offset := 0, 0
		if in.Limit != nil {
			limit = *in.Limit
		}
		if in.Offset != nil {
			offset = *in.Offset
		}
		typ := schema.NormalizeTypeName(in.TableName)
		ents, total, err := d.Knowledge.QueryTable(ctx, call.Caller(), typ, filters, limit, offset)
		if err != nil {
			return QueryTableOut{}, err
		}
		out := QueryTableOut{TableName: typ, Total: total, Records: []RecordOut{}}
		for _, e := range ents {
			out.Records = append(out.Records, RecordOut{ID: e.ID, Data: orEmpty(e.Snapshot), LastObservationAt: ts(e.LastObservationAt)})
		}
		return out, nil
	})
}

// tableFilters reads query_table's filters: {column: value} or {column:
// {op: value, …}}, in column then operator order.
func tableFilters(in map[string]any) ([]schema.Filter, error) {
	var out []schema.Filter
	cols := make([]string, 0, len(in))
	for k := range in {
		cols = append(cols, k)
	}
	slices.Sort(cols)
	for _, col := range cols {
		v := in[col]
		ops, isOps := v.(map[string]any)
		if !isOps {
			out = append(out, schema.Filter{Field: col, Op: "eq", Value: v})
			continue
		}
		names := make([]string, 0, len(ops))
		for op := range ops {
			names = append(names, op)
		}
		slices.Sort(names)
		for _, op := range names {
			if !slices.Contains(schema.FilterOps, op) {
				return nil, &knowledge.ValidationError{Field: "filters." + col, Expected: "one of: " + strings.Join(schema.FilterOps, ", "),
					Got: op, Message: fmt.Sprintf("unknown operator %q", truncateText(op, 16))}
			}
			out = append(out, schema.Filter{Field: col, Op: op, Value: ops[op]})
		}
	}
	return out, nil
}

// AddRecordIn are the arguments of add_record.
type AddRecordIn struct {
	TableName        string         `json:"tableName"`
	Data             map[string]any `json:"data"`
	TableDescription *string        `json:"tableDescription,omitempty" jsonschema:"describes a new table"`
}

// AddRecordOut is the record as stored.
type AddRecordOut struct {
	TableName     string         `json:"table_name"`
	ID            string         `json:"id" jsonschema:"the entity id"`
	Created       *bool          `json:"created,omitempty"`
	Data          map[string]any `json:"data" jsonschema:"the record as the table now holds it"`
	TableCreated  bool           `json:"table_created"`
	UnknownFields []string       `json:"unknown_fields" jsonschema:"columns the table does not have yet, kept and promoted as they recur"`
}

func addRecordTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:        "add_record",
		title:       "Add a record",
		description: "Add a record to a table, creating the table when new; new columns are kept and added as they recur. A store of one entity.",
		toolset:     ToolsetTables, ann: additive, budget: BudgetList, rateClass: consent.RateClassStore,
		shape: func(s *jsonschema.Schema) {
			maxLen(prop(s, "tableName"), 128)
			maxLen(prop(s, "tableDescription"), 1024)
		},
	}, func(ctx context.Context, call *Call, in AddRecordIn) (AddRecordOut, error) {
		typ := schema.NormalizeTypeName(in.TableName)
		if _, ok := in.Data["entity_type"]; ok {
			return AddRecordOut{}, &knowledge.ValidationError{Field: "data.entity_type", Expected: "a column other than entity_type", Got: "entity_type",
				Message: "entity_type is reserved; the table name is the type"}
		}
		entity := map[string]any{"entity_type": typ}
		for k, v := range in.Data {
			entity[k] = v
		}
		req := knowledge.StoreRequest{Entities: []map[string]any{entity}}
		if in.TableDescription != nil {
			req.TypeDescriptions = map[string]string{typ: *in.TableDescription}
		}
		res, err := d.Knowledge.Store(ctx, call.Caller(), req)
		if err != nil {
			return AddRecordOut{}, err
		}
		line := res.Entities[0]
		out := AddRecordOut{TableName: typ, ID: line.EntityID, Created: line.Created, TableCreated: len(res.SchemasCreated) > 0, UnknownFields: []string{}}
		out.Data = map[string]any{}
		if line.Created == nil {
			// A table the caller may write but not read: the answer says
			// nothing about what it holds.
			return out, nil
		}
		snap, err := d.Knowledge.EntitySnapshot(ctx, call.Caller(), line.EntityID, time.Time{})
		if err != nil {
			return AddRecordOut{}, err
		}
		out.Data = orEmpty(snap.Entity.Snapshot)
		for k := range in.Data {
			if _, ok := out.Data[k]; !ok {
				out.UnknownFields = append(out.UnknownFields, k)
			}
		}
		slices.Sort(out.UnknownFields)
		return out, nil
	})
}

// tablesTools are the tools of the tables toolset.
func tablesTools(d Deps) []*Tool {
	return []*Tool{listTablesTool(d), queryTableTool(d), addRecordTool(d)}
}
