import type { IncomingHttpHeaders } from 'node:http';

/** `Authorization: Bearer <key>` -> key */
export function bearerToken(value: string | string[] | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^\s*Bearer\s+(\S+)\s*$/i.exec(value);
  return match ? match[1] : undefined;
}

/** Headers that carry a caller's credentials: never forwarded upstream, never logged. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'x-api-key', 'x-gateway-api-key', 'cookie', 'proxy-authorization', 'api-key']);

/**
 * The inbound headers a provider may look at (e.g. `anthropic-beta`): everything except credentials,
 * hop-by-hop and body-framing headers, and per-server MCP credentials (`x-mcp-*`).
 */
export function providerVisibleHeaders(headers: IncomingHttpHeaders): Record<string, string | string[] | undefined> {
  // header names are the client's: no prototype, so a header named `constructor` is only a header
  const out: Record<string, string | string[] | undefined> = Object.create(null);
  for (const name of Object.keys(headers)) {
    if (CREDENTIAL_HEADERS.has(name) || name.startsWith('x-mcp-') || name === 'host' || name === 'content-length' || name === 'connection' || name === 'transfer-encoding') continue;
    out[name] = headers[name];
  }
  return out;
}
