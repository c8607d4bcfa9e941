/**
 * The streamable-HTTP MCP transport (the only upstream transport the gateway accepts): a factory for the
 * SDK's own `StreamableHTTPClientTransport`, carrying the server's stored credential, static headers and
 * any per-request forwarded headers on every HTTP request.
 *
 * Revisions: `connect` gives the SDK 1.x transport (2025-11-25 and earlier); `connectModern` the SDK 2.x
 * one, which also carries 2026-07-28. The core's pool probes each server with the 2.x one first.
 *
 * Sessions: the SDK transport keeps the `Mcp-Session-Id` a stateful upstream returns at `initialize` and
 * sends it back; a stateless upstream simply never sets one. When an upstream forgets a session it answers
 * 404 and the transport throws `StreamableHTTPError(404)`; the core's connection pool then drops that
 * connection and opens a new one (see core/apis/mcp/upstream-pool.ts), which initializes a fresh session.
 */
import type * as LegacyTransportSdk from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type * as ModernClientSdk from '@modelcontextprotocol/client';
import { definePlugin, isInternalAddress, outboundTraceHeaders, type McpTransportFactory, type McpTransportTarget, type PluginDeps } from '../../core/plugins/sdk';
import { abortCancelledRequests } from './abort-cancelled';
import { createRequestFetch } from './request-fetch';

export interface StreamableHttpOptions {
  /**
   * "request" (default): an undici.request-based fetch with a pool of its own, about twice as fast for
   * MCP's small exchanges; "fetch": the gateway's shared WHATWG fetch (PluginDeps.fetch).
   */
  httpClient?: 'request' | 'fetch';
  /** retries of the optional server-to-client SSE stream (GET) after it drops; default 2 */
  sseMaxRetries?: number;
  /** first delay before such a retry, doubled each time up to 30 s; default 1000 */
  sseInitialDelayMs?: number;
}

export const optionsSchema = {
  type: 'object',
  properties: {
    httpClient: { type: 'string', enum: ['request', 'fetch'] },
    sseMaxRetries: { type: 'integer', minimum: 0, maximum: 100 },
    sseInitialDelayMs: { type: 'integer', minimum: 1, maximum: 60_000 },
  },
  additionalProperties: false,
} as const;

export function createStreamableHttpFactory(options: StreamableHttpOptions, deps: Pick<PluginDeps, 'fetch'>): McpTransportFactory {
  const reconnectionOptions = {
    maxRetries: options.sseMaxRetries ?? 2,
    initialReconnectionDelay: options.sseInitialDelayMs ?? 1000,
    reconnectionDelayGrowFactor: 2,
    maxReconnectionDelay: 30_000,
  };
  const own = options.httpClient === 'fetch' ? undefined : createRequestFetch();
  // Servers an organisation admin registered may only reach public addresses, checked as each socket
  // connects (a DNS answer can change after the gateway's own check).
  const publicOnly = createRequestFetch({ refuseAddress: (a) => (isInternalAddress(a) ? `${a} is not a public address` : undefined) });
  const httpFetch = own ?? deps.fetch;
  const traced = withTraceHeaders(httpFetch);
  const tracedPublicOnly = withTraceHeaders(publicOnly);
  return {
    async close() {
      await own?.close();
      await publicOnly.close();
    },
    // The SDKs are required at the first connection, not when the plugin is registered: a gateway
    // with no MCP server never loads them (core/apis/mcp/sdk.ts says why).
    connect(target: McpTransportTarget) {
      const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js') as typeof LegacyTransportSdk;
      const { url, headers } = withoutUserinfo(target);
      return new StreamableHTTPClientTransport(url, {
        // The SDK merges these into every POST, GET and DELETE it sends.
        requestInit: { headers },
        // the SDK 1.x leaves a request it gave up open: this closes it (abort-cancelled.ts)
        fetch: abortCancelledRequests(target.publicOnly ? tracedPublicOnly : traced),
        reconnectionOptions,
      });
    },
    // The SDK 2.x transport: the same requests, plus the 2026-07-28 headers (MCP-Protocol-Version,
    // Mcp-Method, Mcp-Name) on each POST. The pool probes each server with it (server/discover).
    connectModern(target: McpTransportTarget) {
      const { StreamableHTTPClientTransport: ModernStreamableHTTPClientTransport } = require('@modelcontextprotocol/client') as typeof ModernClientSdk;
      const { url, headers } = withoutUserinfo(target);
      return new ModernStreamableHTTPClientTransport(url, {
        requestInit: { headers },
        // the 2.x client closes a request it gave up itself, but waits out its timeout as 1.x does for an
        // answer that ended (or came with another id) without the result: the same guard (abort-cancelled.ts)
        fetch: abortCancelledRequests(target.publicOnly ? tracedPublicOnly : traced),
        reconnectionOptions,
      });
    },
  };
}

/**
 * Credentials written in the URL's user part (`https://user:pass@host/mcp`, or a token as the user name)
 * go as HTTP Basic, as curl and browsers send them: neither undici nor WHATWG fetch sends userinfo (fetch
 * refuses such a URL). A stored credential (an Authorization header) wins.
 */
function withoutUserinfo(target: McpTransportTarget): { url: URL; headers: Record<string, string> } {
  const url = new URL(target.url);
  const headers = { ...target.headers };
  if (url.username || url.password) {
    const hasAuthorization = Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
    if (!hasAuthorization) headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  return { url, headers };
}

/**
 * The connection is shared by every request to the server, so the trace of the call being made is read
 * per HTTP request: the gateway sets it around each upstream call while tracing is on (nothing otherwise).
 */
function withTraceHeaders(inner: typeof fetch): typeof fetch {
  return ((input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const trace = outboundTraceHeaders();
    if (!trace) return inner(input, init);
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(trace)) headers.set(name, value);
    return inner(input, { ...init, headers });
  }) as typeof fetch;
}

export default definePlugin<'mcp-transport', StreamableHttpOptions, McpTransportFactory>({
  kind: 'mcp-transport',
  id: 'mcp-streamable-http',
  apiVersion: 1,
  optionsSchema,
  create: (options, deps) => createStreamableHttpFactory(options ?? {}, deps),
});
