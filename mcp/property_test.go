package mcp_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/mcp"
)

// propertyTypes are the entity types the property test draws from.
// recipe is a type no schema describes: the first store of one creates the
// user's own schema, and its cuisine is kept as a raw fragment.
var propertyTypes = []string{"company", "person", "contact", "invoice", "note", "task", "recipe"}

// randomEntity returns fields for an entity of a type, unique by n.
func randomEntity(typ string, n int) map[string]any {
	m := map[string]any{"entity_type": typ}
	switch typ {
	case "invoice":
		m["invoice_number"], m["vendor_name"], m["issue_date"] = fmt.Sprintf("INV-%d", n), fmt.Sprintf("Vendor %d", n), fmt.Sprintf("2026-%02d-10", n%12+1)
	case "note", "task":
		m["title"] = fmt.Sprintf("%s %d", typ, n)
	case "recipe":
		m["name"], m["cuisine"] = fmt.Sprintf("%s %d", typ, n), []string{"thai", "french"}[n%2]
	default:
		m["name"] = fmt.Sprintf("%s %d", typ, n)
	}
	return m
}

// randomRules draws consent rules for one agent.
func randomRules(r *rand.Rand) [][3]string {
	patterns := []string{"*", "entities/*", "tables/*", "graph", "sources", "schema", "entities/c*", "entities/in*", "entities/no*",
		"memories/*", "vectors/*", "memories/notes", "vectors/journal", "memories/insights"}
	for _, t := range propertyTypes {
		patterns = append(patterns, "entities/"+t, "tables/"+t)
	}
	var rules [][3]string
	for range 1 + r.IntN(7) {
		action, effect := "read", "allow"
		if r.IntN(4) == 0 {
			action = "write"
		} else if r.IntN(5) == 0 {
			action = "delete"
		}
		if r.IntN(3) == 0 {
			effect = "deny"
		}
		rules = append(rules, [3]string{action, patterns[r.IntN(len(patterns))], effect})
	}
	return rules
}

