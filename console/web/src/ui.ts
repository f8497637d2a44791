import { ApiError } from "./api";
import { clear, h, type Child } from "./dom";

/** errorBox shows an error of the service with its code, message and trace id. */
export function errorBox(e: unknown): HTMLElement {
  if (e instanceof ApiError) {
    return h("div", { class: "error", role: "alert", "data-code": e.code },
      h("strong", {}, e.code), ": ", e.message,
      e.traceId ? h("span", { class: "trace" }, " (trace id ", h("code", {}, e.traceId), ")") : null);
  }
  return h("div", { class: "error", role: "alert" }, h("strong", {}, "Error"), ": ", String(e));
}

export function loading(what = "Loading…"): HTMLElement {
  return h("p", { class: "loading", role: "status", "aria-live": "polite" }, what);
}

export function empty(what: string): HTMLElement {
  return h("p", { class: "empty" }, what);
}

/**
 * load shows a loading state in target, runs work, and puts what it
 * renders (or the error) in its place. It returns whether work succeeded.
 */
export async function load<T>(target: Element, work: () => Promise<T>, render: (v: T) => Child, what?: string): Promise<boolean> {
  target.setAttribute("aria-busy", "true");
  clear(target, loading(what));
  try {
    const v = await work();
    clear(target, render(v));
    return true;
  } catch (e) {
    clear(target, errorBox(e));
    return false;
  } finally {
    target.removeAttribute("aria-busy");
  }
}

/** field is a labelled form control. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  const id = control.id || "f-" + label.toLowerCase().replace(/[^a-z0-9]+/g, "-");
  control.id = id;
  return h("div", { class: "field" }, h("label", { for: id }, label), control, hint ? h("small", {}, hint) : null);
}

export function table(head: string[], rows: Child[][], caption?: string): HTMLElement {
  return h("div", { class: "table-wrap" },
    h("table", {},
      caption ? h("caption", {}, caption) : null,
      h("thead", {}, h("tr", {}, head.map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows.map((r) => h("tr", {}, r.map((c) => h("td", {}, c)))))));
}

/** page sets the view: a heading that takes the focus, then the content. */
export function page(main: HTMLElement, title: string, ...content: Child[]): void {
  document.title = title + " — Cairn console";
  const heading = h("h1", { tabindex: "-1" }, title);
  clear(main, heading, ...content);
  heading.focus();
}

export function entityLink(id: string, label?: string): HTMLElement {
  return h("a", { href: "#/entity/" + encodeURIComponent(id) }, label || id);
}

/** plural is "1 observation", "2 observations": a count with its noun. */
export function plural(n: number, noun: string, nouns = noun + "s"): string {
  return `${n} ${n === 1 ? noun : nouns}`;
}
