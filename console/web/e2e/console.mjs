// The console's end-to-end scenario, in a real browser: playwright-core
// drives Debian's Chromium against a running `cairn serve` that
// cmd/cairn/console_e2e_test.go started and filled with generated data.
//
//   CAIRN_URL        the server's root, e.g. http://127.0.0.1:40123
//   OWNER_KEY        the owner's key
//   AGENT_KEY        a key of AGENT_NAME, whose rules let it read entities,
//   AGENT_NAME       memories, the graph, sources and the profile
//   CHROMIUM         the browser (default /usr/bin/chromium)
//   OUT_DIR          where the screenshots go
//
// It signs in, finds an entity, expands its graph, re-reads it as of a
// date, opens a field's provenance, searches a memory, previews a context,
// and as the owner denies the agent a type and sees it disappear from the
// agent's view. Throughout, it checks that no request carries a key in its
// URL, that no request leaves the server's origin, and that the page logs
// no error (a Content-Security-Policy violation is one). Exit status 0 when
// every step passed; otherwise the failing step is on stderr.
import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const env = (k, d) => {
  const v = process.env[k] ?? d;
  if (v === undefined) throw new Error(`${k} is not set`);
  return v;
};
const base = env("CAIRN_URL").replace(/\/$/, "");
const ownerKey = env("OWNER_KEY");
const agentKey = env("AGENT_KEY");
const agentName = env("AGENT_NAME");
const outDir = env("OUT_DIR");
mkdirSync(outDir, { recursive: true });

const origin = new URL(base).origin;
const problems = [];
const apiRequests = [];
let step = "start";

function check(cond, what) {
  if (!cond) throw new Error(`${step}: ${what}`);
}

const browser = await chromium.launch({
  executablePath: env("CHROMIUM", "/usr/bin/chromium"),
  headless: true,
  // As root (CI containers) Chromium needs --no-sandbox.
  args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run"],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
const page = await context.newPage();
page.setDefaultTimeout(15000);

page.on("request", (req) => {
  const url = req.url();
  if (url.includes(ownerKey) || url.includes(agentKey)) problems.push(`a key in a URL: ${url}`);
  if (!url.startsWith("data:") && new URL(url).origin !== origin) problems.push(`a request off the server's origin: ${url}`);
  if (url.includes("/mcp/call/") || url.includes("/console/api/")) {
    const auth = req.headers()["authorization"] ?? "";
    if (!auth.startsWith("Bearer ")) problems.push(`an API request without a bearer key: ${url}`);
    apiRequests.push({ url, body: req.postData() ?? "" });
  }
});
page.on("console", (msg) => {
  // A failed request the page answers itself (a 4xx shown to the user) is
  // logged by Chromium as "Failed to load resource"; everything else at
  // error level, such as a CSP violation, is a problem.
  if (msg.type() === "error" && !/Failed to load resource: the server responded with a status of (4\d\d)/.test(msg.text())) {
    problems.push(`console error: ${msg.text()}`);
  }
});
page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));

async function shot(name) {
  await page.screenshot({ path: join(outDir, name + ".png"), fullPage: false });
}

async function signIn(key) {
  await page.goto(base + "/");
  check(page.url().startsWith(base + "/console/"), `/ should redirect to /console/, got ${page.url()}`);
  const input = page.getByLabel("API key");
  await input.waitFor();
  check(await input.evaluate((el) => el === document.activeElement), "the key field should have the focus");
  await page.keyboard.type(key);
  await page.keyboard.press("Enter");
  await page.locator("#sign-out").waitFor();
  const stored = await page.evaluate(() => ({ session: sessionStorage.getItem("cairn.key"), local: localStorage.length, cookie: document.cookie }));
  check(stored.session === key && stored.local === 0 && stored.cookie === "", "the key must be in sessionStorage only");
}

async function signOut() {
  await page.locator("#sign-out").click();
  await page.getByLabel("API key").waitFor();
  check((await page.evaluate(() => sessionStorage.getItem("cairn.key"))) === null, "sign-out must forget the key");
}

async function searchEntity(q) {
  await page.goto(base + "/console/#/graph");
  await page.getByLabel("Find an entity").fill(q);
  await page.getByRole("button", { name: "Search" }).click();
  await page.locator(".results").locator("button.hit, .empty, .error").first().waitFor();
  return page.locator(".results button.hit").allTextContents();
}

async function graphNodes() {
  await page.locator("#cy[data-nodes]").waitFor();
  return page.locator(".node-list button.node").allTextContents();
}

