// scenario.mjs drives a running Cairn with the official MCP TypeScript SDK
// client, the one inside Claude Desktop, Claude Code, Cursor, VS Code and
// mcp-remote, through what a user does first. cmd/cairn/e2e_ts_test.go runs
// it against the built binary:
//
//   node scenario.mjs stdio <cairn binary> <args…>
//   node scenario.mjs http <MCP URL> <API key>
//
// It prints one JSON object with what it saw and exits 0, or prints the
// failure to stderr and exits 1. The SDK itself checks what matters most:
// listTools() refuses a tool whose schema it cannot use, and callTool()
// validates structured content against the tool's output schema.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

function fail(msg) {
  throw new Error(msg);
}

async function connect(mode, args) {
  const client = new Client({ name: "cairn-e2e-ts", version: "1.0.0" });
  let transport;
  if (mode === "stdio") {
    const [command, ...rest] = args;
    transport = new StdioClientTransport({ command, args: rest, env: process.env, stderr: "ignore" });
  } else if (mode === "http") {
    const [url, key] = args;
    transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    });
  } else {
    fail(`unknown mode ${mode}; want stdio or http`);
  }
  await client.connect(transport);
  return client;
}

// call runs a tool that must succeed and returns its structured content.
async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  if (res.isError) {
    fail(`${name}: tool error ${res.content?.[0]?.text}`);
  }
  if (!res.structuredContent) {
    fail(`${name}: no structured content`);
  }
  return res.structuredContent;
}

// callError runs a tool that must fail and returns its error envelope.
async function callError(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  if (!res.isError) {
    fail(`${name}: succeeded, want an error`);
  }
  return JSON.parse(res.content[0].text).error;
}

