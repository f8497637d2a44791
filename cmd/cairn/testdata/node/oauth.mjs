// A host connecting to Cairn by URL alone, as the MCP authorization
// specification has it: the official TypeScript SDK's OAuth client support
// discovers the authorization server from the 401, registers, and sends the
// user to the consent page, which playwright-core fills and approves in
// Debian's Chromium; the client then lists tools and reads what was granted
// and no more. After its access token expires it refreshes; after the
// owner disconnects it in the console's owner view, its next call is
// refused. cmd/cairn/oauth_e2e_test.go runs it against the built binary.
//
//   MCP_URL          the server's /mcp
//   OWNER_KEY        the owner's key, to approve on the consent page
//   PLAYWRIGHT_CORE  the entry point of playwright-core (console/web's)
//   CHROMIUM         the browser (default /usr/bin/chromium)
//   OUT_DIR          where the screenshots go
//   EXPIRY_WAIT_MS   how long to wait for the access token to expire
//
// It prints one JSON report on stdout; a failed step exits 1 with it on
// stderr.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { join } from "node:path";
import { mkdirSync } from "node:fs";

const env = (k, d) => {
  const v = process.env[k] ?? d;
  if (v === undefined) throw new Error(`${k} is not set`);
  return v;
};
const mcpURL = new URL(env("MCP_URL"));
const ownerKey = env("OWNER_KEY");
const outDir = env("OUT_DIR");
mkdirSync(outDir, { recursive: true });
const { chromium } = await import(env("PLAYWRIGHT_CORE"));

let step = "start";
const fail = (what) => {
  throw new Error(`${step}: ${what}`);
};

// The callback never has to answer: the browser's navigation to it is
// intercepted, which is where a host's own redirect handler would run.
const redirectUrl = "http://127.0.0.1:61999/oauth/callback";

