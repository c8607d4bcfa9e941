/**
 * The headers sent to one upstream MCP server (interface.md §5.7-5.8, issue rule 8): its static headers,
 * its stored credential, and, for each name in its `forwardHeaders`, the inbound `x-mcp-<alias>-<name>`
 * value sent as `<name>`. Nothing else from the inbound request goes upstream: no Authorization, no
 * gateway key, no cookies. Later layers win: static < stored credential < per-user forwarded value.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { McpAuthConfig } from '../../config/types';
import { emptyLookup, ownValue } from '../../lookup/own-keys';
import { DEFAULT_API_KEY_HEADER, type McpServerRecord, type McpServerSecrets } from './server-record';

export type InboundHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** The `x-mcp-*` request headers (server selection, per-user credentials), in a table without a prototype. */
export function mcpHeadersOf(headers: IncomingHttpHeaders): InboundHeaders {
  const out: Record<string, string | string[] | undefined> = Object.create(null);
  for (const name of Object.keys(headers)) if (name.startsWith('x-mcp-')) out[name] = headers[name];
  return out;
}

/**
 * The user and password as the Authorization header carries them. A secret too, scrubbed in this form:
 * an upstream that echoes our headers sends it back encoded, where the plain values are not found.
 */
export function basicCredentials(username: string, password: string): string {
  return Buffer.from(`${username}:${password}`).toString('base64');
}

export function credentialHeaders(auth: McpAuthConfig<string>): Record<string, string> {
  switch (auth.type) {
    case 'none':
      return {};
    case 'api_key':
      // the header name is an operator's (or org admin's) choice: keep it an own property whatever it is
      return Object.assign(emptyLookup<string>(), { [(auth.header ?? DEFAULT_API_KEY_HEADER).toLowerCase()]: auth.key });
    case 'bearer':
      return { authorization: `Bearer ${auth.token}` };
    case 'basic':
      return { authorization: `Basic ${basicCredentials(auth.username, auth.password)}` };
  }
}

/** The headers every connection to this server carries (built once per server, not per request). */
export function baseUpstreamHeaders(secrets: McpServerSecrets): Record<string, string> {
  // header names come from operators and org admins: a null-prototype table keeps `__proto__` a header
  const headers = emptyLookup<string>();
  for (const [name, value] of Object.entries(secrets.staticHeaders)) headers[name.toLowerCase()] = value;
  return Object.assign(headers, credentialHeaders(secrets.auth));
}

/** The per-user headers this request carries for this server only. */
export function forwardedHeaders(record: Pick<McpServerRecord, 'alias' | 'forwardHeaders'>, inbound: InboundHeaders): Record<string, string> {
  const out = emptyLookup<string>();
  if (record.forwardHeaders.length === 0) return out;
  const prefix = `x-mcp-${record.alias.toLowerCase()}-`;
  for (const name of record.forwardHeaders) {
    const value = ownValue(inbound, prefix + name.toLowerCase());
    const text = Array.isArray(value) ? value.join(', ') : value;
    if (text !== undefined && text !== '') out[name.toLowerCase()] = text;
  }
  return out;
}

/** Every header name any server could read from the inbound request: what logs must never show. */
export function isPerUserCredentialHeader(name: string): boolean {
  return name.toLowerCase().startsWith('x-mcp-') && name.toLowerCase() !== 'x-mcp-servers';
}
