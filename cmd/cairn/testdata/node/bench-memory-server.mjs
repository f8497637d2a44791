// bench-memory-server.mjs measures Cairn side by side with the reference MCP
// memory server (@modelcontextprotocol/server-memory, which keeps its
// knowledge graph in one JSONL file and rewrites it on every call). Both run
// as child processes over stdio, driven by the same client (the official
// TypeScript SDK, as Claude Desktop, Claude Code, Cursor and VS Code run it),
// with the same names and facts, in interleaved rounds (round 1 reference
// first, round 2 Cairn first, …), each round on fresh storage.
//
//   node bench-memory-server.mjs --cairn <cairn binary> [--entities 10000]
//        [--rounds 3] [--samples 100] [--relationships N] [--batch 100]
//        [--json out.json] [--markdown out.md] [--label text]
//
// scripts/bench-memory-server.sh builds cairn and runs it. Progress goes to
// stderr; stdout gets the Markdown table (and --markdown a copy of it,
// --json every figure of every round). Exit status 1, with the reason on
// stderr, when a server fails a call or answers something other than the
// expected entities: the figures are only worth something if both sides did
// the same work.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListToolsResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { mkdtempSync, readFileSync, readdirSync, lstatSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";

const require = createRequire(import.meta.url);
const referenceEntry = require.resolve("@modelcontextprotocol/server-memory/dist/index.js");
const here = dirname(fileURLToPath(import.meta.url));
const versionOf = (pkg) => JSON.parse(readFileSync(join(here, "node_modules", pkg, "package.json"), "utf8")).version;

const { values: opt } = parseArgs({
  options: {
    cairn: { type: "string" },
    entities: { type: "string", default: "10000" },
    relationships: { type: "string" },
    rounds: { type: "string", default: "3" },
    samples: { type: "string", default: "100" },
    batch: { type: "string", default: "100" },
    json: { type: "string" },
    markdown: { type: "string" },
    label: { type: "string", default: "" },
  },
});
const positive = (name) => {
  const n = Number(opt[name]);
  if (!Number.isInteger(n) || n < 1) fail(`--${name} must be a positive integer, got ${opt[name]}`);
  return n;
};
if (!opt.cairn) fail("--cairn <path of the cairn binary> is required");
const N = positive("entities");
const R = opt.relationships === undefined ? N : positive("relationships");
const ROUNDS = positive("rounds");
const SAMPLES = positive("samples");
const BATCH = positive("batch");
if (N < 2) fail("--entities must be at least 2");
const WARMUP = 3;
const RELATIONSHIP_TYPE = "REFERS_TO";

function fail(msg) {
  throw new Error(msg);
}
const log = (msg) => process.stderr.write(`bench: ${msg}\n`);

// ---- The data: the same names and facts for both servers. ----

const WORDS = ["amber", "basalt", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper",
  "kestrel", "lantern", "meadow", "nimbus", "orchid", "pebble", "quill", "raven", "saffron", "tundra"];
const COMPANIES = ["Acme Rockets", "Globex", "Initech", "Umbrella Labs", "Stark Foundry", "Wayne Freight", "Tyrell Bio"];
const TITLES = ["engineer", "designer", "accountant", "buyer", "lawyer", "researcher", "nurse", "pilot", "teacher"];
const CITIES = ["Lyon", "Porto", "Leeds", "Turin", "Ghent", "Bergen", "Graz", "Cork", "Brno", "Split", "Tartu"];

const cap = (w) => w[0].toUpperCase() + w.slice(1);
// nameOf(4216) is "Quill 004216": unique, and findable by keyword.
const nameOf = (i) => `${cap(WORDS[i % WORDS.length])} ${String(i).padStart(6, "0")}`;
// factsOf gives the three facts of entity i, as fields (Cairn) and as
// "field: value" observations (the reference).
const factsOf = (i) => ({
  company: COMPANIES[i % COMPANIES.length],
  title: TITLES[(i * 7) % TITLES.length],
  notes: `met in ${CITIES[(i * 3) % CITIES.length]} in ${1990 + (i % 35)}, ${WORDS[(i * 11) % WORDS.length]} project`,
});
const observationsOf = (i) => Object.entries(factsOf(i)).map(([k, v]) => `${k}: ${v}`);

