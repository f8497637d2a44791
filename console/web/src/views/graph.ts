import cytoscape from "cytoscape";
import { call, callPages } from "../api";
import { clear, h, value } from "../dom";
import { go, type Route } from "../router";
import { empty, errorBox, field, load, loading, page, plural } from "../ui";

// The graph explorer: find an entity, draw its neighbourhood (1 to 3 hops,
// filtered by relationship type on the server and by entity type here) with
// Cytoscape.js, expand nodes, open their details, and re-read it as it was
// at a date. Every read is retrieve_related_entities under the key's
// consent: what the agent may not read is not drawn, nor passed through.

interface EntityHit {
  id: string;
  entity_type: string;
  canonical_name: string;
  snapshot?: Record<string, unknown>;
  matched?: string[];
  merged_into?: string;
}

interface Related {
  entities: { id: string; entity_type: string; canonical_name: string; snapshot?: Record<string, unknown>; hops: number }[];
  relationships: { id: string; relationship_type: string; source_entity_id: string; target_entity_id: string }[];
  truncated: boolean;
  hops_traversed: number;
}

interface NodeInfo {
  id: string;
  type: string;
  name: string;
  snapshot: Record<string, unknown>;
}

const palette = ["#2f6fde", "#d9480f", "#2b8a3e", "#9c36b5", "#c2255c", "#1098ad", "#e67700", "#5c940d", "#495057", "#7048e8"];

export function typeColor(type: string): string {
  let n = 0;
  for (const c of type) n = (n * 31 + c.charCodeAt(0)) >>> 0;
  return palette[n % palette.length];
}

/** screenColors gives the types on screen distinct colours (a hash of ten
 * colours would give person and company the same one), in name order, so
 * that the same types keep the same colours from one view to the next;
 * past ten types, colours repeat. */
export function screenColors(types: Iterable<string>): Map<string, string> {
  return new Map([...new Set(types)].sort().map((t, i) => [t, palette[i % palette.length]]));
}

/** asOf turns a date input's value into the end of that day, UTC. */
function asOf(date: string): string | undefined {
  return date ? date + "T23:59:59Z" : undefined;
}

let cy: cytoscape.Core | null = null;

// Cytoscape's renderer adds an inline <style> element with one rule
// (its container is position: relative) unless an element with its id is
// already there. The Content-Security-Policy refuses inline styles, so
// style.css carries that rule and this marker tells Cytoscape so.
const cytoscapeStylesheet = "__________cytoscape_stylesheet";
if (!document.getElementById(cytoscapeStylesheet)) {
  document.head.append(h("meta", { id: cytoscapeStylesheet, name: "cytoscape-stylesheet", content: "in style.css" }));
}

