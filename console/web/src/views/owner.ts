import { call, consoleApi } from "../api";
import { clear, h, when } from "../dom";
import { go, type Route } from "../router";
import { empty, entityLink, errorBox, field, load, loading, page, table } from "../ui";

// The owner's views: agents and keys (the console's own API, over the same
// control plane as cairn admin), consent rules with a preview of what they
// change, the audit log, and the contradictions to review (the tools).
// The main view hides them from other keys, and the service refuses them
// to other keys whatever the page does.

interface KeyOut {
  id: string;
  agent: string;
  prefix: string;
  status: string;
  created_at: string;
  expires_at?: string;
  revoked_at?: string;
  last_used_at?: string;
  current?: boolean;
}

interface AgentOut {
  id: string;
  name: string;
  owner: boolean;
  keys: KeyOut[];
}

interface Rule {
  id: string;
  agent: string;
  resource: string;
  action: string;
  effect: string;
}

export async function agentsView(main: HTMLElement): Promise<void> {
  const list = h("section", { "aria-live": "polite" });
  const shown = h("div", { "aria-live": "assertive" });
  const name = h("input", { name: "agent-name", required: true, placeholder: "claude", maxlength: "64" });
  const addAgent = h("form", { class: "inline" }, field("New agent", name), h("button", { type: "submit" }, "Add agent"));
  const keyAgent = h("select", { name: "key-agent" });
  const days = h("input", { name: "expires", type: "number", min: "0", max: "3650", value: "90" });
  const addKey = h("form", { class: "inline" }, field("Agent", keyAgent), field("Expires in (days)", days, "0: never"), h("button", { type: "submit" }, "Issue key"));
  const status = h("div", { "aria-live": "polite" });

  async function refresh(): Promise<void> {
    await load(list, () => consoleApi<{ agents: AgentOut[] }>("GET", "agents"), (r) => {
      clear(keyAgent, r.agents.filter((a) => !a.owner).map((a) => h("option", { value: a.name }, a.name)),
        r.agents.filter((a) => a.owner).map((a) => h("option", { value: a.name }, a.name + " (owner)")));
      return r.agents.map((a) => h("article", { class: "agent", "data-agent": a.name },
        h("h2", {}, a.name, a.owner ? " (owner: may read, write and delete everything)" : ""),
        a.keys.length === 0 ? empty("No keys.") : table(["Key", "Status", "Created", "Expires", "Last used", ""], a.keys.map((k) => [
          h("code", {}, k.prefix + "…"), k.status + (k.current ? " (this session)" : ""), when(k.created_at), k.expires_at ? when(k.expires_at) : "never",
          k.last_used_at ? when(k.last_used_at) : "never",
          k.status === "active" && !k.current ? h("button", { type: "button", class: "danger", "data-key": k.id, onclick: () => void revoke(k) }, "Revoke") : "",
        ]))));
    }, "Reading agents and keys…");
  }

  async function revoke(k: KeyOut): Promise<void> {
    if (!confirm(`Revoke key ${k.prefix}… of ${k.agent}? Clients using it stop working at once.`)) return;
    try {
      await consoleApi("POST", `keys/${encodeURIComponent(k.id)}/revoke`, {});
      clear(status, h("p", { role: "status" }, `Revoked ${k.prefix}… of ${k.agent}.`));
      await refresh();
    } catch (e) {
      clear(status, errorBox(e));
    }
  }

  addAgent.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      await consoleApi("POST", "agents", { name: name.value.trim() });
      clear(status, h("p", { role: "status" }, `Added agent ${name.value.trim()}. It may do nothing until a consent rule allows it.`));
      name.value = "";
      await refresh();
    } catch (e) {
      clear(status, errorBox(e));
    }
  });
  addKey.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const r = await consoleApi<{ key: string; record: KeyOut }>("POST", "keys", { agent: keyAgent.value, expires_in_days: Number(days.value) || 0 });
      const out = h("output", { class: "secret", id: "new-key" }, r.key);
      clear(shown, h("div", { class: "notice", role: "status" }, h("p", {}, `The key of ${r.record.agent}, shown once: copy it now.`), out));
      await refresh();
    } catch (e) {
      clear(shown, errorBox(e));
    }
  });
  page(main, "Agents & keys", h("p", {}, "Each client should be its own agent with its own key; a new agent may do nothing until a consent rule allows it."),
    h("div", { class: "forms" }, addAgent, addKey), status, shown, list);
  await refresh();
}