// edges are R directed relationships: source i % N to a scattered target,
// no self loops, no duplicates.
function makeEdges() {
  const seen = new Set();
  const edges = [];
  for (let k = 0; edges.length < R; k++) {
    if (k > R * 4 + N) fail(`cannot place ${R} distinct relationships among ${N} entities`);
    const src = k % N;
    let tgt = (src * 7919 + 1 + Math.floor(k / N) * 104729) % N;
    if (tgt === src) tgt = (src + 1) % N;
    const key = `${src}>${tgt}`;
    if (seen.has(key)) continue;
    seen.add(key);
    edges.push([src, tgt]);
  }
  return edges;
}
const EDGES = makeEdges();
const ADJ = Array.from({ length: N }, () => new Set());
for (const [s, t] of EDGES) {
  ADJ[s].add(t);
  ADJ[t].add(s);
}
// twoHopOf is the complete neighbourhood within two relationships (either
// direction), without the start: what both servers must return.
function twoHopOf(i) {
  const out = new Set(ADJ[i]);
  for (const j of ADJ[i]) for (const k of ADJ[j]) out.add(k);
  out.delete(i);
  return out;
}

// Lookups use the same deterministic sample of entities on both sides.
function mulberry32(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = mulberry32(4216);
const SAMPLE = Array.from({ length: SAMPLES + WARMUP }, () => Math.floor(rand() * N));

// ---- Measuring. ----

const quantile = (xs, q) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
};
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function timed(fn) {
  const t0 = performance.now();
  const v = await fn();
  return [performance.now() - t0, v];
}

// latencies runs fn over the sample (the first WARMUP calls untimed) and
// returns p50 and p95 in milliseconds.
async function latencies(fn) {
  const ms = [];
  for (let k = 0; k < SAMPLE.length; k++) {
    const [t] = await timed(() => fn(SAMPLE[k]));
    if (k >= WARMUP) ms.push(t);
  }
  return { p50: quantile(ms, 0.5), p95: quantile(ms, 0.95) };
}

const sameSet = (a, b) => a.size === b.size && [...a].every((x) => b.has(x));

// diskBytes is the apparent size of every file under path.
function diskBytes(path) {
  const st = lstatSync(path);
  if (!st.isDirectory()) return st.size;
  return readdirSync(path).reduce((n, f) => n + diskBytes(join(path, f)), 0);
}

// peakRSS reads the high-water mark of a process's resident set, in bytes
// (Linux only; null elsewhere).
function peakRSS(pid) {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

// ---- The two servers behind one interface. ----

async function connect(name, command, args, env) {
  const client = new Client({ name: "cairn-bench", version: "1.0.0" });
  const transport = new StdioClientTransport({ command, args, env: { ...getDefaultEnvironment(), ...env }, stderr: "pipe" });
  // Keep the tail of the server's stderr for the error message, and drain
  // it: an unread pipe would block the server.
  let stderrTail = "";
  transport.stderr.on("data", (chunk) => {
    stderrTail = (stderrTail + chunk).slice(-4000);
  });
  await client.connect(transport);
  // Record the size of each message the server sends, as it came (the SDK
  // later drops keys its schemas do not know).
  let lastMessageBytes = 0;
  const onmessage = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    lastMessageBytes = Buffer.byteLength(JSON.stringify(msg));
    onmessage(msg, extra);
  };
  // As a host does: list the tools first (the SDK then checks every
  // structured result against its tool's output schema).
  const { tools } = await client.listTools();
  return {
    client,
    tools,
    lastMessageBytes: () => lastMessageBytes,
    pid: transport.pid,
    async call(tool, args) {
      const res = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 600_000 });
      if (res.isError) fail(`${name} ${tool}: ${res.content?.[0]?.text}\n${name} stderr: ${stderrTail}`);
      return res.structuredContent ?? JSON.parse(res.content[0].text);
    },
  };
}