export async function graphView(main: HTMLElement, route: Route): Promise<void> {
  const p = route.params;
  const state = {
    center: p.get("entity") ?? "",
    hops: Number(p.get("hops") ?? "1") || 1,
    at: p.get("at") ?? "",
    rels: new Set((p.get("rel") ?? "").split(",").filter(Boolean)),
    hiddenTypes: new Set<string>(),
    nodes: new Map<string, NodeInfo>(),
    edges: new Map<string, Related["relationships"][number]>(),
    knownRels: new Set<string>((p.get("rel") ?? "").split(",").filter(Boolean)),
    selected: "",
  };

  const q = h("input", { type: "search", name: "q", autocomplete: "off", placeholder: "a name, an email, a word" });
  const results = h("div", { class: "results", "aria-live": "polite" });
  const search = h("form", { class: "inline", role: "search" }, field("Find an entity", q), h("button", { type: "submit" }, "Search"));
  search.addEventListener("submit", (ev) => {
    ev.preventDefault();
    void load(results, () => call<{ entities: EntityHit[]; total: number }>("retrieve_entities", { query: q.value, limit: 10 }), (r) =>
      r.entities.length === 0 ? empty(q.value ? `No entity you may read matches “${q.value}”.` : "No entities yet.") :
        h("ul", { class: "hits" }, r.entities.map((e) => h("li", {},
          h("button", { type: "button", class: "hit", "data-entity": e.id, onclick: () => go("graph", "", { entity: e.id, hops: String(state.hops), at: state.at }) },
            h("span", { class: "badge", "data-type": e.entity_type }, e.entity_type), " ", e.canonical_name || e.id),
          e.matched?.length ? h("small", {}, " matched by ", e.matched.join(", ")) : null))), "Searching…");
  });

  const hops = h("select", { name: "hops" }, [1, 2, 3].map((n) => h("option", { value: n, selected: n === state.hops }, `${n} hop${n > 1 ? "s" : ""}`)));
  const at = h("input", { type: "date", name: "at", value: state.at });
  const relBox = h("fieldset", { class: "checks" }, h("legend", {}, "Relationships"));
  const typeBox = h("fieldset", { class: "checks" }, h("legend", {}, "Entity types"));
  const status = h("div", { class: "status", "aria-live": "polite" });
  const canvas = h("div", { id: "cy", class: "cy", role: "img", "aria-label": "the neighbourhood as a graph; the list beside it has the same nodes" });
  const details = h("aside", { class: "details", "aria-live": "polite" });
  const list = h("div", { class: "node-list" });

  hops.addEventListener("change", () => go("graph", "", { entity: state.center, hops: hops.value, at: state.at, rel: [...state.rels].join(",") }));
  at.addEventListener("change", () => go("graph", "", { entity: state.center, hops: String(state.hops), at: at.value, rel: [...state.rels].join(",") }));

  const controls = h("div", { class: "controls" }, field("Depth", hops), field("As of", at, "empty: now"), relBox, typeBox);
  page(main, "Graph explorer", search, results, state.center ? [controls, status,
    h("div", { class: "graph-layout" }, h("div", { class: "graph-pane" }, canvas, list), details)] :
    empty("Search for an entity to see its neighbourhood."));
  if (!state.center) return;

  function renderFilters(): void {
    clear(relBox, h("legend", {}, "Relationships"), [...state.knownRels].sort().map((t) => {
      const box = h("input", { type: "checkbox", name: "rel", value: t, checked: state.rels.size === 0 || state.rels.has(t) });
      box.addEventListener("change", () => {
        const on = [...relBox.querySelectorAll<HTMLInputElement>("input:checked")].map((b) => b.value);
        if (on.length === 0) {
          box.checked = true;
          clear(status, h("p", { role: "status" }, "Keep at least one relationship type."));
          return;
        }
        const rel = on.length === state.knownRels.size ? "" : on.join(",");
        go("graph", "", { entity: state.center, hops: String(state.hops), at: state.at, rel });
      });
      return h("label", {}, box, " ", t);
    }), state.knownRels.size === 0 ? h("small", {}, "none") : null);
    const types = new Set([...state.nodes.values()].map((n) => n.type));
    const colors = screenColors(types);
    clear(typeBox, h("legend", {}, "Entity types"), [...types].sort().map((t) => {
      const box = h("input", { type: "checkbox", name: "type", value: t, checked: !state.hiddenTypes.has(t) });
      box.addEventListener("change", () => {
        if (box.checked) state.hiddenTypes.delete(t);
        else state.hiddenTypes.add(t);
        draw();
      });
      // Set through the DOM (the CSP allows no inline style attribute);
      // the console's default colouring leaves a set colour alone.
      const swatch = h("span", { class: "swatch", "data-type": t });
      swatch.style.backgroundColor = colors.get(t) ?? typeColor(t);
      return h("label", {}, box, " ", swatch, t);
    }));
  }

  function visible(id: string): boolean {
    const n = state.nodes.get(id);
    return !!n && (id === state.center || !state.hiddenTypes.has(n.type));
  }

  function draw(): void {
    const elements: cytoscape.ElementDefinition[] = [];
    const colors = screenColors([...state.nodes.values()].map((n) => n.type));
    for (const n of state.nodes.values()) {
      if (!visible(n.id)) continue;
      elements.push({ data: { id: n.id, label: n.name || n.id, color: colors.get(n.type) ?? typeColor(n.type), center: n.id === state.center ? 1 : 0 } });
    }
    for (const e of state.edges.values()) {
      if (!visible(e.source_entity_id) || !visible(e.target_entity_id)) continue;
      elements.push({ data: { id: e.id, source: e.source_entity_id, target: e.target_entity_id, label: e.relationship_type } });
    }
    cy?.destroy();
    cy = cytoscape({
      container: canvas,
      elements,
      wheelSensitivity: 0.3,
      style: [
        // Labels sit on a light halo, so that edges and nodes behind them
        // do not hide them; edge labels are drawn above the nodes.
        { selector: "node", style: { "background-color": "data(color)", label: "data(label)", "font-size": 11, color: "#1b1f24", "text-valign": "bottom", "text-margin-y": 4, width: 26, height: 26,
          "text-background-color": "#ffffff", "text-background-opacity": 0.85, "text-background-padding": "2px", "text-background-shape": "roundrectangle" } },
        { selector: "node[center = 1]", style: { width: 38, height: 38, "border-width": 3, "border-color": "#1b1f24" } },
        { selector: "node:selected", style: { "border-width": 4, "border-color": "#f59f00" } },
        { selector: "edge", style: { width: 1.5, "line-color": "#8a94a3", "target-arrow-color": "#8a94a3", "target-arrow-shape": "triangle", "curve-style": "bezier", label: "data(label)", "font-size": 9, color: "#4a5360", "text-rotation": "autorotate",
          "text-background-color": "#ffffff", "text-background-opacity": 0.85, "text-background-padding": "2px", "z-compound-depth": "top", "z-index": 10 } },
      ],
      layout: { name: elements.length > 60 ? "grid" : "cose", animate: false, randomize: false, padding: 24 } as cytoscape.LayoutOptions,
    });
    cy.on("tap", "node", (ev) => select(ev.target.id()));
    cy.on("dbltap", "node", (ev) => void expand(ev.target.id()));
    if (state.selected) cy.getElementById(state.selected).select();
    canvas.dataset.nodes = String(cy.nodes().length);
    canvas.dataset.edges = String(cy.edges().length);
    renderList();
  }

  function renderList(): void {
    const shown = [...state.nodes.values()].filter((n) => visible(n.id));
    clear(list, h("h2", {}, plural(shown.length, "entity", "entities")), h("ul", {}, shown.map((n) => h("li", {},
      h("button", { type: "button", class: "node", "data-entity": n.id, "aria-pressed": n.id === state.selected ? "true" : "false", onclick: () => select(n.id) },
        h("span", { class: "badge", "data-type": n.type }, n.type), " ", n.name || n.id)))));
  }

  function select(id: string): void {
    state.selected = id;
    cy?.elements().unselect();
    cy?.getElementById(id).select();
    const n = state.nodes.get(id);
    if (!n) return;
    const fields = Object.entries(n.snapshot);
    clear(details, h("h2", {}, n.name || n.id), h("p", {}, h("span", { class: "badge", "data-type": n.type }, n.type), " ", h("code", {}, n.id)),
      fields.length ? h("dl", {}, fields.map(([k, v]) => [h("dt", {}, k), h("dd", {}, value(v))])) : empty("No fields."),
      h("div", { class: "actions" },
        h("button", { type: "button", id: "expand", onclick: () => void expand(id) }, "Expand"),
        h("a", { class: "button", href: "#/entity/" + encodeURIComponent(id) + (state.at ? "?at=" + state.at : "") }, "Open entity page")));
    for (const l of list.querySelectorAll<HTMLElement>("button.node")) l.setAttribute("aria-pressed", l.dataset.entity === id ? "true" : "false");
  }

  function merge(r: Related): number {
    let added = 0;
    for (const e of r.entities) {
      if (!state.nodes.has(e.id)) added++;
      state.nodes.set(e.id, { id: e.id, type: e.entity_type, name: e.canonical_name, snapshot: e.snapshot ?? {} });
    }
    for (const e of r.relationships) {
      state.edges.set(e.id, e);
      state.knownRels.add(e.relationship_type);
    }
    return added;
  }

  function args(entity: string, hopsN: number): Record<string, unknown> {
    const a: Record<string, unknown> = { entity_id: entity, max_hops: hopsN, include_entities: true };
    if (state.rels.size) a.relationship_types = [...state.rels];
    const t = asOf(state.at);
    if (t) a.at = t;
    return a;
  }

  async function expand(id: string): Promise<void> {
    clear(status, loading("Expanding…"));
    try {
      const r = await callPages<Related>("retrieve_related_entities", args(id, 1));
      const added = merge(r);
      draw();
      renderFilters();
      select(id);
      clear(status, h("p", { role: "status" }, added ? `Added ${plural(added, "entity", "entities")}.` : "Nothing more around it that you may read."));
    } catch (e) {
      clear(status, errorBox(e));
    }
  }

  clear(status, loading("Reading the neighbourhood…"));
  canvas.setAttribute("aria-busy", "true");
  try {
    const snap = await call<{ entity_id: string; entity_type: string; canonical_name: string; snapshot: Record<string, unknown> }>(
      "retrieve_entity_snapshot", asOf(state.at) ? { entity_id: state.center, at: asOf(state.at) } : { entity_id: state.center });
    state.nodes.set(snap.entity_id, { id: snap.entity_id, type: snap.entity_type, name: snap.canonical_name, snapshot: snap.snapshot ?? {} });
    state.center = snap.entity_id;
    const r = await callPages<Related>("retrieve_related_entities", args(state.center, state.hops));
    merge(r);
    clear(status, h("p", { role: "status" }, `${plural(r.entities.length, "entity", "entities")} within ${plural(state.hops, "hop")}` +
      (state.at ? ` as of ${state.at}` : "") + (r.truncated ? " (cut short by the traversal's cap)" : "") + (r.more ? " (more than the console reads at once; narrow the filters)" : "") + "."));
    draw();
    renderFilters();
    select(state.center);
  } catch (e) {
    clear(status, errorBox(e));
    clear(list);
  } finally {
    canvas.removeAttribute("aria-busy");
  }
}