try {
  // --- an agent's view before the owner's change ---
  step = "agent signs in";
  await signIn(agentKey);
  const navAgent = await page.locator("nav a").allTextContents();
  check(!navAgent.some((t) => /Agents|Consent|Audit|Contradictions/.test(t)), `an agent's key must not be offered owner views, got ${navAgent}`);
  step = "agent opens an owner view";
  await page.goto(base + "/console/#/agents");
  await page.locator('[data-code="FORBIDDEN"]').waitFor();
  const direct = await page.evaluate(async (k) => (await fetch("/console/api/agents", { headers: { Authorization: "Bearer " + k } })).status, agentKey);
  check(direct === 403, `GET /console/api/agents with the agent's key should answer 403, got ${direct}`);
  step = "agent sees invoices";
  const before = await searchEntity("INV-1001");
  check(before.some((t) => t.includes("INV-1001")), `the agent should find INV-1001 before the deny, got ${before}`);
  await page.goto(base + "/console/#/graph?entity=" + encodeURIComponent(process.env.COMPANY_ID) + "&hops=1");
  const agentBefore = await graphNodes();
  check(agentBefore.some((t) => t.includes("INV-1001")), `the agent's graph of the company should hold INV-1001, got ${agentBefore}`);
  await signOut();

  // --- the owner ---
  step = "owner signs in";
  await signIn(ownerKey);
  const navOwner = await page.locator("nav a").allTextContents();
  check(navOwner.includes("Consent") && navOwner.includes("Agents & keys"), `the owner should see the owner views, got ${navOwner}`);

  step = "find an entity";
  const hits = await searchEntity("Ada");
  check(hits.some((t) => t.includes("Ada Lovelace")), `searching Ada should find Ada Lovelace, got ${hits}`);
  await page.locator(".results button.hit", { hasText: "Ada Lovelace" }).click();
  let nodes = await graphNodes();
  check(nodes.length >= 2, `Ada's neighbourhood should have at least 2 entities, got ${nodes}`);
  const oneHop = nodes.length;

  step = "two hops";
  await page.getByLabel("Depth").selectOption("2");
  await page.waitForFunction((n) => document.querySelectorAll(".node-list button.node").length > n, oneHop);
  nodes = await graphNodes();
  check(nodes.some((t) => t.includes("INV-1001")), `two hops from Ada should reach INV-1001, got ${nodes}`);
  await page.getByLabel("Depth").selectOption("1");
  await page.waitForFunction((n) => document.querySelectorAll(".node-list button.node").length === n, oneHop);

  step = "expand a node (keyboard)";
  const company = page.locator(".node-list button.node", { hasText: "Analytical Engines" });
  await company.focus();
  await page.keyboard.press("Enter");
  await page.locator(".details h2", { hasText: "Analytical Engines" }).waitFor();
  await page.locator("#expand").focus();
  await page.keyboard.press("Enter");
  await page.waitForFunction((n) => document.querySelectorAll(".node-list button.node").length > n, oneHop);
  nodes = await graphNodes();
  check(nodes.some((t) => t.includes("INV-1001")), `expanding the company should add INV-1001, got ${nodes}`);
  check(Number(await page.locator("#cy").getAttribute("data-edges")) >= 2, "the graph should draw the edges");
  // Each entity type on screen has a colour of its own (a hash of ten
  // colours gave person and company the same one).
  const swatches = await page.locator(".swatch").evaluateAll((els) => els.map((e) => getComputedStyle(e).backgroundColor));
  check(swatches.length >= 3 && new Set(swatches).size === swatches.length, `each entity type on screen should have its own colour, got ${swatches}`);
  check(!/\b1 (entities|hops)\b/.test(await page.locator("main").textContent()), "counts of one should be singular");
  await shot("graph");

  step = "filter by entity type";
  await page.locator('fieldset input[name="type"][value="invoice"]').uncheck();
  nodes = await graphNodes();
  check(!nodes.some((t) => t.includes("INV-1001")), `hiding invoices should hide INV-1001, got ${nodes}`);
  await page.locator('fieldset input[name="type"][value="invoice"]').check();

  step = "as of a date";
  const adaURL = page.url();
  await page.getByLabel("As of").fill("2020-01-01");
  await page.getByLabel("As of").dispatchEvent("change");
  const err = page.locator(".status .error");
  await err.waitFor();
  const errText = await err.textContent();
  check(/ENTITY_NOT_FOUND/.test(errText) && /trace_[0-9a-f]+/.test(errText), `as of 2020 Ada did not exist: the error should show its code and trace id, got ${errText}`);
  check(apiRequests.some((r) => r.url.endsWith("/retrieve_entity_snapshot") && r.body.includes('"at":"2020-01-01T23:59:59Z"')), "the as-of read should send at");
  await shot("graph-as-of");
  await page.goto(adaURL.replace(/&at=[^&]*/, ""));
  await graphNodes();

  step = "entity page and provenance";
  await page.locator(".node-list button.node", { hasText: "Ada Lovelace" }).click();
  await page.getByRole("link", { name: "Open entity page" }).click();
  await page.locator("h1", { hasText: "Ada Lovelace" }).waitFor();
  await page.locator('button[data-field="email"]').click();
  const chain = page.locator("#provenance ol.chain");
  await chain.waitFor();
  const chainText = await chain.textContent();
  check(/Observation obs_/.test(chainText) && /Source src_/.test(chainText) && chainText.includes("ada@example.com"), `provenance should trace value → observation → source, got ${chainText}`);
  await page.locator("td", { hasText: "correction" }).first().waitFor();
  await page.locator("#merges [data-merged]", { hasText: "Ada King" }).waitFor();
  await page.getByRole("heading", { name: /Timeline/ }).waitFor();
  check(!/\b1 observations\b/.test(await page.locator("main").textContent()), "one observation should be singular");
  await shot("entity");

  step = "search a memory";
  await page.goto(base + "/console/#/memories");
  await page.getByLabel("Search", { exact: true }).fill("tea");
  await page.getByRole("button", { name: "Search" }).click();
  await page.locator(".memory").first().waitFor();
  const mem = await page.locator(".memory").first().textContent();
  check(mem.includes("tea") && /Why:/.test(mem), `the memory search should find the tea note and say why, got ${mem}`);
  await shot("memories");

  step = "context preview";
  await page.goto(base + "/console/#/context");
  const defaultBudget = await page.getByLabel("Budget (tokens)").inputValue();
  check(defaultBudget === "2000", `the preview's budget should default to the tool's 2000 tokens, got ${defaultBudget}`);
  await page.getByLabel("Topic").fill("Ada");
  await page.getByRole("button", { name: "Preview" }).click();
  await page.locator("#tokens-used").waitFor();
  check(Number(await page.locator("#tokens-used").textContent()) > 0, "the context preview should count tokens");
  await shot("context");

  step = "agents and keys";
  await page.goto(base + "/console/#/agents");
  await page.locator(`article.agent[data-agent="${agentName}"]`).waitFor();
  await shot("agents");

  step = "deny the agent invoices";
  await page.goto(base + "/console/#/consent");
  await page.getByLabel("Agent").selectOption(agentName);
  await page.getByLabel("Resource").fill("entities/invoice");
  await page.getByLabel("Effect").selectOption("deny");
  await page.getByRole("button", { name: "Preview" }).click();
  const changed = page.locator(".preview .decision.changed");
  await changed.first().waitFor();
  const row = await page.locator(".preview tr", { has: page.locator("code", { hasText: /^entities\/invoice$/ }) }).textContent();
  check(/allow.*deny/.test(row), `the preview should show entities/invoice going from allow to deny, got ${row}`);
  await shot("consent-preview");
  await page.locator("#apply-rule").click();
  await page.locator("td code", { hasText: "entities/invoice" }).waitFor();
  await shot("consent");

  step = "audit log";
  await page.goto(base + `/console/#/audit?agent=${agentName}&decision=allow`);
  await page.locator("table tbody tr").first().waitFor();
  await shot("audit");
  // The whole log is more than one answer's budget holds: the view offers
  // older records whenever the server cut the page short, not only when
  // it holds as many as were asked for.
  await page.goto(base + "/console/#/audit");
  await page.locator("table tbody tr").first().waitFor();
  const shown = await page.locator("table tbody tr").count();
  const older = page.getByRole("button", { name: "Older records" });
  check((await older.count()) === 1, `the audit log should offer older records after ${shown}`);
  await older.click();
  await page.waitForFunction((n) => document.querySelectorAll("table tbody tr").length > n, shown);

  step = "contradictions";
  await page.goto(base + "/console/#/review");
  const contradiction = page.locator("article.contradiction").first();
  await contradiction.waitFor();
  check((await contradiction.textContent()).includes("charles@engine.example"), "the contradiction should show the claimed value");
  await shot("contradictions");

  step = "phone";
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(base + "/console/#/graph?entity=" + encodeURIComponent(process.env.COMPANY_ID));
  await graphNodes();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 1, `the graph view should fit a phone's width, it overflows by ${overflow}px`);
  await shot("graph-phone");
  await page.setViewportSize({ width: 1280, height: 800 });
  await signOut();

  // --- the agent again: invoices are gone ---
  step = "the agent no longer sees invoices";
  await signIn(agentKey);
  const after = await searchEntity("INV-1001");
  // With the sentence model, a search no word matches ranks by meaning, so
  // other entities may come back: none of them may be an invoice.
  check(!after.some((t) => t.includes("INV-1001")), `after the deny the agent must not find INV-1001, got ${after}`);
  check((await page.locator('.results .badge[data-type="invoice"]').count()) === 0, "after the deny the agent must find no invoice at all");
  await page.goto(base + "/console/#/graph?entity=" + encodeURIComponent(process.env.COMPANY_ID) + "&hops=1");
  const agentAfter = await graphNodes();
  check(agentAfter.length > 0 && !agentAfter.some((t) => t.includes("INV-1001")), `the agent's graph must lose INV-1001, got ${agentAfter}`);
  await shot("agent-after-deny");

  step = "end";
  check(apiRequests.length > 0, "the console should have called the service");
  if (problems.length) throw new Error("problems seen during the run:\n  " + problems.join("\n  "));
  console.log(`console e2e: passed; ${apiRequests.length} API requests, none with a key in its URL; screenshots in ${outDir}`);
} catch (e) {
  await shot("failure").catch(() => undefined);
  console.error(`console e2e: failed at ${step}: ${e.message}`);
  if (problems.length) console.error("also seen:\n  " + problems.join("\n  "));
  process.exitCode = 1;
} finally {
  await browser.close();
}