// reference drives @modelcontextprotocol/server-memory: entities are named,
// the name is the id, facts are observation strings.
async function reference(dir) {
  const file = join(dir, "memory.jsonl");
  const s = await connect("reference", process.execPath, [referenceEntry], { MEMORY_FILE_PATH: file });
  const openNodes = (names) => s.call("open_nodes", { names });
  return {
    name: "reference",
    pid: s.pid,
    client: s.client,
    lastMessageBytes: s.lastMessageBytes,
    stats: {},
    diskPath: dir,
    async storeBatch(idx) {
      const res = await s.call("create_entities", {
        entities: idx.map((i) => ({ name: nameOf(i), entityType: "person", observations: observationsOf(i) })),
      });
      if (res.entities.length !== idx.length) fail(`reference create_entities created ${res.entities.length} of ${idx.length}`);
    },
    async relateBatch(edges) {
      const res = await s.call("create_relations", {
        relations: edges.map(([a, b]) => ({ from: nameOf(a), to: nameOf(b), relationType: RELATIONSHIP_TYPE })),
      });
      if (res.relations.length !== edges.length) fail(`reference create_relations created ${res.relations.length} of ${edges.length}`);
    },
    async keyword(i) {
      const res = await s.call("search_nodes", { query: nameOf(i).toLowerCase() });
      if (!res.entities.some((e) => e.name === nameOf(i))) fail(`reference search_nodes did not find ${nameOf(i)}`);
    },
    async openById(i) {
      const res = await openNodes([nameOf(i)]);
      if (res.entities.length !== 1 || res.entities[0].observations.length !== 3) fail(`reference open_nodes ${nameOf(i)}: ${JSON.stringify(res.entities)}`);
    },
    // The reference has no traversal. open_nodes returns the named entities
    // with every relation that has at least one end among them, so a
    // complete 2-hop neighbourhood with each entity's facts takes three
    // calls: the start (its relations give hop 1), hop 1 (their facts, and
    // relations that give hop 2), hop 2 (their facts).
    async twoHop(i) {
      const start = nameOf(i);
      const other = (rels, from) => {
        const out = new Set();
        for (const r of rels) {
          if (from.has(r.from)) out.add(r.to);
          if (from.has(r.to)) out.add(r.from);
        }
        return out;
      };
      const g0 = await openNodes([start]);
      const hop1 = other(g0.relations, new Set([start]));
      hop1.delete(start);
      const g1 = await openNodes([...hop1]);
      const hop2 = other(g1.relations, hop1);
      for (const n of [start, ...hop1]) hop2.delete(n);
      const found = new Set(g1.entities.map((e) => e.name));
      if (hop2.size > 0) {
        const g2 = await openNodes([...hop2]);
        for (const e of g2.entities) found.add(e.name);
      }
      return found;
    },
    expectedTwoHop: (i) => new Set([...twoHopOf(i)].map(nameOf)),
  };
}