// propertyArgs builds arguments for every tool from random entity ids. A
// tool without an entry fails the test.
var propertyArgs = map[string]func(r *rand.Rand, ids []string, n int) map[string]any{
	"store": func(r *rand.Rand, ids []string, n int) map[string]any {
		// Half the time an entity the owner may have stored (the seeded
		// ones are numbered from 0): the answer must not show its
		// neighbours unless the agent may read them and the graph.
		if r.IntN(2) == 0 {
			n = r.IntN(16)
		} else {
			n += 1000
		}
		return map[string]any{"entities": []any{randomEntity(propertyTypes[r.IntN(len(propertyTypes))], n)}}
	},
	"list_entity_types": func(*rand.Rand, []string, int) map[string]any { return map[string]any{} },
	"register_schema": func(r *rand.Rand, _ []string, n int) map[string]any {
		return map[string]any{"entity_type": propertyTypes[r.IntN(len(propertyTypes))], "user_specific": true, "user_id": propertyUser,
			"schema_version": fmt.Sprintf("9.%d", n), "activate": r.IntN(2) == 0,
			"schema_definition": map[string]any{"fields": map[string]any{"name": map[string]any{"type": "string"}}, "identity_fields": []any{"name"}},
			"reducer_config":    map[string]any{"merge_policies": map[string]any{}}}
	},
	"update_schema_incremental": func(r *rand.Rand, _ []string, n int) map[string]any {
		return map[string]any{"entity_type": propertyTypes[r.IntN(len(propertyTypes))], "user_specific": true, "user_id": propertyUser,
			"migrate_existing": true, "fields_to_add": []any{map[string]any{"field_name": "cuisine", "field_type": "string"}}}
	},
	"analyze_schema_candidates": func(r *rand.Rand, _ []string, _ int) map[string]any {
		return map[string]any{"min_frequency": 1, "min_confidence": 0}
	},
	"get_schema_recommendations": func(r *rand.Rand, _ []string, _ int) map[string]any {
		return map[string]any{"entity_type": propertyTypes[r.IntN(len(propertyTypes))], "status": "all"}
	},
	"list_tables": func(*rand.Rand, []string, int) map[string]any { return map[string]any{} },
	"query_table": func(r *rand.Rand, _ []string, _ int) map[string]any {
		return map[string]any{"tableName": propertyTypes[r.IntN(len(propertyTypes))], "filters": map[string]any{"name": map[string]any{"contains": "1"}}}
	},
	"add_record": func(r *rand.Rand, _ []string, n int) map[string]any {
		typ := propertyTypes[r.IntN(len(propertyTypes))]
		data := randomEntity(typ, n+2000)
		delete(data, "entity_type")
		return map[string]any{"tableName": typ, "data": data}
	},
	"retrieve_entity_snapshot": func(r *rand.Rand, ids []string, _ int) map[string]any {
		return map[string]any{"entity_id": pick(r, ids)}
	},
	"retrieve_entities": func(r *rand.Rand, _ []string, _ int) map[string]any {
		if r.IntN(2) == 0 {
			return map[string]any{"entity_type": propertyTypes[r.IntN(len(propertyTypes))]}
		}
		return map[string]any{}
	},
	"retrieve_entity_by_identifier": func(r *rand.Rand, _ []string, _ int) map[string]any {
		return map[string]any{"identifier": fmt.Sprintf("%s %d", propertyTypes[r.IntN(3)], r.IntN(12))}
	},
	"list_observations": func(r *rand.Rand, ids []string, _ int) map[string]any {
		return map[string]any{"entity_id": pick(r, ids)}
	},
	"retrieve_field_provenance": func(r *rand.Rand, ids []string, _ int) map[string]any {
		return map[string]any{"entity_id": pick(r, ids), "field": "name"}
	},
	"correct": func(r *rand.Rand, ids []string, _ int) map[string]any {
		return map[string]any{"entity_id": pick(r, ids), "entity_type": propertyTypes[r.IntN(len(propertyTypes))], "field": "name", "value": "corrected"}
	},
	"merge_entities": func(r *rand.Rand, ids []string, _ int) map[string]any {
		return map[string]any{"from_entity_id": pick(r, ids), "to_entity_id": pick(r, ids)}
	},
	"erase": func(r *rand.Rand, ids []string, _ int) map[string]any {
		return map[string]any{"kind": "entity", "ids": []any{pick(r, ids)}, "dry_run": r.IntN(2) == 0}
	},
	"retract": func(r *rand.Rand, ids []string, _ int) map[string]any {
		return map[string]any{"observation_ids": []any{"obs_unknown"}}
	},
	"list_timeline_events": func(r *rand.Rand, ids []string, _ int) map[string]any {
		if r.IntN(2) == 0 {
			return map[string]any{"entity_id": pick(r, ids)}
		}
		return map[string]any{}
	},
	"create_relationship": func(r *rand.Rand, ids []string, _ int) map[string]any {
		return map[string]any{"relationship_type": "REFERS_TO", "source_entity_id": pick(r, ids), "target_entity_id": pick(r, ids)}
	},
	"create_relationships": func(r *rand.Rand, ids []string, _ int) map[string]any {
		// PART_OF may close cycles: a refused edge's path must not cross
		// an entity the agent may not read.
		var rels []any
		for range 1 + r.IntN(6) {
			typ := "REFERS_TO"
			if r.IntN(2) == 0 {
				typ = "PART_OF"
			}
			rels = append(rels, map[string]any{"relationship_type": typ, "source_entity_id": pick(r, ids), "target_entity_id": pick(r, ids)})
		}
		return map[string]any{"relationships": rels}
	},
	"delete_relationship": func(r *rand.Rand, ids []string, _ int) map[string]any {
		return map[string]any{"relationship_type": "REFERS_TO", "source_entity_id": pick(r, ids), "target_entity_id": pick(r, ids)}
	},
	"list_relationships": func(r *rand.Rand, ids []string, _ int) map[string]any {
		return map[string]any{"entity_id": pick(r, ids)}
	},
	"get_relationship_snapshot": func(r *rand.Rand, ids []string, _ int) map[string]any {
		return map[string]any{"relationship_type": "REFERS_TO", "source_entity_id": pick(r, ids), "target_entity_id": pick(r, ids)}
	},
	"retrieve_related_entities": func(r *rand.Rand, ids []string, _ int) map[string]any {
		return map[string]any{"entity_id": pick(r, ids), "max_hops": 1 + r.IntN(4)}
	},
	"retrieve_graph_neighborhood": func(r *rand.Rand, ids []string, _ int) map[string]any {
		return map[string]any{"node_id": pick(r, ids), "include_observations": true}
	},
	"query_graph": func(r *rand.Rand, ids []string, _ int) map[string]any {
		if r.IntN(2) == 0 {
			return map[string]any{"queryType": "pattern", "pattern": map[string]any{"relationship_type": "REFERS_TO"}}
		}
		return map[string]any{"queryType": "traverse", "entityId": pick(r, ids), "maxHops": 3}
	},
	"get_user_context": func(r *rand.Rand, _ []string, _ int) map[string]any {
		return map[string]any{"topic": propertyTypes[r.IntN(len(propertyTypes))]}
	},
	"update_profile": func(r *rand.Rand, _ []string, n int) map[string]any {
		return map[string]any{"data": map[string]any{"n": n}}
	},
	"review_memories": func(*rand.Rand, []string, int) map[string]any { return map[string]any{"action": "list"} },
	"save_memory": func(r *rand.Rand, ids []string, n int) map[string]any {
		args := map[string]any{"collection": pickString(r, memoryCollections), "text": fmt.Sprint("agent memory ", n), "entity_ids": []any{pick(r, ids)}}
		if r.IntN(2) == 0 {
			// A claim: a contradiction about an entity the agent may
			// read, or a refusal that says nothing of one it may not.
			args["claims"] = []any{map[string]any{"entity_id": pick(r, ids), "field": "name", "value": fmt.Sprint("claimed ", n)}}
		}
		return args
	},
	"save_memories": func(r *rand.Rand, ids []string, n int) map[string]any {
		return map[string]any{"memories": []any{
			map[string]any{"collection": pickString(r, memoryCollections), "text": fmt.Sprint("agent batch memory ", n), "entity_ids": []any{pick(r, ids)}},
			map[string]any{"collection": pickString(r, memoryCollections), "text": fmt.Sprint("agent batch memory ", n, "b"),
				"occurred_at": "2024-05-01T12:00:00Z"},
		}}
	},
	"search_memory": func(r *rand.Rand, ids []string, _ int) map[string]any {
		args := map[string]any{"collection": pickString(r, memoryCollections), "query": "memory", "minSimilarity": 0}
		if r.IntN(2) == 0 {
			args["entity_id"] = pick(r, ids)
		}
		return args
	},
	"update_memory": func(r *rand.Rand, _ []string, n int) map[string]any {
		return map[string]any{"memory_id": pickString(r, propertyMemories), "text": fmt.Sprint("updated memory ", n)}
	},
	"delete_memory": func(r *rand.Rand, _ []string, _ int) map[string]any {
		return map[string]any{"memory_ids": []any{pickString(r, propertyMemories), pickString(r, propertyMemories)},
			"mode": pickString(r, []string{"retract", "erase"})}
	},
	"store_insight": func(r *rand.Rand, _ []string, n int) map[string]any {
		return map[string]any{"fileId": "src_unknown", "insight": map[string]any{"title": fmt.Sprint("t", n), "content": "c", "sourceLLM": "m"}}
	},
	"query_insights": func(*rand.Rand, []string, int) map[string]any {
		return map[string]any{"filters": map[string]any{"keywords": "insight"}}
	},
	// The file tools show files and jobs, never entities; the matrix
	// (matrix_test.go) proves their isolation on real files and jobs.
	"retrieve_file_url":    func(*rand.Rand, []string, int) map[string]any { return map[string]any{"file_path": "src_unknown"} },
	"arkiver_process_file": func(*rand.Rand, []string, int) map[string]any { return map[string]any{"fileId": "src_unknown"} },
	"arkiver_job_status":   func(*rand.Rand, []string, int) map[string]any { return map[string]any{"jobId": "job_unknown"} },
	"get_job":              func(*rand.Rand, []string, int) map[string]any { return map[string]any{"job_id": "job_unknown"} },
	"list_jobs":            func(*rand.Rand, []string, int) map[string]any { return map[string]any{} },
	// Sources name no entity; the resource tests prove their consent.
	"list_sources": func(r *rand.Rand, _ []string, _ int) map[string]any {
		return map[string]any{"kind": pickString(r, []string{"structured", "file", "correction"}), "offset": r.IntN(3)}
	},
	"cancel_job": func(*rand.Rand, []string, int) map[string]any { return map[string]any{"job_id": "job_unknown"} },
	"reinterpret": func(*rand.Rand, []string, int) map[string]any {
		return map[string]any{"source_id": "src_unknown", "interpretation_config": map[string]any{}}
	},
	"list_consent_rules": func(*rand.Rand, []string, int) map[string]any { return map[string]any{} },
	"set_consent_rule": func(*rand.Rand, []string, int) map[string]any {
		return map[string]any{"agent": "agent", "resource": "*", "action": "read", "effect": "allow"}
	},
	"delete_consent_rule": func(*rand.Rand, []string, int) map[string]any { return map[string]any{"rule_id": "rule_x"} },
	"query_audit_log":     func(*rand.Rand, []string, int) map[string]any { return map[string]any{} },
	// The compat toolset's aliases of Neotoma v0 names.
	"submit_payload": func(r *rand.Rand, _ []string, n int) map[string]any {
		typ := pickString(r, []string{"invoice", "note"})
		body := randomEntity(typ, n+3000)
		delete(body, "entity_type")
		return submitArgs("neotoma:store_"+typ+":v1", body)
	},
	"get_entity_snapshot": func(r *rand.Rand, ids []string, _ int) map[string]any {
		return map[string]any{"entity_id": pick(r, ids)}
	},
	"get_field_provenance": func(r *rand.Rand, ids []string, _ int) map[string]any {
		return map[string]any{"entity_id": pick(r, ids), "field": "name"}
	},
	"retrieve_records": func(r *rand.Rand, _ []string, _ int) map[string]any {
		switch r.IntN(3) {
		case 0:
			return map[string]any{"type": propertyTypes[r.IntN(len(propertyTypes))]}
		case 1:
			return map[string]any{"search": []any{propertyTypes[r.IntN(len(propertyTypes))]}, "limit": 100}
		}
		return map[string]any{"limit": 100}
	},
	"update_record": func(r *rand.Rand, ids []string, n int) map[string]any {
		return map[string]any{"id": pick(r, ids), "properties": map[string]any{"name": fmt.Sprint("updated ", n)}}
	},
	"upload_file": func(*rand.Rand, []string, int) map[string]any {
		return map[string]any{"file_path": "/nonexistent/file.txt"}
	},
	"get_file_url": func(*rand.Rand, []string, int) map[string]any { return map[string]any{"file_path": "src_unknown"} },
}