export async function consentView(main: HTMLElement, route: Route): Promise<void> {
  const rules = h("section", { "aria-live": "polite" });
  const agent = h("select", { name: "agent", required: true });
  const resource = h("input", { name: "resource", required: true, list: "resources", placeholder: "entities/invoice", value: route.params.get("resource") ?? "" });
  const action = h("select", { name: "action" }, h("option", { value: "read" }, "read"), h("option", { value: "write" }, "write"), h("option", { value: "delete" }, "delete"));
  const effect = h("select", { name: "effect" }, h("option", { value: "deny" }, "deny"), h("option", { value: "allow" }, "allow"));
  const resources = h("datalist", { id: "resources" });
  const preview = h("section", { class: "preview", "aria-live": "polite" });
  const apply = h("button", { type: "button", id: "apply-rule", disabled: true }, "Apply the rule");
  const form = h("form", { class: "inline" }, field("Agent", agent), field("Resource", resource, "*, profile, graph, sources, schema, audit, entities/<type>, memories/<collection>; may end in *"),
    field("Action", action), field("Effect", effect), h("button", { type: "submit" }, "Preview"), apply, resources);
  page(main, "Consent", h("p", {}, "The most specific rule wins, deny wins ties, no rule means deny. The owner agent may always do everything."), form, preview, rules);

  // What the owner has, to preview decisions on: every entity type and
  // memory collection, from the owner's own context.
  const known: string[] = [];
  const counts = new Map<string, number>();
  try {
    const [agents, ctx] = await Promise.all([
      consoleApi<{ agents: AgentOut[] }>("GET", "agents"),
      call<{ entity_types?: { entity_type: string; count: number }[]; memories?: { collections?: { name: string; count: number }[] } }>("get_user_context", { budget_tokens: 8000 }),
    ]);
    clear(agent, agents.agents.filter((a) => !a.owner).map((a) => h("option", { value: a.name, selected: a.name === route.params.get("agent") }, a.name)));
    for (const t of ctx.entity_types ?? []) {
      known.push("entities/" + t.entity_type);
      counts.set("entities/" + t.entity_type, t.count);
    }
    for (const c of ctx.memories?.collections ?? []) {
      known.push("memories/" + c.name);
      counts.set("memories/" + c.name, c.count);
    }
    for (const r of ["*", "profile", "graph", "sources", "schema", "audit", "entities/*", "memories/*", ...known]) resources.append(h("option", { value: r }));
  } catch (e) {
    clear(preview, errorBox(e));
  }
  if (agent.options.length === 0) {
    clear(preview, empty("No agents besides the owner yet: add one under Agents & keys."));
  }

  const rule = () => ({ agent: agent.value, resource: resource.value.trim(), action: action.value, effect: effect.value });
  form.addEventListener("input", () => { apply.disabled = true; });
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    apply.disabled = true;
    const ok = await load(preview, () => consoleApi<{ agent: string; resource: string; decisions: { resource: string; now: string; then: string }[] }>(
      "POST", "consent/preview", { ...rule(), resources: known }), (p) => {
      const changed = p.decisions.filter((d) => d.now !== d.then);
      return [h("h2", {}, `What ${p.agent} may ${action.value} with this rule`),
        h("p", { role: "status" }, changed.length ? `${changed.length} resource${changed.length > 1 ? "s" : ""} would change.` : "Nothing would change."),
        table(["Resource", "Items", "Now", "Then"], p.decisions.map((d) => [h("code", {}, d.resource), counts.has(d.resource) ? String(counts.get(d.resource)) : "",
          h("span", { class: "decision " + d.now }, d.now), h("span", { class: "decision " + d.then + (d.now !== d.then ? " changed" : "") }, d.then)]))];
    }, "Working out the decisions…");
    apply.disabled = !ok;
  });
  apply.addEventListener("click", async () => {
    apply.disabled = true;
    try {
      const r = await call<{ rule: Rule }>("set_consent_rule", rule());
      clear(preview, h("p", { role: "status", class: "notice" }, `Rule set: ${r.rule.effect} ${r.rule.agent} ${r.rule.action} ${r.rule.resource}.`));
      await refreshRules();
    } catch (e) {
      clear(preview, errorBox(e));
    }
  });

  async function refreshRules(): Promise<void> {
    await load(rules, () => call<{ rules: Rule[]; total: number }>("list_consent_rules", {}), (r) => [h("h2", {}, `Rules (${r.total})`),
      r.rules.length === 0 ? empty("No rules: agents other than the owner may do nothing.") :
        table(["Agent", "Resource", "Action", "Effect", ""], r.rules.map((x) => [x.agent, h("code", {}, x.resource), x.action,
          h("span", { class: "decision " + x.effect }, x.effect),
          h("button", { type: "button", class: "link", "data-rule": x.id, onclick: () => void remove(x) }, "Remove")]))], "Reading the rules…");
  }

  async function remove(x: Rule): Promise<void> {
    if (!confirm(`Remove the rule ${x.effect} ${x.agent} ${x.action} ${x.resource}?`)) return;
    try {
      await call("delete_consent_rule", { rule_id: x.id });
      await refreshRules();
    } catch (e) {
      clear(preview, errorBox(e));
    }
  }
  await refreshRules();
}

