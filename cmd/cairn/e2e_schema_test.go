package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEndToEndSchemaEvolution is the schema registry as a user meets it,
// with the Go MCP client against the built binary on every backend: a
// recipe nobody declared is stored (its schema inferred from every field)
// and read back, more recipes bring a new
// field until analyze_schema_candidates recommends it, update_schema_
// incremental applies it with migrate_existing, and the backfilled field
// reads back with its provenance. Auto-enhancement, which would promote the
// field by itself, is switched off with cairn admin for the manual path.
func TestEndToEndSchemaEvolution(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	forEachBackend(t, func(t *testing.T, dataDir string, env []string) {
		url := startServe(t, dataDir, append(env, "CAIRN_TOOLSETS=all")...)
		cs := connectHTTP(t, url)
		cairnAdmin(t, env, false, "schema", "auto-enhance", "off", "--data-dir", dataDir)
		schemaEvolutionScenario(t, cs)
	})
}

func schemaEvolutionScenario(t *testing.T, cs *mcpsdk.ClientSession) {
	t.Helper()
	// The first store of the type infers its schema from every field.
	first := callTool(t, cs, "store", map[string]any{"entities": []any{map[string]any{
		"entity_type": "recipe", "name": "Pad Thai", "prep_minutes": 25,
	}}})
	created, _ := first["schema_created"].([]any)
	if len(created) != 1 || fmt.Sprint(created[0].(map[string]any)["fields"]) != "map[name:string prep_minutes:number]" {
		t.Fatalf("the first recipe's store answered schema_created %v", first["schema_created"])
	}
	id := first["entities"].([]any)[0].(map[string]any)["entity_id"].(string)
	// A field a later store brings is kept raw, and shown as such.
	second := callTool(t, cs, "store", map[string]any{"entities": []any{map[string]any{
		"entity_type": "recipe", "name": "Pad Thai", "cuisine": "thai",
	}}})
	snap := callTool(t, cs, "retrieve_entity_snapshot", map[string]any{"entity_id": id})
	raw, _ := snap["raw_fields"].(map[string]any)
	if snap["canonical_name"] != "Pad Thai" || raw["cuisine"] != "thai" || snap["snapshot"].(map[string]any)["prep_minutes"] != float64(25) {
		t.Fatalf("the recipe read back: %v", snap)
	}

	// More recipes, one call each, all with a cuisine: five reach the
	// analysis's default frequency.
	recs := map[string]any{}
	for i, c := range []string{"italian", "thai", "french", "mexican"} {
		callTool(t, cs, "store", map[string]any{"entities": []any{map[string]any{
			"entity_type": "recipe", "name": fmt.Sprintf("Dish %d", i), "cuisine": c,
		}}})
		an := callTool(t, cs, "analyze_schema_candidates", map[string]any{"entity_type": "recipe"})
		if list := an["recommendations"].([]any); len(list) > 0 {
			recs = list[0].(map[string]any)
		}
	}
	fields, _ := recs["fields"].([]any)
	if len(fields) != 1 || fields[0].(map[string]any)["field_name"] != "cuisine" || fields[0].(map[string]any)["field_type"] != "string" {
		t.Fatalf("analyze_schema_candidates after five recipes: %v, want cuisine (string)", recs)
	}
	pending := callTool(t, cs, "get_schema_recommendations", map[string]any{"entity_type": "recipe"})
	if pending["total"] != float64(1) {
		t.Errorf("pending recommendations: %v", pending)
	}

	up := callTool(t, cs, "update_schema_incremental", map[string]any{
		"entity_type": "recipe", "user_specific": true, "user_id": ownerUserID(t, cs),
		"fields_to_add": []any{map[string]any{"field_name": "cuisine", "field_type": "string"}}, "migrate_existing": true,
	})
	if up["schema_version"] != "1.1" || up["migrated_existing"] != true || up["migrated_count"] != float64(5) {
		t.Fatalf("update_schema_incremental = %v", up)
	}
	snap = callTool(t, cs, "retrieve_entity_snapshot", map[string]any{"entity_id": id})
	if snap["snapshot"].(map[string]any)["cuisine"] != "thai" || snap["schema_version"] != "1.1" {
		t.Fatalf("the first recipe after the update: %v", snap)
	}
	prov := callTool(t, cs, "retrieve_field_provenance", map[string]any{"entity_id": id, "field": "cuisine"})
	if prov["value"] != "thai" || prov["source_observation"].(map[string]any)["source_id"] != second["source_id"] {
		t.Errorf("provenance of the backfilled cuisine = %v, want the second store's source %v", prov, second["source_id"])
	}
	applied := callTool(t, cs, "get_schema_recommendations", map[string]any{"entity_type": "recipe", "status": "applied"})
	if applied["total"] != float64(1) {
		t.Errorf("applied recommendations: %v", applied)
	}

	// A description that says what the type holds lets list_entity_types
	// find it by a word its name does not carry.
	callTool(t, cs, "register_schema", map[string]any{
		"entity_type": "recipe", "user_specific": true, "user_id": ownerUserID(t, cs), "schema_version": "2.0", "activate": true,
		"schema_definition": map[string]any{
			"description": "A dish to cook: the food, its ingredients and how to prepare it.",
			"fields": map[string]any{
				"name": map[string]any{"type": "string", "identifier": true}, "cuisine": map[string]any{"type": "string"},
				"prep_minutes": map[string]any{"type": "number"},
			},
			"identity_fields": []any{"name"},
		},
		"reducer_config": map[string]any{"merge_policies": map[string]any{}},
	})
	types := callTool(t, cs, "list_entity_types", map[string]any{"keyword": "food"})
	found := false
	for _, et := range types["entity_types"].([]any) {
		found = found || et.(map[string]any)["entity_type"] == "recipe"
	}
	if !found {
		t.Errorf("list_entity_types food = %v, want recipe", types)
	}
}