func pick(r *rand.Rand, ids []string) string { return ids[r.IntN(len(ids))] }

func pickString(r *rand.Rand, s []string) string { return s[r.IntN(len(s))] }

// propertyUser is the user the property test's agent acts for, which the
// schema tools' user_id names.
var propertyUser string

// propertyMemories are the owner's memories, which update_memory and
// delete_memory aim at, set as propertyUser is.
var propertyMemories []string

// memoryCollections are the collections the property test writes to.
var memoryCollections = []string{"notes", "journal", "files"}

// TestNoToolAnswersOutsideConsent generates random graphs and random
// consent rules and calls every tool with random arguments as the agent
// the rules are for. No answer may hold an entity whose type the rules do
// not let it read (anywhere: lists, traversal paths, neighbourhoods,
// relationship endpoints, memories' links), nor a relationship without
// graph read, nor a memory of a collection it may not read. The
// oracle is consent.Decide on the same rules, which rules_test.go pins.
func TestNoToolAnswersOutsideConsent(t *testing.T) {
	for _, tool := range mcp.AllTools(mcp.Deps{}) {
		if propertyArgs[tool.Name()] == nil {
			t.Errorf("tool %s has no entry in propertyArgs (property_test.go)", tool.Name())
		}
	}
	const seeds, callsPerTool = 12, 4
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0x636f6e73656e74))
			e := newEnvWith(t, envOptions{contextStores: true})
			typeOf := map[string]string{}
			var ents []any
			for i := range 6 + r.IntN(10) {
				ents = append(ents, randomEntity(propertyTypes[r.IntN(len(propertyTypes))], i))
			}
			out := e.mustCall(t, "store", map[string]any{"entities": ents})
			source := out["source_id"].(string)
			var ids []string
			for _, en := range out["entities"].([]any) {
				m := en.(map[string]any)
				typeOf[m["entity_id"].(string)] = m["entity_type"].(string)
				ids = append(ids, m["entity_id"].(string))
			}
			for range 2 * len(ids) {
				// Some edges are refused (self-loops); that is fine.
				e.call(t, "create_relationship", map[string]any{"relationship_type": "REFERS_TO", "source_entity_id": pick(r, ids), "target_entity_id": pick(r, ids)})
			}
			for range len(ids) {
				// Acyclic edges too, for cycle paths to cross (some are
				// refused as cycles).
				e.call(t, "create_relationship", map[string]any{"relationship_type": "PART_OF", "source_entity_id": pick(r, ids), "target_entity_id": pick(r, ids)})
			}
			// The owner's memories (and an insight) link random entities:
			// a readable memory must not reveal an unreadable one.
			collOf := map[string]string{}
			for i := range 4 + r.IntN(4) {
				col := pickString(r, memoryCollections)
				// Half claim a name: contradictions that review_memories
				// must show only with the entity, and the memory only with
				// its collection.
				args := map[string]any{"collection": col, "text": fmt.Sprint("owner memory ", i),
					"entity_ids": []any{pick(r, ids), pick(r, ids)}, "source_id": source}
				if claimed := pick(r, ids); r.IntN(2) == 0 {
					field := map[string]string{"invoice": "vendor_name", "note": "title", "task": "title"}[typeOf[claimed]]
					if field == "" {
						field = "name"
					}
					args["claims"] = []any{map[string]any{"entity_id": claimed, "field": field, "value": fmt.Sprint("claimed ", i)}}
					delete(args, "source_id") // the entities' own source would contradict nothing
				}
				out := e.mustCall(t, "save_memory", args)
				collOf[out["id"].(string)] = col
			}
			out = e.mustCall(t, "store_insight", map[string]any{"fileId": source,
				"insight": map[string]any{"title": "owner insight", "content": "an insight", "sourceLLM": "m"}})
			collOf[out["insightId"].(string)] = "insights"
			// Derived records: a file found to be an invoice or a note.
			// Its text kept as a memory, and a memory drawn from it, carry
			// that type: readable only with the type and the collection.
			typesOf := map[string]string{}
			kind := pickString(r, []string{"invoice", "note"})
			text := map[string]string{"invoice": "Invoice number: INV-7\nTotal: 5.00 EUR\n", "note": "# Plans\nA plan of the week.\n"}[kind]
			out = e.mustCall(t, "store", map[string]any{"file_content": b64(text), "mime_type": "text/plain"})
			file := out["source_id"].(string)
			job := waitJobDone(t, e, e.owner, out["job_id"].(string))
			fileMemory, _ := job["result"].(map[string]any)["memory_id"].(string)
			if fileMemory == "" {
				t.Fatalf("the file's job kept no memory: %v", job)
			}
			collOf[fileMemory], typesOf[fileMemory] = "files", kind
			for _, en := range e.mustCall(t, "retrieve_entities", map[string]any{"entity_type": kind, "limit": 100})["entities"].([]any) {
				typeOf[en.(map[string]any)["id"].(string)] = kind
			}
			out = e.mustCall(t, "save_memory", map[string]any{"collection": pickString(r, memoryCollections), "text": "owner memory of the file", "source_id": file})
			collOf[out["id"].(string)], typesOf[out["id"].(string)] = out["collection"].(string), kind
			ruleSpecs := randomRules(r)
			agent, _ := e.agent(t, e.owner.UserID, "agent", ruleSpecs...)
			propertyUser = e.owner.UserID
			propertyMemories = slices.Sorted(maps.Keys(collOf))
			var rules []consent.Rule
			for _, rs := range ruleSpecs {
				p, _ := consent.NormalizePattern(rs[1])
				rules = append(rules, consent.Rule{Action: consent.Action(rs[0]), Pattern: p, Effect: consent.Effect(rs[2])})
			}
			// Rules set twice for one (pattern, action) keep the last.
			rules = lastRulePerKey(rules)
			readable := func(typ string) bool { return consent.Decide(rules, consent.Read, "entities/"+typ) == consent.Allow }
			graphOK := consent.Decide(rules, consent.Read, "graph") == consent.Allow
			memoryOK := func(id string) bool {
				col, known := collOf[id]
				return !known || consent.Decide(rules, consent.Read, "memories/"+col) == consent.Allow && (typesOf[id] == "" || readable(typesOf[id]))
			}

			for _, tool := range e.server.Tools() {
				for n := range callsPerTool {
					args := propertyArgs[tool.Name()](r, ids, n)
					res, merr := e.callAs(t, agent, tool.Name(), args)
					if merr != nil {
						if merr.Body.Code == mcp.CodeInternal {
							t.Errorf("%s(%v): internal error", tool.Name(), args)
						}
						continue
					}
					if tool.Name() == "save_memory" || tool.Name() == "store_insight" {
						// What the agent itself just wrote is its own.
						delete(res, "id")
						delete(res, "insightId")
					}
					if tool.Name() == "add_record" {
						// The record the agent itself just wrote is its own.
						typeOf[res["id"].(string)] = res["table_name"].(string)
						delete(res, "id")
					}
					if tool.Name() == "store" {
						// The ids of what the agent itself just wrote are its own.
						for _, en := range res["entities"].([]any) {
							m := en.(map[string]any)
							typeOf[m["entity_id"].(string)] = m["entity_type"].(string)
						}
						delete(res, "entities")
						// A write answers no graph read without graph read.
						if related := res["related_entities"].([]any); !graphOK && len(related) > 0 {
							t.Errorf("store(%v): related_entities %v without graph read", args, related)
						}
					}
					if tool.Name() == "create_relationships" {
						// A failed item names the id the agent sent; its
						// other details (a cycle's path) are checked.
						for _, it := range res["results"].([]any) {
							if e, ok := it.(map[string]any)["error"].(map[string]any); ok {
								if d, ok := e["details"].(map[string]any); ok {
									delete(d, "id")
								}
							}
						}
					}
					checkAnswer(t, tool.Name(), args, res, "", typeOf, readable, graphOK, memoryOK)
				}
			}
		})
	}
}