interface AuditRecord {
  id: number;
  at: string;
  agent: string;
  transport: string;
  tool: string;
  kind: string;
  action?: string;
  resource?: string;
  decision: string;
  result_code: string;
  latency_ms: number;
  request_id: string;
  count?: number;
}

export async function auditView(main: HTMLElement, route: Route): Promise<void> {
  const p = route.params;
  const agent = h("input", { name: "agent", value: p.get("agent") ?? "" });
  const tool = h("input", { name: "tool", value: p.get("tool") ?? "" });
  const kind = h("select", { name: "kind" }, ["", "call", "consent"].map((k) => h("option", { value: k, selected: p.get("kind") === k }, k || "any")));
  const decision = h("select", { name: "decision" }, ["", "allow", "deny"].map((k) => h("option", { value: k, selected: p.get("decision") === k }, k || "any")));
  const since = h("input", { name: "since", type: "date", value: p.get("since") ?? "" });
  const out = h("section", { "aria-live": "polite" });
  const form = h("form", { class: "inline" }, field("Agent", agent), field("Tool", tool), field("Kind", kind), field("Decision", decision), field("Since", since),
    h("button", { type: "submit" }, "Filter"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    go("audit", "", { agent: agent.value.trim(), tool: tool.value.trim(), kind: kind.value, decision: decision.value, since: since.value });
  });
  page(main, "Audit log", form, out);
  const args: Record<string, unknown> = { limit: 50 };
  for (const [k, v] of [["agent", agent.value], ["tool", tool.value], ["kind", kind.value], ["decision", decision.value]]) if (v.trim()) args[k] = v.trim();
  if (since.value) args.since = since.value + "T00:00:00Z";
  const pageOf = async (before?: number) => {
    const more = h("div", {});
    const a = before ? { ...args, before_id: before } : args;
    const r = await call<{ records: AuditRecord[]; total: number; meta?: { truncated?: boolean; next_cursor?: string } }>("query_audit_log", a);
    const rows = r.records.map((x) => [when(x.at), x.agent, x.tool, x.kind, x.action ? `${x.action} ${x.resource}${(x.count ?? 1) > 1 ? ` (${x.count})` : ""}` : "",
      h("span", { class: "decision " + x.decision }, x.decision), x.result_code, `${x.latency_ms} ms`, h("code", {}, x.request_id)]);
    // More are older when the page is full, or when the answer's budget
    // cut it short (meta.truncated): the next page starts before the last
    // record shown, whichever it was.
    if (r.records.length > 0 && (r.records.length === (a.limit as number) || r.meta?.truncated || r.meta?.next_cursor)) {
      const last = r.records[r.records.length - 1].id;
      more.append(h("button", { type: "button", onclick: async (ev: Event) => {
        (ev.target as HTMLButtonElement).disabled = true;
        clear(more, loading());
        try {
          clear(more, await pageOf(last));
        } catch (e) {
          clear(more, errorBox(e));
        }
      } }, "Older records"));
    }
    return rows.length ? [table(["When", "Agent", "Tool", "Kind", "Resource", "Decision", "Result", "Latency", "Trace"], rows), more] : [empty("No records match."), more];
  };
  await load(out, () => pageOf(), (v) => v, "Reading the audit log…");
}