// cairn drives `cairn stdio`: the store answers ids, which later calls use.
async function cairn(dir) {
  const dataDir = join(dir, "data");
  // CAIRN_EMBED_PROVIDER, when set, chooses Cairn's embedder (the client
  // passes no other variable of this process's environment).
  const embedder = process.env.CAIRN_EMBED_PROVIDER;
  const s = await connect("cairn", opt.cairn, ["stdio", "--data-dir", dataDir], embedder ? { CAIRN_EMBED_PROVIDER: embedder } : {});
  const tool = (name) => s.tools.find((t) => t.name === name);
  // Tools other engineers are adding: use them when this build has them,
  // and say so when it does not.
  const batchRelationships = Boolean(tool("create_relationships"));
  if (!batchRelationships) log("cairn: no create_relationships tool in this build: one create_relationship call per relationship");
  // Text search: retrieve_entities with query, or a search_entities tool
  // (the issue leaves the choice open).
  const textQuery = ["retrieve_entities", "search_entities"].find((n) => tool(n)?.inputSchema?.properties?.query) ?? null;
  const queryTakesLimit = Boolean(textQuery && tool(textQuery).inputSchema.properties.limit);
  if (!textQuery) log("cairn: no text search (query) in this build: keyword lookup by query_graph pattern contains on name");

  const ids = new Array(N);
  const idx = new Map();
  const remember = (i, id) => {
    ids[i] = id;
    idx.set(id, i);
  };
  const stats = { batch_relationships: batchRelationships, text_query: textQuery, ids_missing_from_store: 0, id_lookup_ms: 0 };
  const idsOf = (res) => (res.entities ?? []).map((e) => e.id ?? e.entity_id);

  return {
    name: "cairn",
    pid: s.pid,
    client: s.client,
    lastMessageBytes: s.lastMessageBytes,
    stats,
    diskPath: dataDir,
    async storeBatch(batch) {
      const res = await s.call("store", {
        entities: batch.map((i) => ({ entity_type: "person", name: nameOf(i), ...factsOf(i) })),
      });
      const got = res.entities ?? [];
      got.forEach((e, k) => remember(batch[k], e.entity_id));
      return batch.slice(got.length);
    },
    // recoverIds looks up, by name, the entities whose ids a store answer
    // left out (its response budget cut the list): a client needs them to
    // create relationships. Timed apart from the store.
    async recoverIds(missing) {
      stats.ids_missing_from_store += missing.length;
      const [ms] = await timed(async () => {
        for (const i of missing) {
          const res = await s.call("retrieve_entity_by_identifier", { identifier: nameOf(i), entity_type: "person" });
          if (res.entities?.length !== 1) fail(`cairn retrieve_entity_by_identifier ${nameOf(i)}: ${JSON.stringify(res.entities)}`);
          remember(i, res.entities[0].id);
        }
      });
      stats.id_lookup_ms += ms;
    },
    async relateBatch(edges) {
      const rel = ([a, b]) => ({ relationship_type: RELATIONSHIP_TYPE, source_entity_id: ids[a], target_entity_id: ids[b] });
      if (batchRelationships) {
        const res = await s.call("create_relationships", { relationships: edges.map(rel) });
        // Each relationship has its own result; one that failed fails the
        // benchmark.
        const results = res.results ?? [];
        const failed = results.filter((r) => r.error || r.status === "failed");
        if (failed.length) fail(`cairn create_relationships: ${failed.length} failed, e.g. ${JSON.stringify(failed[0])}`);
        if (results.length !== edges.length) fail(`cairn create_relationships answered ${results.length} results for ${edges.length} relationships`);
        return;
      }
      for (const e of edges) await s.call("create_relationship", rel(e));
    },
    async keyword(i) {
      const q = nameOf(i).toLowerCase();
      const res = textQuery
        ? await s.call(textQuery, { query: q, ...(queryTakesLimit ? { limit: 10 } : {}) })
        : await s.call("query_graph", { queryType: "pattern", pattern: { field: "name", contains: q } });
      if (!idsOf(res).includes(ids[i])) fail(`cairn keyword lookup did not find ${nameOf(i)}: ${JSON.stringify(res).slice(0, 500)}`);
    },
    async openById(i) {
      const res = await s.call("retrieve_entity_snapshot", { entity_id: ids[i] });
      if (res.snapshot?.company !== factsOf(i).company) fail(`cairn retrieve_entity_snapshot ${nameOf(i)}: ${JSON.stringify(res.snapshot)}`);
    },
    async openByName(i) {
      const res = await s.call("retrieve_entity_by_identifier", { identifier: nameOf(i) });
      if (!idsOf(res).includes(ids[i])) fail(`cairn retrieve_entity_by_identifier ${nameOf(i)}: ${JSON.stringify(res.entities)}`);
    },
    // One retrieve_related_entities call with max_hops 2 (entities with
    // their snapshots), following meta.next_cursor when the response budget
    // cut the list.
    async twoHop(i) {
      const found = new Set();
      let cursor;
      for (let page = 0; ; page++) {
        const args = { entity_id: ids[i], max_hops: 2 };
        if (cursor) args.cursor = cursor;
        const res = await s.call("retrieve_related_entities", args);
        if (res.truncated) fail(`cairn retrieve_related_entities capped the neighbourhood of ${nameOf(i)}`);
        for (const e of res.entities ?? []) if (e.id !== ids[i]) found.add(e.id);
        cursor = res.meta?.truncated ? res.meta.next_cursor : undefined;
        if (!cursor) break;
        if (page > 100) fail("cairn retrieve_related_entities: more than 100 pages");
      }
      return found;
    },
    expectedTwoHop: (i) => new Set([...twoHopOf(i)].map((j) => ids[j])),
  };
}

