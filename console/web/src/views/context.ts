import { call } from "../api";
import { h, value } from "../dom";
import { go, type Route } from "../router";
import { empty, entityLink, field, load, page, table } from "../ui";

// Context preview: what get_user_context gives this key's agent for a
// topic and a token budget, with the tokens it used.

interface Context {
  budget_tokens: number;
  tokens_used: number;
  topic?: string;
  profile?: Record<string, unknown>;
  entity_types?: { entity_type: string; count: number }[];
  memories?: { available: boolean; collections?: { name: string; count: number }[]; recent?: { memory_id: string; collection: string; title?: string; text?: string; created_at: string }[] };
  entities?: { entity_id: string; entity_type: string; name: string; score?: number; facts?: Record<string, unknown> }[];
  omitted?: Record<string, number>;
  truncated: boolean;
}

export async function contextView(main: HTMLElement, route: Route): Promise<void> {
  const topic = h("input", { name: "topic", type: "search", value: route.params.get("topic") ?? "", placeholder: "what the conversation is about" });
  const budget = h("input", { name: "budget", type: "number", min: "100", max: "16000", step: "100", value: route.params.get("budget") ?? "2000" });
  const out = h("section", { "aria-live": "polite" });
  const form = h("form", { class: "inline" }, field("Topic", topic), field("Budget (tokens)", budget), h("button", { type: "submit" }, "Preview"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    go("context", "", { topic: topic.value.trim(), budget: budget.value, run: "1" });
  });
  page(main, "Context preview", h("p", {}, "What an agent with this key loads at the start of a conversation (get_user_context)."), form, out);
  if (!route.params.has("run")) {
    out.append(empty("Choose a topic and a budget, then preview."));
    return;
  }
  const args: Record<string, unknown> = { budget_tokens: Number(budget.value) || 2000 };
  if (topic.value.trim()) args.topic = topic.value.trim();
  await load(out, () => call<Context>("get_user_context", args), (c) => [
    h("p", { class: "tokens", role: "status" }, h("strong", { id: "tokens-used" }, String(c.tokens_used)), ` of ${c.budget_tokens} tokens used`,
      c.truncated ? " — cut to fit the budget" : ""),
    c.omitted && Object.values(c.omitted).some((n) => n > 0) ? h("p", {}, "Left out to fit: ",
      Object.entries(c.omitted).filter(([, n]) => n > 0).map(([k, n]) => `${n} ${k.replace(/_/g, " ")}`).join(", ")) : null,
    h("h2", {}, "Entities"),
    c.entities?.length ? table(["Entity", "Type", "Score", "Facts"], c.entities.map((e) => [entityLink(e.entity_id, e.name), e.entity_type,
      e.score !== undefined ? e.score.toFixed(3) : "", e.facts ? h("dl", { class: "compact" }, Object.entries(e.facts).map(([k, v]) => [h("dt", {}, k), h("dd", {}, value(v))])) : ""])) :
      empty("No entities."),
    h("h2", {}, "Memories"),
    c.memories?.recent?.length ? h("ul", {}, c.memories.recent.map((m) => h("li", {}, h("span", { class: "tag" }, m.collection), " ", m.text ?? m.title ?? m.memory_id))) :
      empty(c.memories?.available === false ? "Memories are not available to this key." : "No memories."),
    h("h2", {}, "Entity types"),
    c.entity_types?.length ? h("p", {}, c.entity_types.map((t) => h("span", { class: "tag" }, `${t.entity_type} ${t.count}`))) : empty("None."),
    h("details", {}, h("summary", {}, "The answer as the agent gets it (JSON)"), h("pre", {}, JSON.stringify(c, null, 2))),
  ], "Loading the context…");
}
