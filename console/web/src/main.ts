import "./style.css";
import { ApiError, consoleApi, forgetKey, storedKey, storeKey, type Session } from "./api";
import { clear, h } from "./dom";
import { errorBox, field, page } from "./ui";
import { parseRoute, type Route } from "./router";
import { graphView, typeColor } from "./views/graph";
import { entityView } from "./views/entity";
import { memoriesView } from "./views/memories";
import { contextView } from "./views/context";
import { agentsView, auditView, clientsView, consentView, reviewView } from "./views/owner";

export type View = (main: HTMLElement, route: Route, session: Session) => void | Promise<void>;

interface ViewDef {
  name: string;
  title: string;
  view: View;
  owner?: boolean;
  nav?: boolean;
}

const views: ViewDef[] = [
  { name: "graph", title: "Graph", view: graphView },
  { name: "entity", title: "Entity", view: entityView, nav: false },
  { name: "memories", title: "Memories", view: memoriesView },
  { name: "context", title: "Context", view: contextView },
  { name: "agents", title: "Agents & keys", view: agentsView, owner: true },
  { name: "consent", title: "Consent", view: consentView, owner: true },
  { name: "clients", title: "Connected clients", view: clientsView, owner: true },
  { name: "audit", title: "Audit log", view: auditView, owner: true },
  { name: "review", title: "Contradictions", view: reviewView, owner: true },
];

const main = document.getElementById("main") as HTMLElement;
const nav = document.getElementById("nav") as HTMLElement;
const who = document.getElementById("who") as HTMLElement;
let session: Session | null = null;

function renderNav(s: Session): void {
  const current = parseRoute().name;
  clear(nav, h("ul", {}, views.filter((v) => v.nav !== false && (!v.owner || s.owner)).map((v) =>
    h("li", {}, h("a", { href: "#/" + v.name, "aria-current": v.name === current ? "page" : undefined }, v.title)))));
  nav.hidden = false;
  clear(who,
    h("span", { class: "agent", title: "the key's agent" }, s.agent, s.owner ? " (owner)" : ""),
    h("button", { type: "button", class: "link", id: "sign-out", onclick: signOut }, "Sign out"));
}

function signOut(): void {
  forgetKey();
  session = null;
  nav.hidden = true;
  clear(who);
  void render();
}

function signIn(reason?: unknown): void {
  nav.hidden = true;
  clear(who);
  const key = h("input", { type: "password", name: "key", autocomplete: "off", spellcheck: "false", required: true, placeholder: "cairn_sk_…" });
  const status = h("div", { "aria-live": "polite" }, reason ? errorBox(reason) : null);
  const form = h("form", { class: "signin", novalidate: true }, field("API key", key, "An agent's key shows what that agent may read; the owner's key shows everything and the owner views. It is kept in this tab only."),
    h("button", { type: "submit" }, "Sign in"), status);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const k = key.value.trim();
    if (!k) {
      clear(status, errorBox(new ApiError(0, "VALIDATION_ERROR", "enter a key", "")));
      return;
    }
    clear(status, h("p", { class: "loading", role: "status" }, "Checking the key…"));
    try {
      session = await consoleApi<Session>("GET", "session", undefined, k);
      storeKey(k);
      void render();
    } catch (e) {
      clear(status, errorBox(e));
      key.focus();
    }
  });
  page(main, "Sign in to Cairn", form);
  key.focus();
}

async function render(): Promise<void> {
  if (!storedKey()) {
    signIn();
    return;
  }
  if (!session) {
    try {
      session = await consoleApi<Session>("GET", "session");
    } catch (e) {
      forgetKey();
      signIn(e);
      return;
    }
  }
  const route = parseRoute();
  const def = views.find((v) => v.name === route.name) ?? views[0];
  renderNav(session);
  if (def.owner && !session.owner) {
    page(main, def.title, h("div", { class: "error", role: "alert", "data-code": "FORBIDDEN" },
      h("strong", {}, "Owner only"), `: this view is for the owner's key; you are signed in as agent ${session.agent}.`));
    return;
  }
  try {
    await def.view(main, route, session);
  } catch (e) {
    page(main, def.title, errorBox(e));
  }
}

// Badges and swatches take their entity type's colour, the graph's too.
// Set through the CSSOM, which the Content-Security-Policy allows (it
// forbids style attributes in markup and inline style elements).
function paint(root: ParentNode): void {
  for (const el of root.querySelectorAll<HTMLElement>(".badge[data-type], .swatch[data-type]")) {
    if (!el.style.backgroundColor) el.style.backgroundColor = typeColor(el.dataset.type ?? "");
  }
}
new MutationObserver(() => paint(document.body)).observe(document.body, { childList: true, subtree: true });

// The skip link moves the focus without touching the fragment, which
// holds the route.
document.querySelector("a.skip")?.addEventListener("click", (ev) => {
  ev.preventDefault();
  main.focus();
});

window.addEventListener("hashchange", () => void render());
void render();
