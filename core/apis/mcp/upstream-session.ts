/**
 * One open connection to an upstream MCP server, whichever revision it speaks. The pool and discovery
 * talk to this, never to an SDK client directly, so the two SDK generations stay behind one face:
 *
 * - `2025-11-25` (and earlier): an SDK 1.x `Client` after the `initialize` handshake, over the transport
 *   plugin's `connect`.
 * - `2026-07-28`: an SDK 2.x `Client` after `server/discover`, over the plugin's `connectModern`; every
 *   request carries the `_meta` envelope and the 2026 headers (the SDK adds them). `input_required`
 *   results are handed back as they came (`allowInputRequired`), so the gateway can relay them.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Client as ModernClient, DiscoverResult } from '@modelcontextprotocol/client';
import { legacyClient, legacyTypes, modernClient } from './sdk';
import { settleWithin } from '../../time/settle-within';

/** The revision a legacy upstream negotiated at `initialize` is whatever it said; modern ones say this. */
export const MODERN_REVISION = '2026-07-28';
export const LEGACY_REVISION = '2025-11-25';

export type ServerCapabilities = Record<string, unknown>;

export interface ProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

export interface SessionRequestOptions {
  timeout: number;
  signal?: AbortSignal;
  onprogress?: (progress: ProgressUpdate) => void;
  resetTimeoutOnProgress?: boolean;
  /**
   * 2026-07-28: what the gateway's own client can answer (elicitation, sampling, roots), declared to the
   * upstream as ours for this request, since the gateway relays its input requests to that client
   */
  clientCapabilities?: Record<string, unknown>;
  /**
   * `tools/call`: the called tool as the upstream listed it. A 2026-07-28 upstream requires each argument
   * its input schema marks `x-mcp-header` as an `Mcp-Param-*` header too, and refuses the call without it
   */
  tool?: { name: string; inputSchema: Record<string, unknown> };
}

export interface UpstreamSession {
  /** the protocol revision this connection speaks */
  readonly revision: string;
  readonly capabilities: ServerCapabilities;
  /** the upstream's result object as it sent it (a modern `complete` result without `resultType`) */
  request(method: string, params: Record<string, unknown> | undefined, options: SessionRequestOptions): Promise<Record<string, unknown>>;
  /** set by the pool: the upstream said a list changed (stateful legacy upstreams, on their event stream) */
  onListChanged(handler: () => void): void;
  onclose?: () => void;
  close(): Promise<void>;
}

const CLIENT_INFO = { name: 'model-gateway', version: '0.1.0' };

export class LegacySession implements UpstreamSession {
  onclose?: () => void;
  constructor(readonly client: Client) {
    client.onclose = () => this.onclose?.();
  }
  static create(onerror: (err: Error) => void): LegacySession {
    const client = new (legacyClient().Client)(CLIENT_INFO, { capabilities: {} });
    client.onerror = onerror;
    return new LegacySession(client);
  }
  /** what `initialize` negotiated (the SDK 1.x transport keeps it; a plugin's transport may not) */
  revision = LEGACY_REVISION;
  get capabilities(): ServerCapabilities {
    return (this.client.getServerCapabilities() ?? {}) as ServerCapabilities;
  }
  request(method: string, params: Record<string, unknown> | undefined, options: SessionRequestOptions) {
    const { clientCapabilities: _modernOnly, tool: _headersModernOnly, ...requestOptions } = options;
    return this.client.request({ method, params } as any, legacyTypes().ResultSchema, requestOptions) as Promise<Record<string, unknown>>;
  }
  onListChanged(handler: () => void): void {
    const changed = async () => handler();
    const { ToolListChangedNotificationSchema, PromptListChangedNotificationSchema, ResourceListChangedNotificationSchema } = legacyTypes();
    this.client.setNotificationHandler(ToolListChangedNotificationSchema, changed);
    this.client.setNotificationHandler(PromptListChangedNotificationSchema, changed);
    this.client.setNotificationHandler(ResourceListChangedNotificationSchema, changed);
  }
  async close(): Promise<void> {
    // A stateful upstream keeps a session until it is told it is over (DELETE): without it, every
    // connection we drop (a per-user call's own, one replaced after a record change) stays behind there.
    // A plugin's transport may have no sessions; an upstream that does not answer only delays the close.
    const transport = this.client.transport as { sessionId?: string; terminateSession?: () => Promise<void> } | undefined;
    if (transport?.sessionId && typeof transport.terminateSession === 'function') await settleWithin(transport.terminateSession().catch(() => undefined), END_SESSION_WAIT_MS, () => undefined);
    return this.client.close();
  }
}

/** how long closing a connection waits for the upstream to acknowledge the end of its session */
const END_SESSION_WAIT_MS = 2000;

export class ModernSession implements UpstreamSession {
  readonly revision = MODERN_REVISION;
  onclose?: () => void;
  constructor(readonly client: ModernClient) {
    client.onclose = () => this.onclose?.();
  }
  /**
   * A client pinned to 2026-07-28: `connect` probes with `server/discover` and fails on anything else
   * (the pool then falls back to the legacy handshake). Auto-fulfilment is off: the gateway has no user
   * to ask; it relays `input_required` to its own client instead.
   */
  static create(onerror: (err: Error) => void): ModernSession {
    const client = new (modernClient().Client)(CLIENT_INFO, { capabilities: {}, versionNegotiation: { mode: { pin: MODERN_REVISION } }, inputRequired: { autoFulfill: false } } as any);
    client.onerror = onerror;
    return new ModernSession(client);
  }
  get discovered(): DiscoverResult | undefined {
    return this.client.getDiscoverResult();
  }
  get capabilities(): ServerCapabilities {
    return (this.client.getServerCapabilities() ?? {}) as ServerCapabilities;
  }
  request(method: string, params: Record<string, unknown> | undefined, options: SessionRequestOptions) {
    const { clientCapabilities, tool, ...requestOptions } = options;
    const { CLIENT_CAPABILITIES_META_KEY } = modernClient();
    // our `_meta` keys take precedence over the ones the SDK attaches: the capabilities are the client's
    const sent = clientCapabilities ? { ...params, _meta: { ...(params?._meta as object | undefined), [CLIENT_CAPABILITIES_META_KEY]: clientCapabilities } } : params;
    // an `input_required` result comes back as it was sent, for the gateway to relay
    const sendOptions = { ...requestOptions, allowInputRequired: true };
    if (method === 'tools/call' && tool) {
      // only callTool mirrors the `x-mcp-header` arguments as `Mcp-Param-*` headers; given the input schema
      // alone (no output schema), it leaves the result as the upstream sent it
      return this.client.callTool(sent as any, { ...sendOptions, toolDefinition: { name: tool.name, inputSchema: tool.inputSchema } } as any) as Promise<Record<string, unknown>>;
    }
    return this.client.request({ method: method as any, params: sent }, sendOptions as any) as Promise<Record<string, unknown>>;
  }
  onListChanged(): void {
    // 2026-07-28 announces changes on `subscriptions/listen` streams; the periodic check covers them
  }
  close(): Promise<void> {
    return this.client.close();
  }
}