// ---- One side of one round. ----

async function runSide(kind, round) {
  const dir = mkdtempSync(join(tmpdir(), `cairn-bench-${kind}-`));
  let side;
  try {
    side = kind === "cairn" ? await cairn(dir) : await reference(dir);
    const f = {};
    log(`round ${round}, ${kind}: storing ${N} entities in batches of ${BATCH}`);

    const batchMs = [];
    let missing = [];
    for (let start = 0; start < N; start += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, N - start) }, (_, k) => start + k);
      const [ms, left] = await timed(() => side.storeBatch(batch));
      batchMs.push(ms);
      if (left?.length) missing.push(...left);
    }
    const storeMs = batchMs.reduce((a, b) => a + b, 0);
    f.store_entities_per_s = (N / storeMs) * 1000;
    const tenth = Math.max(1, Math.floor(batchMs.length / 10));
    f.store_batch_first_tenth_ms = median(batchMs.slice(0, tenth));
    f.store_batch_last_tenth_ms = median(batchMs.slice(-tenth));
    if (side.recoverIds && missing.length) {
      log(`round ${round}, ${kind}: the store answers left out ${missing.length} ids; looking them up by name`);
      await side.recoverIds(missing);
    }

    log(`round ${round}, ${kind}: creating ${R} relationships in batches of ${BATCH}`);
    let relMs = 0;
    for (let start = 0; start < EDGES.length; start += BATCH) {
      const [ms] = await timed(() => side.relateBatch(EDGES.slice(start, start + BATCH)));
      relMs += ms;
    }
    f.relationships_per_s = (EDGES.length / relMs) * 1000;

    log(`round ${round}, ${kind}: reads, ${SAMPLES} samples each`);
    f.keyword = await latencies((i) => side.keyword(i));
    f.open_by_id = await latencies((i) => side.openById(i));
    if (side.openByName) f.open_by_name = await latencies((i) => side.openByName(i));
    f.two_hop = await latencies(async (i) => {
      const got = await side.twoHop(i);
      const want = side.expectedTwoHop(i);
      if (!sameSet(got, want)) fail(`${kind} 2-hop of ${nameOf(i)}: ${got.size} entities, want ${want.size}`);
    });
    f.two_hop_mean_size = SAMPLE.reduce((n, i) => n + twoHopOf(i).size, 0) / SAMPLE.length;

    const list = await side.client.request({ method: "tools/list" }, ListToolsResultSchema);
    f.tools_list_bytes = side.lastMessageBytes();
    f.tools_count = list.tools.length;
    f.tools_list = await latencies(() => side.client.listTools());

    f.peak_rss_bytes = peakRSS(side.pid);
    Object.assign(f, side.stats);
    await side.client.close();
    await waitForExit(side.pid);
    f.disk_bytes = diskBytes(side.diskPath);
    return f;
  } finally {
    // On failure too: end the server before removing its storage.
    await side?.client.close();
    if (side) await waitForExit(side.pid);
    rmSync(dir, { recursive: true, force: true });
  }
}

