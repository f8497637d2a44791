// stress-clients.mjs starts `cairn serve` on a new embedded store and
// drives it with many clients of the official TypeScript SDK at once, over
// Streamable HTTP, as the agents of one user would: each client loops over
// store (50 people), create_relationships (20), save_memory,
// search_memory, get_user_context with a topic and retrieve_entities
// with a query, for a fixed time, or until each has made --rounds calls
// (all from this machine's address, so the server's per-address
// connection limit is lifted). It prints, per tool
// and for connecting, the calls made,
// those that failed, and p50 / p95 / max latency in ms, and exits 1 if any
// call failed. See docs/performance.md, "Many clients at once".
//
//   node stress-clients.mjs --cairn PATH [--clients 16] [--seconds 40]
//       [--rounds N] [--database-url postgres://…]
//
// --rounds 12 makes every client call every tool twice, however fast the
// machine: the smoke test's run, which checks the script and the server
// under a few clients, not their figures (a loop for a fixed time takes
// whatever CPU it is given for that long).
//
// With --database-url the server runs on that PostgreSQL database (which
// should be empty: the script stores into it) instead of a new embedded
// store.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const { values: opt } = parseArgs({
  options: { cairn: { type: "string" }, clients: { type: "string", default: "16" }, seconds: { type: "string", default: "40" }, rounds: { type: "string", default: "0" }, "database-url": { type: "string" } },
});
if (!opt.cairn) {
  console.error("usage: node stress-clients.mjs --cairn PATH [--clients N] [--seconds S] [--rounds N]");
  process.exit(2);
}
const C = Number(opt.clients), secs = Number(opt.seconds), rounds = Number(opt.rounds);
if (!(C >= 1) || !(secs > 0) || !(rounds >= 0) || !Number.isInteger(rounds)) {
  console.error("--clients must be at least 1, --seconds above 0 and --rounds a whole number (0: no limit)");
  process.exit(2);
}
const key = "stress-owner-key-" + Math.random().toString(36).slice(2).padEnd(24, "x");

const port = await new Promise((resolve) => {
  const s = createServer().listen(0, "127.0.0.1", () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});
const dir = mkdtempSync(join(tmpdir(), "cairn-stress-"));
const server = spawn(opt.cairn, ["serve", "--data-dir", join(dir, "data"), "--addr", `127.0.0.1:${port}`, "--rate-limit", "0", "--rate-limit-store", "0", "--max-conns-per-client", "0"], {
  env: { ...process.env, CAIRN_OWNER_KEY: key, ...(opt["database-url"] ? { CAIRN_DATABASE_URL: opt["database-url"] } : {}) },
  stdio: ["ignore", "ignore", "pipe"],
});
let stderrTail = "";
server.stderr.on("data", (d) => (stderrTail = (stderrTail + d).slice(-4000)));
const base = `http://127.0.0.1:${port}`;
for (let i = 0; ; i++) {
  try {
    if ((await fetch(`${base}/healthz`)).ok) break;
  } catch {}
  if (i > 300) {
    console.error(`cairn serve did not come up:\n${stderrTail}`);
    process.exit(1);
  }
  await new Promise((r) => setTimeout(r, 100));
}

const stats = {}, errs = {};
function record(k, ms, err) {
  (stats[k] ??= []).push(ms);
  if (!err) return;
  errs[k] = (errs[k] ?? 0) + 1;
  if (errs[k] <= 2) console.error(`${k}: ${String(err).slice(0, 300)}`);
}

async function client(w) {
  const c = new Client({ name: `stress-${w}`, version: "1.0.0" });
  const t0 = performance.now();
  try {
    await c.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
    await c.listTools();
    record("connect", performance.now() - t0);
  } catch (e) {
    record("connect", performance.now() - t0, e);
    return;
  }
  const call = async (k, name, args) => {
    const t0 = performance.now();
    let res, err;
    try {
      res = await c.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
      if (res.isError) err = res.content?.[0]?.text;
    } catch (e) {
      err = e;
    }
    record(k, performance.now() - t0, err);
    return res?.structuredContent;
  };
  const ids = [];
  const end = Date.now() + secs * 1000;
  for (let i = 0; Date.now() < end && (rounds === 0 || i < rounds); i++) {
    switch ((i + w) % 6) {
      case 0: {
        const entities = Array.from({ length: 50 }, (_, k) => ({ entity_type: "person", name: `W${w} P${i}-${k}`, company: `Co ${k % 7}`, notes: `client ${w} item ${i} ${k}` }));
        const res = await call("store", "store", { entities });
        for (const e of res?.entities ?? []) ids.push(e.entity_id);
        break;
      }
      case 1:
        if (ids.length > 20) {
          const relationships = Array.from({ length: 20 }, (_, k) => ({ relationship_type: "REFERS_TO", source_entity_id: ids[(i * 7 + k) % ids.length], target_entity_id: ids[(i * 13 + k * 3 + 1) % ids.length] }));
          await call("create_relationships", "create_relationships", { relationships });
        }
        break;
      case 2:
        await call("save_memory", "save_memory", { text: `client ${w} remembers thing ${i} about coffee and trains`, collection: "notes" });
        break;
      case 3:
        await call("search_memory", "search_memory", { query: "coffee trains", collection: "notes", limit: 5 });
        break;
      case 4:
        await call("get_user_context", "get_user_context", { topic: "coffee" });
        break;
      default:
        await call("retrieve_entities", "retrieve_entities", { query: `w${w} p${Math.max(1, i - 6)}`, limit: 5 });
    }
  }
  await c.close();
}

let failed = 0;
try {
  await Promise.all(Array.from({ length: C }, (_, w) => client(w)));
} finally {
  server.kill("SIGTERM");
  await new Promise((r) => server.once("exit", r));
  rmSync(dir, { recursive: true, force: true });
}
console.log(rounds ? `${C} clients, ${rounds} calls each (at most ${secs} s); latencies in ms` : `${C} clients for ${secs} s; latencies in ms`);
console.log("| tool | calls | failed | p50 | p95 | max |");
console.log("|---|---|---|---|---|---|");
for (const [k, xs] of Object.entries(stats).sort()) {
  xs.sort((a, b) => a - b);
  const q = (p) => xs[Math.min(xs.length - 1, Math.floor(xs.length * p))].toFixed(0);
  console.log(`| ${k} | ${xs.length} | ${errs[k] ?? 0} | ${q(0.5)} | ${q(0.95)} | ${xs[xs.length - 1].toFixed(0)} |`);
  failed += errs[k] ?? 0;
}
if (failed) {
  console.error(`${failed} calls failed; the server's stderr ends with:\n${stderrTail}`);
  process.exit(1);
}
