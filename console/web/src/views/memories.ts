import { call } from "../api";
import { h, when } from "../dom";
import { go, type Route } from "../router";
import { empty, entityLink, field, load, page, plural } from "../ui";

// Memories: search_memory with its filters, each hit saying why it matched
// (which signals found it, its similarity and fused score). The route
// holds the form, so a search can be linked and reloaded.

interface Hit {
  id: string;
  collection: string;
  text: string;
  title?: string;
  tags: string[];
  confidence?: number;
  entity_ids: string[];
  created_at: string;
  score: number;
  similarity?: number;
  matched: string[];
}

const fields = ["collection", "query", "keywords", "tags", "start", "end", "min_confidence", "min_similarity", "entity", "limit"] as const;

export async function memoriesView(main: HTMLElement, route: Route): Promise<void> {
  const p = route.params;
  const input = (name: string, attrs: Record<string, string> = {}) => h("input", { name, value: p.get(name) ?? "", ...attrs });
  const controls = {
    collection: input("collection", { required: "", list: "collections", placeholder: "notes" }),
    query: input("query", { type: "search", placeholder: "plain words" }),
    keywords: input("keywords", { placeholder: "words that must all occur" }),
    tags: input("tags", { placeholder: "comma-separated" }),
    start: input("start", { type: "date" }),
    end: input("end", { type: "date" }),
    min_confidence: input("min_confidence", { type: "number", min: "0", max: "1", step: "0.05" }),
    min_similarity: input("min_similarity", { type: "number", min: "-1", max: "1", step: "0.05" }),
    entity: input("entity", { placeholder: "ent_…" }),
    limit: input("limit", { type: "number", min: "1", max: "100", placeholder: "10" }),
  };
  if (!controls.collection.value) controls.collection.value = "notes";
  const collections = h("datalist", { id: "collections" });
  const out = h("section", { class: "results", "aria-live": "polite" });
  const form = h("form", { class: "filters", role: "search" },
    field("Collection", controls.collection), field("Search", controls.query), field("Keywords", controls.keywords), field("Tags", controls.tags),
    field("Created from", controls.start), field("Created until", controls.end), field("Minimum confidence", controls.min_confidence),
    field("Minimum similarity", controls.min_similarity, "to match by meaning"), field("About entity", controls.entity), field("Results", controls.limit),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Search")), collections);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const params: Record<string, string> = {};
    for (const f of fields) params[f] = controls[f].value.trim();
    go("memories", "", params);
  });
  page(main, "Memories", form, out);

  // The collections the key may read, for the form's suggestions.
  call<{ memories?: { collections?: { name: string; count: number }[] } }>("get_user_context", { budget_tokens: 2000 }).then((c) => {
    for (const col of c.memories?.collections ?? []) collections.append(h("option", { value: col.name }, plural(col.count, "memory", "memories")));
  }, () => undefined);

  if (!p.has("collection")) {
    out.append(empty("Choose a collection and search; an empty search lists the collection, newest first."));
    return;
  }
  const args: Record<string, unknown> = { collection: controls.collection.value, query: controls.query.value };
  const num = (s: string) => (s === "" ? undefined : Number(s));
  if (controls.keywords.value) args.keywords = controls.keywords.value;
  const tags = controls.tags.value.split(",").map((t) => t.trim()).filter(Boolean);
  if (tags.length) args.tags = tags;
  if (controls.start.value || controls.end.value) {
    args.date_range = { start: controls.start.value ? controls.start.value + "T00:00:00Z" : undefined, end: controls.end.value ? controls.end.value + "T23:59:59Z" : undefined };
  }
  if (num(controls.min_confidence.value) !== undefined) args.min_confidence = num(controls.min_confidence.value);
  if (num(controls.min_similarity.value) !== undefined) args.minSimilarity = num(controls.min_similarity.value);
  if (controls.entity.value) args.entity_id = controls.entity.value;
  if (num(controls.limit.value) !== undefined) args.limit = num(controls.limit.value);

  await load(out, () => call<{ results: Hit[]; total: number; has_more: boolean }>("search_memory", args), (r) => r.results.length === 0 ?
    empty("No memory you may read matches.") : [
    h("p", { role: "status" }, `${r.results.length} of ${r.total}${r.has_more ? ", more with a higher limit" : ""}.`),
    h("ol", { class: "memories" }, r.results.map((m) => h("li", { class: "memory", "data-memory": m.id },
      m.title && m.title !== m.text ? h("h2", {}, m.title) : null,
      h("p", { class: "text" }, m.text),
      h("p", { class: "why" }, h("strong", {}, "Why: "), whyMatched(m, controls.query.value)),
      h("p", { class: "meta" }, `${m.collection} · ${when(m.created_at)}`, m.confidence !== undefined ? ` · confidence ${m.confidence}` : "",
        m.tags.length ? [" · ", m.tags.map((t) => h("span", { class: "tag" }, t))] : null,
        m.entity_ids.length ? [" · about ", m.entity_ids.map((id) => [entityLink(id), " "])] : null)))),
  ], "Searching…");
}

function whyMatched(m: Hit, query: string): string {
  if (!query) return "listed: the collection's memories that pass the filters";
  const parts: string[] = [];
  if (m.matched.includes("text")) parts.push("its words match the search");
  if (m.matched.includes("vector")) parts.push(`close in meaning${m.similarity !== undefined ? ` (similarity ${m.similarity.toFixed(3)})` : ""}`);
  if (parts.length === 0) parts.push("matched by " + (m.matched.join(", ") || "the filters"));
  return parts.join("; ") + ` — fused score ${m.score.toFixed(4)}`;
}
