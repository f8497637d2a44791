// Routes live in the URL's fragment (#/graph?entity=…): entity ids and
// filters, never a key. The fragment is not sent to the server.

export interface Route {
  name: string;
  arg: string;
  params: URLSearchParams;
}

export function parseRoute(hash = location.hash): Route {
  const raw = hash.replace(/^#\/?/, "");
  const [path, query = ""] = raw.split("?", 2);
  const [name = "", ...rest] = path.split("/");
  return { name: name || "graph", arg: decodeURIComponent(rest.join("/")), params: new URLSearchParams(query) };
}

/** go changes the route (the same route renders again); empty params are left out. */
export function go(name: string, arg = "", params: Record<string, string | undefined> = {}): void {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const hash = "#/" + name + (arg ? "/" + encodeURIComponent(arg) : "") + (q.toString() ? "?" + q : "");
  if (location.hash === hash) window.dispatchEvent(new HashChangeEvent("hashchange"));
  else location.hash = hash;
}
