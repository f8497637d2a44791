import { ApiError, call, callPages } from "../api";
import { clear, h, value, when } from "../dom";
import { go, type Route } from "../router";
import { empty, entityLink, errorBox, field, load, loading, page, plural, table } from "../ui";

// The entity page: the snapshot (optionally as of a date), each field's
// provenance (observation → source → file, with a signed link when the
// value came from a stored file), the observations in order, the timeline,
// and the corrections and merges among them.

interface Snapshot {
  entity_id: string;
  entity_type: string;
  canonical_name: string;
  schema_version: string;
  snapshot: Record<string, unknown>;
  provenance: Record<string, string>;
  computed_at: string;
  observation_count: number;
  last_observation_at: string;
  raw_fields?: Record<string, unknown>;
}

interface Observation {
  id: string;
  source_id: string;
  observed_at: string;
  source_priority: number;
  specificity_score: number;
  fields: Record<string, unknown>;
  entity_id: string;
}

interface Provenance {
  field: string;
  value: unknown;
  source_observation: { id: string; source_id: string; observed_at: string; specificity_score: number; source_priority: number };
  source_material: { id: string; kind: string; mime_type?: string; content_hash?: string; size?: number; created_at?: string; original_filename?: string };
  observed_at: string;
  file?: { file_id: string; filename?: string; mime_type?: string; unit?: string; start?: number; end?: number; job_id?: string };
}

interface TimelineEvent {
  id: string;
  event_type: string;
  event_timestamp: string;
  source_id: string;
  properties?: Record<string, unknown>;
}

/** correctionPriority is the source priority of hand corrections. */
const correctionPriority = 1000;

/** mergePages bounds how many pages of an entity type are read to find merges. */
const mergePages = 5;