// checkAnswer walks an answer and reports every entity id of an unreadable
// type and every relationship shown without graph read (except the answer
// to a relationship write, which names what the caller wrote, without
// metadata).
func checkAnswer(t *testing.T, tool string, args map[string]any, v any, path string, typeOf map[string]string, readable func(string) bool, graphOK bool, memoryOK func(string) bool) {
	t.Helper()
	switch x := v.(type) {
	case string:
		if strings.HasPrefix(x, "mem_") && !memoryOK(x) {
			t.Errorf("%s(%v): %s holds memory %s of a collection the agent may not read", tool, args, path, x)
		}
		if strings.HasPrefix(x, "ent_") {
			typ, known := typeOf[x]
			if !known || !readable(typ) {
				t.Errorf("%s(%v): %s holds entity %s of type %q, which the agent may not read", tool, args, path, x, typ)
			}
		}
	case []any:
		if strings.HasSuffix(path, "relationship_ids") && len(x) > 0 && !graphOK {
			t.Errorf("%s(%v): %s lists relationships without graph read", tool, args, path)
		}
		for i, it := range x {
			checkAnswer(t, tool, args, it, fmt.Sprintf("%s[%d]", path, i), typeOf, readable, graphOK, memoryOK)
		}
	case map[string]any:
		written := (tool == "create_relationship" || tool == "delete_relationship") && path == "" && x["metadata"] == nil
		if _, isRel := x["relationship_type"]; isRel && x["source_entity_id"] != nil && !graphOK && !written {
			t.Errorf("%s(%v): %s is a relationship, shown without graph read", tool, args, path)
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			checkAnswer(t, tool, args, x[k], path+"."+k, typeOf, readable, graphOK, memoryOK)
		}
	}
}

// lastRulePerKey mirrors the control plane: a rule for the same pattern and
// action replaces the earlier one.
func lastRulePerKey(rules []consent.Rule) []consent.Rule {
	var out []consent.Rule
	for _, r := range rules {
		out = slices.DeleteFunc(out, func(o consent.Rule) bool { return o.Pattern == r.Pattern && o.Action == r.Action })
		out = append(out, r)
	}
	return out
}