// waitForExit waits (up to 10 s) until the server process has exited, so
// that its files are final when measured.
async function waitForExit(pid) {
  for (let k = 0; k < 200; k++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

// ---- The table. ----

// Each row: what it measures, how to read a round's figure for one side,
// its kind (rate: higher is better; ms and bytes: lower is better) and how
// each side computes it. The advantage is Cairn ÷ reference for rates and
// reference ÷ Cairn otherwise, so that above 1 always favours Cairn.
function rows({ batch_relationships: batchRel, text_query: textQuery }) {
  const lat = (label, key, how) => [
    [`${label}, p50`, (f) => f[key]?.p50, "ms", how],
    [`${label}, p95`, (f) => f[key]?.p95, "ms", ""],
  ];
  return [
    [`bulk store, entities/s (3 facts each, batches of ${BATCH})`, (f) => f.store_entities_per_s, "rate",
      "Cairn `store` with `entities`; reference `create_entities` with observations"],
    [`one batch of ${BATCH}, first tenth of the load`, (f) => f.store_batch_first_tenth_ms, "ms", "median of those batches"],
    [`one batch of ${BATCH}, last tenth of the load`, (f) => f.store_batch_last_tenth_ms, "ms", "median of those batches"],
    ["relationships/s", (f) => f.relationships_per_s, "rate",
      batchRel ? `Cairn \`create_relationships\`, reference \`create_relations\`, ${BATCH} per call`
        : `Cairn one \`create_relationship\` per call (no batch tool in this build); reference \`create_relations\`, ${BATCH} per call`],
    ...lat('keyword lookup ("quill 004216")', "keyword",
      textQuery ? `Cairn \`${textQuery}\` with \`query\`; reference \`search_nodes\``
        : "Cairn `query_graph` pattern `contains` on name (no text search in this build); reference `search_nodes`"),
    ...lat("open one entity by id", "open_by_id", "Cairn `retrieve_entity_snapshot`; reference `open_nodes` (its id is the name)"),
    ...lat("open one entity by name", "open_by_name", "Cairn `retrieve_entity_by_identifier`; reference `open_nodes` (same figure as above)"),
    ...lat("complete 2-hop neighbourhood, with facts", "two_hop",
      "Cairn one `retrieve_related_entities` max_hops 2 (+ cursor pages if cut); reference three `open_nodes` (start, hop 1, hop 2)"),
    ["`tools/list` size", (f) => f.tools_list_bytes, "bytes", "bytes of the JSON-RPC response"],
    ...lat("`tools/list` time", "tools_list", "the SDK's `listTools()`, which also compiles every output schema, as hosts call it"),
    ["data on disk after the load", (f) => f.disk_bytes, "bytes", "Cairn its data directory; reference its JSONL file (after the server exits)"],
    ["peak RSS of the server process", (f) => f.peak_rss_bytes, "bytes", "VmHWM from /proc at the end of the round"],
  ];
}

// digits prints v with about three significant digits.
const digits = (v) => (v >= 1000 ? Math.round(v).toLocaleString("en-US") : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));

// cell formats the median of xs in a unit chosen for it, with the range
// across rounds in the same unit.
function cell(xs, kind) {
  const m = median(xs);
  let scale = 1;
  let suffix = { rate: "/s", ms: " ms", times: "×" }[kind] ?? "";
  if (kind === "bytes") [scale, suffix] = m >= 1 << 20 ? [1 << 20, " MB"] : [1024, " KB"];
  const f = (v) => digits(v / scale);
  const range = xs.length > 1 && Math.min(...xs) !== Math.max(...xs) ? ` (${f(Math.min(...xs))}–${f(Math.max(...xs))})` : "";
  return `${f(m)}${suffix}${range}`;
}

function table(results, meta) {
  const lines = [
    `| measure (N = ${N.toLocaleString("en-US")} entities, ${EDGES.length.toLocaleString("en-US")} relationships) | Cairn | reference | Cairn advantage | how |`,
    "|---|---|---|---|---|",
  ];
  const figures = [];
  for (const [label, get, kind, how] of rows(results.cairn[0])) {
    const c = results.cairn.map(get);
    // The reference has no open-by-name other than open_nodes: its open
    // figure stands for both rows.
    const r = results.reference.map((f) => get({ ...f, open_by_name: f.open_by_id }));
    if ([...c, ...r].some((v) => v == null || Number.isNaN(v))) {
      lines.push(`| ${label} | ${c.every((v) => v != null) ? cell(c, kind) : "n/a"} | ${r.every((v) => v != null) ? cell(r, kind) : "n/a"} | n/a | ${how} |`);
      continue;
    }
    const adv = c.map((cv, k) => (kind === "rate" ? cv / r[k] : r[k] / cv));
    figures.push({ measure: label, cairn: median(c), reference: median(r), advantage: median(adv) });
    lines.push(`| ${label} | ${cell(c, kind)} | ${cell(r, kind)} | **${cell(adv, "times")}** | ${how} |`);
  }
  const c0 = results.cairn[0];
  const extra = [];
  if (results.cairn.some((f) => f.ids_missing_from_store > 0)) {
    const missing = median(results.cairn.map((f) => f.ids_missing_from_store));
    const secs = median(results.cairn.map((f) => f.id_lookup_ms)) / 1000;
    extra.push(`Cairn's \`store\` answers left out ${missing.toLocaleString("en-US")} of ${N.toLocaleString("en-US")} entity ids (cut by the response budget); ` +
      `the benchmark looked each up with \`retrieve_entity_by_identifier\` before creating relationships (${secs.toFixed(1)} s, not counted above).`);
  }
  extra.push(`A 2-hop neighbourhood holds ${c0.two_hop_mean_size.toFixed(1)} entities on average; both sides' answers are checked against the expected set. ` +
    `Cairn lists ${c0.tools_count} tools, the reference ${results.reference[0].tools_count}.`);
  const md = [
    `${meta.rounds} interleaved round${meta.rounds > 1 ? "s" : ""} (reference first in odd rounds, Cairn first in even ones), each on fresh storage. ` +
      `Each figure is the median of the rounds, with (min–max) across rounds; latencies are the p50 and p95 of ${SAMPLES} calls per round after ${WARMUP} untimed. ` +
      "Cairn advantage is Cairn ÷ reference for throughput and reference ÷ Cairn for times and sizes, per round: above 1 Cairn is ahead.",
    "",
    ...lines,
    "",
    ...extra.map((e) => `- ${e}`),
    `- ${meta.when}; ${meta.label ? meta.label + "; " : ""}Node.js ${process.versions.node}, ${meta.cpus}; ` +
      `@modelcontextprotocol/server-memory ${meta.reference}, @modelcontextprotocol/sdk ${meta.sdk}.`,
    "",
  ].join("\n");
  return { md, figures };
}

async function main() {
  const meta = {
    when: new Date().toISOString().slice(0, 10),
    label: opt.label,
    rounds: ROUNDS,
    cpus: `${availableParallelism()} × ${cpus()[0]?.model?.trim() ?? "CPU"}`,
    reference: versionOf("@modelcontextprotocol/server-memory"),
    sdk: versionOf("@modelcontextprotocol/sdk"),
  };
  const results = { cairn: [], reference: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 === 1 ? ["reference", "cairn"] : ["cairn", "reference"];
    for (const kind of order) results[kind].push(await runSide(kind, round));
  }
  const { md, figures } = table(results, meta);
  process.stdout.write(md);
  if (opt.markdown) writeFileSync(opt.markdown, md);
  if (opt.json) {
    writeFileSync(opt.json, JSON.stringify({ entities: N, relationships: EDGES.length, batch: BATCH, samples: SAMPLES, meta, figures, results }, null, 2) + "\n");
  }
}

main().catch((err) => {
  process.stderr.write(`bench: ${err?.stack ?? err}\n`);
  process.exit(1);
});