export async function entityView(main: HTMLElement, route: Route): Promise<void> {
  const id = route.arg;
  const atDate = route.params.get("at") ?? "";
  const at = h("input", { type: "date", name: "at", value: atDate });
  at.addEventListener("change", () => go("entity", id, { at: at.value }));
  const head = h("div", { class: "entity-head" });
  const prov = h("section", { class: "provenance", "aria-live": "polite", id: "provenance" });
  const merges = h("section", { id: "merges" });
  const obs = h("section", {});
  const timeline = h("section", {});
  page(main, "Entity", head, h("div", { class: "controls" }, field("As of", at, "empty: now")),
    h("div", { class: "entity-layout" }, h("section", { id: "snapshot" }, loading()), prov), merges, obs, timeline);
  const snapBox = main.querySelector("#snapshot") as HTMLElement;

  let snap: Snapshot;
  try {
    snap = await call<Snapshot>("retrieve_entity_snapshot", atDate ? { entity_id: id, at: atDate + "T23:59:59Z" } : { entity_id: id });
  } catch (e) {
    if (e instanceof ApiError && e.code === "ENTITY_ALREADY_MERGED" && typeof e.details.merged_into === "string") {
      clear(snapBox, h("div", { class: "notice", role: "status" }, h("strong", {}, "Merged"), ": this entity was merged into ",
        entityLink(e.details.merged_into), "; its observations and relationships moved there."), errorBox(e));
      return;
    }
    clear(snapBox, errorBox(e));
    return;
  }
  (main.querySelector("h1") as HTMLElement).textContent = snap.canonical_name || snap.entity_id;
  document.title = (snap.canonical_name || snap.entity_id) + " — Cairn console";
  clear(head, h("p", {}, h("span", { class: "badge", "data-type": snap.entity_type }, snap.entity_type), " ", h("code", {}, snap.entity_id),
    ` · ${plural(snap.observation_count, "observation")} · last ${when(snap.last_observation_at)} · schema ${snap.schema_version}`,
    atDate ? ` · as of ${atDate}` : ""),
  h("p", {}, h("a", { href: "#/graph?entity=" + encodeURIComponent(snap.entity_id) + (atDate ? "&at=" + atDate : "") }, "Show in the graph")));

  const fields = Object.keys(snap.snapshot).sort();
  clear(snapBox, h("h2", {}, "Snapshot"), fields.length === 0 ? empty("No fields.") :
    table(["Field", "Value", "From"], fields.map((f) => [
      h("code", {}, f), value(snap.snapshot[f]),
      h("button", { type: "button", class: "link", "data-field": f, onclick: () => void provenance(f) }, "Provenance"),
    ])),
  snap.raw_fields && Object.keys(snap.raw_fields).length ? [h("h3", {}, "Fields the schema does not name"),
    h("dl", {}, Object.entries(snap.raw_fields).map(([k, v]) => [h("dt", {}, k), h("dd", {}, value(v))]))] : null);

  async function provenance(f: string): Promise<void> {
    await load(prov, () => call<Provenance>("retrieve_field_provenance", { entity_id: snap.entity_id, field: f }), (p) => {
      const o = p.source_observation;
      const s = p.source_material;
      const fileLink = h("span", {});
      const out = [h("h2", {}, "Provenance of ", h("code", {}, p.field)),
        h("ol", { class: "chain" },
          h("li", {}, h("strong", {}, "Value "), value(p.value)),
          h("li", {}, h("strong", {}, "Observation "), h("code", {}, o.id), ` observed ${when(o.observed_at)}, priority ${o.source_priority}` +
            (o.source_priority >= correctionPriority ? " (a correction)" : "") + `, specificity ${o.specificity_score}`),
          h("li", {}, h("strong", {}, "Source "), h("code", {}, s.id), ` ${s.kind}${s.mime_type ? ", " + s.mime_type : ""}${s.size ? `, ${s.size} bytes` : ""}`,
            s.created_at ? `, stored ${when(s.created_at)}` : ""),
          p.file ? h("li", {}, h("strong", {}, "File "), p.file.filename || p.file.file_id,
            p.file.unit ? ` (${p.file.unit} ${p.file.start ?? ""}–${p.file.end ?? ""})` : "", " ", fileLink) : null)];
      if (p.file) {
        call<{ signed_url: string; expires_at?: string }>("retrieve_file_url", { file_path: p.file.file_id }).then(
          (u) => clear(fileLink, h("a", { href: u.signed_url, rel: "noopener noreferrer", target: "_blank" }, "open the file"), u.expires_at ? ` (link valid until ${when(u.expires_at)})` : ""),
          (e) => clear(fileLink, errorBox(e)));
      }
      return out;
    }, "Tracing the field…");
    prov.scrollIntoView({ block: "nearest" });
    (prov.querySelector("h2") as HTMLElement | null)?.setAttribute("tabindex", "-1");
    (prov.querySelector("h2") as HTMLElement | null)?.focus();
  }

  // A merge moves the duplicate's observations here and leaves the
  // duplicate pointing here: the entities of this type that were merged
  // into this one (read page by page, at most mergePages of them).
  callPages<{ entities: { id: string; canonical_name: string; merged_into?: string }[] }>("retrieve_entities",
    { entity_type: snap.entity_type, include_merged: true, include_snapshots: false, limit: 100 }, mergePages).then((r) => {
    const found = r.entities.filter((e) => e.merged_into === snap.entity_id);
    if (found.length) {
      clear(merges, h("h2", {}, "Merged into this entity"), h("ul", {}, found.map((e) => h("li", { "data-merged": e.id },
        entityLink(e.id, e.canonical_name || e.id), " ", h("code", {}, e.id), ": its observations and relationships moved here"))));
    }
  }, () => undefined); // the rest of the page stands without it

  void load(obs, () => callPages<{ observations: Observation[]; total: number }>("list_observations", { entity_id: snap.entity_id, limit: 100 }), (r) => [
    h("h2", {}, `Observations (${r.total})`),
    r.observations.length === 0 ? empty("No observations.") : [r.more ? h("p", {}, `The ${r.observations.length} newest are shown.`) : null,
      table(["Observed", "Kind", "Fields", "Source"], r.observations.map((o) => [
        when(o.observed_at),
        o.source_priority >= correctionPriority ? h("span", { class: "tag correction" }, "correction") : `priority ${o.source_priority}`,
        h("dl", { class: "compact" }, Object.entries(o.fields).map(([k, v]) => [h("dt", {}, k), h("dd", {}, value(v))])),
        h("code", {}, o.source_id),
      ]), "newest first")],
  ], "Reading the observations…");

  void load(timeline, () => call<{ events: TimelineEvent[]; total: number }>("list_timeline_events", { entity_id: snap.entity_id, limit: 50 }), (r) => [
    h("h2", {}, `Timeline (${r.total})`),
    r.events.length === 0 ? empty("No dated events.") :
      table(["When", "Event", "Field"], r.events.map((e) => [e.event_timestamp, e.event_type, value(e.properties?.field)])),
  ], "Reading the timeline…");
}