// ownerUserID is the calling user's id, as USER_ID_REQUIRED tells it to a
// user-specific schema call that leaves it out.
func ownerUserID(t *testing.T, cs *mcpsdk.ClientSession) string {
	t.Helper()
	e := callToolError(t, cs, "update_schema_incremental", map[string]any{"entity_type": "recipe", "user_specific": true,
		"fields_to_add": []any{map[string]any{"field_name": "x", "field_type": "string"}}})
	d, _ := e["details"].(map[string]any)
	if e["code"] != "USER_ID_REQUIRED" || d["user_id"] == nil {
		t.Fatalf("user_specific without user_id: %v, want USER_ID_REQUIRED with your user_id", e)
	}
	return d["user_id"].(string)
}

// TestAdminSchemaCommands registers a global schema with cairn admin while
// serve runs on the same store; a user's store then follows it rather than
// creating a schema of its own.
func TestAdminSchemaCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	forEachBackend(t, func(t *testing.T, dataDir string, env []string) {
		url := startServe(t, dataDir, env...)
		cs := connectHTTP(t, url)
		file := filepath.Join(t.TempDir(), "meal.json")
		def := `{"entity_type": "Meal", "version": "1.0", "description": "Something eaten: food and drink.",
			"fields": {"food": {"type": "string", "identifier": true}, "eaten_at": {"type": "date", "event_type": "MealEaten"}},
			"identity_fields": ["food"], "name_fields": ["food"]}`
		if err := os.WriteFile(file, []byte(def), 0o600); err != nil {
			t.Fatal(err)
		}
		out := cairnAdmin(t, env, false, "schema", "register", file, "--data-dir", dataDir)
		if !strings.Contains(out, "registered meal 1.0 (global, active)") {
			t.Errorf("schema register said %q", out)
		}
		cairnAdmin(t, env, true, "schema", "register", file, "--data-dir", dataDir) // the same version again
		list := cairnAdmin(t, env, false, "schema", "list", "--data-dir", dataDir)
		if !strings.Contains(list, "meal") || !strings.Contains(list, "global") || !strings.Contains(list, "built-in") {
			t.Errorf("schema list:\n%s", list)
		}
		res := callTool(t, cs, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "meal", "food": "ramen", "eaten_at": "2026-02-12"}}})
		if res["schema_created"] != nil {
			t.Errorf("a store of a globally registered type created a schema: %v", res["schema_created"])
		}
		events := callTool(t, cs, "list_timeline_events", map[string]any{"event_type": "MealEaten"})
		if evs, _ := events["events"].([]any); len(evs) != 1 {
			t.Errorf("MealEaten events: %v", events)
		}
	})
}