interface Contradiction {
  contradiction_id: string;
  entity_id: string;
  entity_type: string;
  field: string;
  current_value?: unknown;
  new_value?: unknown;
  [k: string]: unknown;
}

export async function reviewView(main: HTMLElement): Promise<void> {
  const out = h("section", { "aria-live": "polite" });
  const status = h("div", { "aria-live": "polite" });
  page(main, "Contradictions", h("p", {}, "Values a memory or a source stated that disagree with what Cairn holds. Confirm: the new value wins; reject: the new claim stops counting; keep both: change nothing."),
    status, out);
  const render = (r: { contradictions: Contradiction[] }) => r.contradictions.length === 0 ? empty("Nothing to review.") :
    r.contradictions.map((c) => h("article", { class: "contradiction" },
      h("h2", {}, entityLink(c.entity_id, `${c.entity_type} ${c.entity_id}`), " · ", h("code", {}, c.field)),
      h("dl", {}, Object.entries(c).filter(([k, v]) => v !== "" && v !== null && !["contradiction_id", "entity_id", "entity_type", "field"].includes(k)).map(([k, v]) =>
        [h("dt", {}, k.replace(/_/g, " ")), h("dd", {}, typeof v === "string" ? v : JSON.stringify(v))])),
      h("div", { class: "actions" }, ["confirm", "reject", "keep_both"].map((res) => h("button", { type: "button", onclick: () => void resolve(c, res) }, res.replace("_", " "))))));
  async function resolve(c: Contradiction, resolution: string): Promise<void> {
    try {
      const r = await call<{ contradictions: Contradiction[] }>("review_memories", { action: "resolve", contradiction_id: c.contradiction_id, resolution });
      clear(status, h("p", { role: "status" }, `Resolved (${resolution.replace("_", " ")}).`));
      clear(out, render(r));
    } catch (e) {
      clear(status, errorBox(e));
    }
  }
  await load(out, () => call<{ contradictions: Contradiction[] }>("review_memories", { action: "list" }), render, "Reading the open contradictions…");
}

interface OAuthClientOut {
  id: string;
  name: string;
  agent: string;
  remote?: string;
  created_at: string;
  last_used_at?: string;
  rules: { resource: string; action: string; effect: string }[];
}

// The hosts the owner connected by OAuth (docs/oauth.md): who they are,
// when they last called, what their agent's rules allow; disconnecting one
// revokes its tokens at once.
export async function clientsView(main: HTMLElement): Promise<void> {
  const list = h("section", { "aria-live": "polite" });
  const status = h("div", { "aria-live": "polite" });

  async function refresh(): Promise<void> {
    await load(list, () => consoleApi<{ clients: OAuthClientOut[] }>("GET", "oauth/clients"), (r) =>
      r.clients.length === 0 ? empty("No client connected yet: give a host the MCP URL, and approve it on the consent page it opens.") :
        table(["Client", "Agent", "Registered from", "Connected", "Last use", "Rules", ""], r.clients.map((c) => [
          h("span", {}, c.name || "(unnamed)", h("br"), h("code", {}, c.id)), c.agent, c.remote ?? "", when(c.created_at),
          c.last_used_at ? when(c.last_used_at) : "never",
          c.rules.length === 0 ? "none (disconnected)" : h("ul", { class: "rules" }, c.rules.map((ru) => h("li", {}, `${ru.effect} ${ru.action} `, h("code", {}, ru.resource)))),
          c.rules.length === 0 ? "" : h("button", { type: "button", class: "danger", "data-client": c.id, onclick: () => void disconnect(c) }, "Disconnect"),
        ])), "Reading connected clients…");
  }

  async function disconnect(c: OAuthClientOut): Promise<void> {
    if (!confirm(`Disconnect ${c.name || c.id}? Its tokens stop working at once.`)) return;
    try {
      await consoleApi("POST", `oauth/clients/${encodeURIComponent(c.id)}/disconnect`, {});
      clear(status, h("p", { role: "status" }, `Disconnected ${c.name || c.id}: its tokens are revoked.`));
      await refresh();
    } catch (e) {
      clear(status, errorBox(e));
    }
  }

  page(main, "Connected clients", h("p", {}, "Hosts connected by URL with OAuth. Each acts as its own agent, with the rules chosen when it was approved."), status, list);
  await refresh();
}
