// The console's only way to the service: the REST facade of the tools
// (POST /mcp/call/{tool}) and the owner API (/console/api/), always with the
// key as a bearer token. The key lives in this tab's sessionStorage and
// never goes into a URL.

const keyName = "cairn.key";

export function storedKey(): string | null {
  return sessionStorage.getItem(keyName);
}

export function storeKey(key: string): void {
  sessionStorage.setItem(keyName, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(keyName);
}

/** ApiError is an error answer of the service: its code, message and trace id. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly traceId: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

interface ErrorBody {
  code?: string;
  message?: string;
  trace_id?: string;
  details?: Record<string, unknown>;
}

async function request(method: string, path: string, body: unknown, key = storedKey()): Promise<unknown> {
  if (!key) {
    throw new ApiError(401, "UNAUTHORIZED", "sign in with an API key first", "");
  }
  const headers: Record<string, string> = { Authorization: "Bearer " + key, Accept: "application/json" };
  const init: RequestInit = { method, headers, credentials: "omit", cache: "no-store", referrerPolicy: "no-referrer" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res: Response;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, "NETWORK_ERROR", "the service did not answer: " + String(e), "");
  }
  let data: unknown = null;
  const text = await res.text();
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      throw new ApiError(res.status, "BAD_RESPONSE", `the service answered ${res.status} with something that is not JSON`, "");
    }
  }
  const obj = (data ?? {}) as { success?: boolean; result?: unknown; error?: ErrorBody };
  if (!res.ok || obj.success === false || (obj.error && typeof obj.error === "object")) {
    const e = obj.error ?? {};
    throw new ApiError(res.status, e.code ?? "HTTP_" + res.status, e.message ?? res.statusText, e.trace_id ?? "", e.details ?? {});
  }
  return "success" in obj ? obj.result : data;
}

/** call runs one tool through the REST facade, under the key's consent. */
export function call<T>(tool: string, args: Record<string, unknown> = {}): Promise<T> {
  return request("POST", "/mcp/call/" + encodeURIComponent(tool), args) as Promise<T>;
}

/** consoleApi calls the console's own API (session, agents, keys, preview). */
export function consoleApi<T>(method: "GET" | "POST", path: string, body?: unknown, key?: string): Promise<T> {
  return request(method, "/console/api/" + path, body, key ?? storedKey()) as Promise<T>;
}

export interface Session {
  user: string;
  agent: string;
  agent_id: string;
  key_id: string;
  owner: boolean;
  built: boolean;
}

/**
 * callPages runs a tool and, while its answer was cut to fit the tool's
 * response budget (meta.next_cursor), calls it again with the same
 * arguments and the cursor, up to pages calls, appending each list of the
 * answer. more is true when the last answer still had a cursor.
 */
export async function callPages<T extends object>(tool: string, args: Record<string, unknown>, pages = 5): Promise<T & { more: boolean }> {
  let out = await call<T & { meta?: { next_cursor?: string } }>(tool, args);
  let cursor = out.meta?.next_cursor;
  for (let i = 1; i < pages && cursor; i++) {
    const next = await call<Record<string, unknown> & { meta?: { next_cursor?: string } }>(tool, { ...args, cursor });
    const merged = out as unknown as Record<string, unknown>;
    for (const [k, v] of Object.entries(next)) {
      if (Array.isArray(v) && Array.isArray(merged[k])) merged[k] = [...(merged[k] as unknown[]), ...v];
    }
    cursor = next.meta?.next_cursor;
  }
  return { ...out, more: !!cursor };
}