// An in-memory OAuthClientProvider, as a host implements it.
const provider = {
  saved: { tokens: undefined, client: undefined, verifier: undefined },
  authorizationUrls: [],
  tokenHistory: [],
  get redirectUrl() { return redirectUrl; },
  get clientMetadata() {
    return { client_name: "E2E Host", redirect_uris: [redirectUrl], grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"], token_endpoint_auth_method: "none", scope: "cairn:read" };
  },
  state() { return "e2e-state-0123456789"; },
  clientInformation() { return this.saved.client; },
  saveClientInformation(info) { this.saved.client = info; },
  tokens() { return this.saved.tokens; },
  saveTokens(t) { this.saved.tokens = t; this.tokenHistory.push(t); },
  redirectToAuthorization(url) { this.authorizationUrls.push(url); },
  saveCodeVerifier(v) { this.saved.verifier = v; },
  codeVerifier() { return this.saved.verifier; },
};

async function connect() {
  const transport = new StreamableHTTPClientTransport(mcpURL, { authProvider: provider });
  const client = new Client({ name: "cairn-oauth-e2e", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  return res;
}

const report = {};
let page;
const browser = await chromium.launch({
  executablePath: env("CHROMIUM", "/usr/bin/chromium"),
  headless: true,
  args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run"],
});
try {
  page = await (await browser.newContext({ viewport: { width: 1000, height: 900 } })).newPage();
  page.setDefaultTimeout(15000);
  const problems = [];
  page.on("console", (msg) => {
    if (msg.type() === "error" && !/Failed to load resource: the server responded with a status of (4\d\d)/.test(msg.text())) problems.push(msg.text());
  });

  step = "first connection: sent to the consent page";
  let transport = new StreamableHTTPClientTransport(mcpURL, { authProvider: provider });
  let client = new Client({ name: "cairn-oauth-e2e", version: "1.0.0" });
  try {
    await client.connect(transport);
    fail("connected without authorization");
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
  }
  if (provider.authorizationUrls.length !== 1) fail(`${provider.authorizationUrls.length} authorization redirects`);
  const authURL = provider.authorizationUrls[0];
  report.client_id = provider.saved.client?.client_id;
  report.authorization_url = authURL.origin + authURL.pathname;
  report.resource = authURL.searchParams.get("resource");
  report.code_challenge_method = authURL.searchParams.get("code_challenge_method");

  step = "consent page";
  let callback;
  await page.route(redirectUrl + "**", (route) => {
    callback = new URL(route.request().url());
    return route.fulfill({ status: 200, contentType: "text/html", body: "<p>connected</p>" });
  });
  const res = await page.goto(authURL.href);
  report.consent_headers = { x_frame_options: res.headers()["x-frame-options"], csp: res.headers()["content-security-policy"] };
  await page.getByText("E2E Host").first().waitFor();
  await page.getByLabel("Read everything but invoices").check();
  await page.getByLabel("Owner API key").fill(ownerKey);
  await page.screenshot({ path: join(outDir, "oauth-consent.png"), fullPage: true });
  await page.getByRole("button", { name: "Approve" }).click();
  await page.waitForURL(redirectUrl + "**");
  if (!callback) fail("the browser was not sent back to the client");
  const code = callback.searchParams.get("code");
  if (!code) fail(`no code in the callback: ${callback.search}`);
  report.callback_state = callback.searchParams.get("state");

  step = "code exchange";
  await transport.finishAuth(code);
  ({ client, transport } = await connect());

  step = "tools and reads";
  const tools = await client.listTools();
  report.tools = tools.tools.length;
  const people = await call(client, "retrieve_entities", { entity_type: "person" });
  report.people = (people.structuredContent?.entities ?? []).map((e) => e.snapshot?.name ?? e.name ?? e.entity_id);
  const invoices = await call(client, "retrieve_entities", { entity_type: "invoice" });
  report.invoices = invoices.isError ? "refused" : (invoices.structuredContent?.entities ?? []).length;
  const write = await call(client, "store", { entities: [{ entity_type: "person", name: "Mallory" }] });
  report.write_refused = !!write.isError;

  step = "refresh after expiry";
  const firstAccess = provider.saved.tokens.access_token;
  await new Promise((r) => setTimeout(r, Number(env("EXPIRY_WAIT_MS", "2500"))));
  const again = await call(client, "retrieve_entities", { entity_type: "person" });
  report.after_refresh_people = (again.structuredContent?.entities ?? []).length;
  report.refreshed = provider.saved.tokens.access_token !== firstAccess && provider.tokenHistory.length >= 2;

  step = "disconnect from the owner view";
  await page.goto(new URL("/console/", mcpURL).href);
  await page.getByLabel("API key").fill(ownerKey);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator("#sign-out").waitFor();
  await page.goto(new URL("/console/#/clients", mcpURL).href);
  const row = page.locator(`button[data-client="${report.client_id}"]`);
  await row.waitFor();
  await page.screenshot({ path: join(outDir, "oauth-clients.png"), fullPage: true });
  page.once("dialog", (d) => d.accept());
  await row.click();
  await page.getByText("its tokens are revoked").waitFor();

  step = "call after disconnect";
  // The token the client holds is refused at once, with the challenge
  // that points at the metadata…
  const raw = await fetch(mcpURL, { method: "POST", headers: { authorization: `Bearer ${provider.saved.tokens.access_token}`,
    "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) });
  report.raw_after_disconnect = raw.status;
  report.raw_challenge = raw.headers.get("www-authenticate");
  // …and the SDK, told 401, tries its refresh token, which is gone too.
  try {
    await client.listTools();
    report.after_disconnect = "accepted";
  } catch (e) {
    report.after_disconnect = e?.constructor?.name ?? String(e);
  }
  report.problems = problems;
  await client.close().catch(() => {});
  console.log(JSON.stringify(report));
} catch (e) {
  await page?.screenshot({ path: join(outDir, "oauth-failure.png"), fullPage: true }).catch(() => {});
  console.error(`${e.message}\n${JSON.stringify(report)}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
