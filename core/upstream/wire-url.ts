/** Where an undici dispatch goes: the origin picks the connection pool, the path is sent on the request line. */
export interface WireUrl {
  origin: string;
  path: string;
}

/**
 * Upstream URLs come from the config (a deployment's base URL plus an operation's path), so the same few
 * recur on every request: each is parsed by WHATWG URL once instead of on every attempt. The table is
 * emptied if it ever grows past MAX (a provider hook may build URLs with a per-request query), so it
 * cannot grow without bound.
 */
const MAX = 1_000;
const parsed = new Map<string, WireUrl>();

export function wireUrl(url: string): WireUrl {
  let wire = parsed.get(url);
  if (!wire) {
    const { origin, pathname, search } = new URL(url);
    wire = { origin, path: pathname + search };
    if (parsed.size >= MAX) parsed.clear();
    parsed.set(url, wire);
  }
  return wire;
}
