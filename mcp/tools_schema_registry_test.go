package mcp_test

import (
	"testing"

	"github.com/cairnkg/cairn/mcp"
)

func TestSchemaToolsErrors(t *testing.T) {
	e := newEnv(t)
	def := func(extra map[string]any) map[string]any {
		args := map[string]any{"entity_type": "meal", "user_specific": true, "user_id": e.owner.UserID, "activate": true,
			"schema_definition": map[string]any{"fields": map[string]any{"food": map[string]any{"type": "string"}, "kcal": map[string]any{"type": "number"}},
				"identity_fields": []any{"food"}},
			"reducer_config": map[string]any{"merge_policies": map[string]any{"kcal": map[string]any{"strategy": "highest_priority"}}}}
		for k, v := range extra {
			args[k] = v
		}
		return args
	}
	out := e.mustCall(t, "register_schema", def(nil))
	if out["scope"] != "user" || out["schema_version"] != "1.0" || out["activated"] != true || out["schema_id"] == "" {
		t.Errorf("register_schema = %v", out)
	}
	tests := []struct {
		name, tool string
		args       map[string]any
		code       string
		field      string
	}{
		{"version again", "register_schema", def(nil), mcp.CodeSchemaExists, ""},
		{"no user_id", "register_schema", def(map[string]any{"user_id": nil, "schema_version": "2.0"}), mcp.CodeUserIDRequired, ""},
		{"global as the owner without the operator's flag", "register_schema", def(map[string]any{"user_specific": false, "schema_version": "2.0"}), mcp.CodeForbidden, ""},
		{"policy of no field", "register_schema", def(map[string]any{"schema_version": "2.0",
			"reducer_config": map[string]any{"merge_policies": map[string]any{"nope": map[string]any{"strategy": "last_write"}}}}), mcp.CodeValidation, "reducer_config.merge_policies.nope"},
		{"identity dropped", "register_schema", def(map[string]any{"schema_version": "2.0",
			"schema_definition": map[string]any{"fields": map[string]any{"food": map[string]any{"type": "string"}, "kcal": map[string]any{"type": "number"}}}}),
			mcp.CodeValidation, "schema_definition.identity_fields"},
		{"unknown type", "update_schema_incremental", map[string]any{"entity_type": "spaceship", "user_specific": true, "user_id": e.owner.UserID,
			"fields_to_add": []any{map[string]any{"field_name": "x", "field_type": "string"}}}, mcp.CodeSchemaNotFound, ""},
		{"incompatible type", "update_schema_incremental", map[string]any{"entity_type": "meal", "user_specific": true, "user_id": e.owner.UserID,
			"fields_to_add": []any{map[string]any{"field_name": "kcal", "field_type": "boolean"}}}, mcp.CodeValidation, "fields_to_add[0].field_type"},
		{"sql", "query_table", map[string]any{"tableName": "meal", "sql": "SELECT * FROM meal"}, mcp.CodeValidation, "sql"},
		{"bad operator", "query_table", map[string]any{"tableName": "meal", "filters": map[string]any{"kcal": map[string]any{"like": 1}}}, mcp.CodeValidation, "filters.kcal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{}
			for k, v := range tt.args {
				if v != nil {
					args[k] = v
				}
			}
			_, merr := e.call(t, tt.tool, args)
			if merr == nil || merr.Body.Code != tt.code {
				t.Fatalf("%s = %v, want %s", tt.tool, merr, tt.code)
			}
			if tt.field != "" && merr.Body.Details["field"] != tt.field {
				t.Errorf("details %v, want field %s", merr.Body.Details, tt.field)
			}
		})
	}
}

func TestTablesView(t *testing.T) {
	e := newEnv(t)
	rec := e.mustCall(t, "add_record", map[string]any{"tableName": "Meals", "tableDescription": "What I eat: food and drinks",
		"data": map[string]any{"food": "pizza", "calories": 800, "date": "2026-02-12"}})
	if rec["table_name"] != "meals" || rec["table_created"] != true || rec["id"] == "" {
		t.Fatalf("add_record = %v", rec)
	}
	for _, food := range []string{"ramen", "salad"} {
		e.mustCall(t, "add_record", map[string]any{"tableName": "meals", "data": map[string]any{"food": food, "calories": map[string]int{"ramen": 500, "salad": 200}[food]}})
	}
	tables := e.mustCall(t, "list_tables", map[string]any{})
	var meals map[string]any
	for _, tb := range tables["tables"].([]any) {
		if m := tb.(map[string]any); m["table_name"] == "meals" {
			meals = m
		}
	}
	if meals == nil || meals["record_count"] != float64(3) || meals["description"] != "What I eat: food and drinks" || meals["scope"] != "user" {
		t.Errorf("list_tables = %v", tables)
	}
	got := e.mustCall(t, "query_table", map[string]any{"tableName": "meals", "filters": map[string]any{"calories": map[string]any{"gte": 500}}})
	if got["total"] != float64(2) {
		t.Errorf("calories >= 500: %v", got)
	}
	// Auto-enhancement made food and calories columns (3 records, 3 sources).
	got = e.mustCall(t, "query_table", map[string]any{"tableName": "meals", "filters": map[string]any{"food": "Pizza"}, "limit": 1})
	if got["total"] != float64(1) || len(got["records"].([]any)) != 1 {
		t.Errorf("food = pizza: %v", got)
	}
	types := e.mustCall(t, "list_entity_types", map[string]any{"keyword": "food"})
	found := false
	for _, et := range types["entity_types"].([]any) {
		found = found || et.(map[string]any)["entity_type"] == "meals"
	}
	if !found {
		t.Errorf("list_entity_types food = %v, want meals", types)
	}
}