async function main() {
  const [mode, ...args] = process.argv.slice(2);
  const client = await connect(mode, args);
  const seen = { protocol_version: client.transport?.protocolVersion ?? null };

  const { tools } = await client.listTools();
  seen.tools = tools.map((t) => t.name);
  for (const t of tools) {
    if (!t.inputSchema || !t.outputSchema || !t.annotations) {
      fail(`tool ${t.name} lacks a schema or annotations`);
    }
  }

  const stored = await call(client, "store", {
    entities: [
      { entity_type: "company", name: "Acme Rockets", industry: "rockets" },
      { entity_type: "person", name: "Ada Lovelace", email: "ada@example.com" },
    ],
  });
  const [company, person] = stored.entities;
  seen.stored = stored.entities.length;

  const snap = await call(client, "retrieve_entity_snapshot", { entity_id: company.entity_id });
  if (snap.snapshot.industry !== "rockets") fail(`industry = ${snap.snapshot.industry}`);
  if (snap.provenance.industry !== company.observation_id) {
    fail(`provenance of industry = ${snap.provenance.industry}, want ${company.observation_id}`);
  }
  const prov = await call(client, "retrieve_field_provenance", { entity_id: company.entity_id, field: "industry" });
  if (prov.source_material.id !== stored.source_id) fail(`provenance source ${prov.source_material.id}, want ${stored.source_id}`);
  seen.provenance_value = prov.value;

  await call(client, "create_relationship", {
    relationship_type: "PART_OF",
    source_entity_id: person.entity_id,
    target_entity_id: company.entity_id,
  });
  const related = await call(client, "retrieve_related_entities", { entity_id: company.entity_id, max_hops: 2 });
  seen.related = related.entities.map((e) => e.id);
  if (!seen.related.includes(person.entity_id)) fail(`traversal from the company misses the person: ${seen.related}`);

  // A relationship type of the user's own, registered on first use
  // (issue 35), and followed by name.
  const worksAt = await call(client, "create_relationship", {
    relationship_type: "WORKS_AT",
    source_entity_id: person.entity_id,
    target_entity_id: company.entity_id,
  });
  if (worksAt.relationship_type_created !== true) fail(`WORKS_AT: ${JSON.stringify(worksAt)}, want relationship_type_created`);
  const employers = await call(client, "retrieve_related_entities", {
    entity_id: person.entity_id,
    relationship_types: ["WORKS_AT"],
    max_hops: 1,
  });
  seen.works_at = employers.entities.map((e) => e.id).filter((id) => id !== person.entity_id);
  if (!seen.works_at.includes(company.entity_id)) fail(`WORKS_AT traversal misses the company: ${JSON.stringify(employers)}`);

  const memory = await call(client, "save_memory", {
    collection: "notes",
    text: "Ada prefers the launch review on Thursday mornings",
    tags: ["work"],
  });
  const found = await call(client, "search_memory", { collection: "notes", query: "launch review" });
  seen.memory_found = found.results.some((r) => r.id === memory.id);
  if (!seen.memory_found) fail(`search_memory did not find the memory: ${JSON.stringify(found)}`);

  // Forgetting (issue 37): an erased memory is found by neither meaning
  // nor keyword.
  const erased = await call(client, "delete_memory", { memory_ids: [memory.id], mode: "erase", reason: "the user asked" });
  seen.memory_erased = erased.counts?.memories ?? 0;
  const again = await call(client, "search_memory", { collection: "notes", query: "launch review" });
  const byWord = await call(client, "search_memory", { collection: "notes", query: "", keywords: "launch" });
  if ([...again.results, ...byWord.results].some((r) => r.id === memory.id)) {
    fail(`search_memory still finds the erased memory: ${JSON.stringify(again)} ${JSON.stringify(byWord)}`);
  }

  // Retraction (issue 37): two sources disagree on a field; the newer
  // wins until it is retracted ("that was wrong"), then the older one wins
  // again and its provenance names the observation it now comes from.
  const said = async (title) => {
    const out = await call(client, "store", { entities: [{ entity_type: "person", name: "Grace Hopper", email: "grace@example.com", title }] });
    return { entity: out.entities[0].entity_id, observation: out.entities[0].observation_id, source: out.source_id };
  };
  const older = await said("Commodore");
  const newer = await said("Rear Admiral");
  if (newer.entity !== older.entity) fail(`the second store made ${newer.entity}, want ${older.entity}`);
  const grace = () => call(client, "retrieve_entity_snapshot", { entity_id: older.entity });
  const beforeRetract = await grace();
  const retracted = await call(client, "retract", { observation_ids: [newer.observation], reason: "she was promoted later" });
  const afterRetract = await grace();
  const titleProv = await call(client, "retrieve_field_provenance", { entity_id: older.entity, field: "title" });
  seen.retraction = {
    title_before: beforeRetract.snapshot.title ?? null,
    before_from_newer: beforeRetract.provenance.title === newer.observation,
    retracted: retracted.observation_ids.length === 1 && retracted.observation_ids[0] === newer.observation,
    recomputed: retracted.entities.length === 1 && retracted.entities[0] === older.entity,
    title_after: afterRetract.snapshot.title ?? null,
    snapshot_from_older: afterRetract.provenance.title === older.observation,
    provenance_value: titleProv.value,
    provenance_observation_is_older: titleProv.source_observation.id === older.observation,
    provenance_source_is_older: titleProv.source_material.id === older.source,
  };

  // A conversation imported in one call, each turn with when it was said
  // (issue 36); date_range bounds that time, not the time of the import.
  const imported = await call(client, "save_memories", {
    memories: [
      { collection: "chat", text: "Ada: I adopted a greyhound called Biscuit", occurred_at: "2025-03-01T19:00:00Z" },
      { collection: "chat", text: "Ada: we moved into a flat near the canal", occurred_at: "2025-06-14T10:30:00+02:00" },
    ],
  });
  seen.imported = imported.results.map((r) => r.occurred_at);
  const march = await call(client, "search_memory", {
    collection: "chat", query: "greyhound", date_range: { start: "2025-03-01T00:00:00Z", end: "2025-03-31T23:59:59Z" },
  });
  seen.imported_in_march = march.results.map((r) => r.occurred_at);

  const context = await call(client, "get_user_context", { topic: "rockets" });
  if (!(context.tokens_used <= 2000)) fail(`get_user_context used ${context.tokens_used} tokens`);
  seen.context_entities = (context.entities ?? []).map((e) => e.entity_id);

  // A type nobody declared: the store creates the user's schema for it
  // from every field of that first store (issue 35); a field a later
  // store brings reads back as a raw field, shown where the snapshot is:
  // in listings and in the context, marked as not in the schema.
  const recipe = await call(client, "store", {
    entities: [{ entity_type: "recipe", name: "Pad Thai", cuisine: "thai", servings: 2 }],
  });
  seen.schema_created = (recipe.schema_created ?? []).map((s) => s.entity_type);
  seen.recipe_schema_fields = Object.keys(recipe.schema_created?.[0]?.fields ?? {}).sort();
  await call(client, "store", { entities: [{ entity_type: "recipe", name: "Pad Thai", vegetarian: true }] });
  const dish = await call(client, "retrieve_entity_snapshot", { entity_id: recipe.entities[0].entity_id });
  seen.recipe_cuisine = dish.snapshot?.cuisine ?? null;
  const listed = await call(client, "retrieve_entities", { entity_type: "recipe" });
  const listedRaw = listed.entities[0]?.raw_fields ?? {};
  if (listed.entities[0]?.snapshot?.servings !== 2 || listedRaw.vegetarian !== true) {
    fail(`retrieve_entities shows the recipe as ${JSON.stringify(listed.entities[0])}`);
  }
  const withRecipe = await call(client, "get_user_context", { topic: "pad thai recipe" });
  const inContext = (withRecipe.entities ?? []).find((e) => e.entity_id === recipe.entities[0].entity_id);
  if (!inContext || inContext.facts?.cuisine !== "thai" || inContext.facts?.servings !== 2 || inContext.facts?.vegetarian !== true ||
      inContext.raw_fields?.join() !== "vegetarian") {
    fail(`get_user_context shows the recipe as ${JSON.stringify(inContext)}`);
  }
  seen.recipe_listed_fields = Object.keys(listedRaw).sort();

  // Prompts and completions, as a host's menu uses them.
  const { prompts } = await client.listPrompts();
  seen.prompts = prompts.map((p) => p.name).sort();
  const about = await client.getPrompt({ name: "about_entity", arguments: { entity: "Acme" } });
  seen.prompt_about_acme = about.messages.some((m) => m.role === "user" && m.content?.type === "text" && m.content.text.includes("rockets"));
  const completed = await client.complete({ ref: { type: "ref/prompt", name: "about_entity" }, argument: { name: "entity", value: "Ada" } });
  seen.completed_ada = completed.completion.values;

  // Resources: the company's collection is listed, and the company reads
  // back, under Cairn's scheme and under Neotoma's.
  const { resources } = await client.listResources();
  seen.resources = resources.map((r) => r.uri).sort();
  const read = await client.readResource({ uri: `neotoma://entity/${company.entity_id}` });
  seen.resource_company = JSON.parse(read.contents[0].text).snapshot?.industry ?? null;

  // Subscriptions: subscribed to the company, the client is told when a
  // correction changes it.
  const companyURI = `cairn://entity/${company.entity_id}`;
  const updated = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no notifications/resources/updated for ${companyURI}`)), 30000);
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      if (n.params.uri === companyURI) {
        clearTimeout(timer);
        resolve(n.params.uri);
      }
    });
  });
  await client.subscribeResource({ uri: companyURI });
  await call(client, "correct", { entity_id: company.entity_id, entity_type: "company", field: "industry", value: "aerospace" });
  seen.updated = await updated;
  await client.unsubscribeResource({ uri: companyURI });

  const unknown = await callError(client, "no_such_tool", {});
  seen.unknown_tool = { code: unknown.code, available: unknown.details?.available_tools?.length ?? 0 };

  await client.close();
  process.stdout.write(JSON.stringify(seen) + "\n");
}

main().catch((err) => {
  process.stderr.write(`scenario: ${err?.stack ?? err}\n`);
  process.exit(1);
});
