/**
 * What a plugin author implements (design.md §4). Plugin code never sees the DI container: everything
 * it may use arrives in `PluginDeps`.
 */
import type { JSONSchemaType } from 'ajv';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Transport as ModernTransport } from '@modelcontextprotocol/client';
import type { GatewayError } from '../errors/gateway-error';
import type { SseFrame } from '../streaming/sse-frame';
import type { ModelConfig, ProviderConfig } from '../config/types';

export type PluginKind = 'provider' | 'guardrail' | 'mcp-transport';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface Clock {
  /** milliseconds since the epoch */
  now(): number;
}

/** A namespaced key-value store for a plugin's own state. */
export interface PluginStore {
  get<T = unknown>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown, ttlMs?: number): Promise<void>;
  delete(key: string): Promise<void>;
}

/** The HTTP client plugins may use (undici's fetch, sharing the gateway's connection pools). */
export type HttpFetch = typeof fetch;

export interface PluginDeps {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly store: PluginStore;
  readonly fetch: HttpFetch;
}

/** What the config says around the plugin's own options. */
export interface PluginContext {
  /** provider plugins: the provider entry being created, secrets resolved (one instance per entry) */
  readonly provider?: ProviderConfig<string>;
}

export interface PluginDefinition<K extends PluginKind = PluginKind, O = any, I = any> {
  readonly kind: K;
  readonly id: string;
  readonly apiVersion: 1;
  readonly optionsSchema: JSONSchemaType<O> | Record<string, unknown>;
  /** An Error thrown here stops the boot with its message, under the options' path. */
  create(options: O, deps: PluginDeps, context?: PluginContext): I | Promise<I>;
}

// ---------------------------------------------------------------------------------------------------
// Providers
// ---------------------------------------------------------------------------------------------------

/** The API shapes an endpoint speaks; a provider serves some of them natively. */
export type ApiFormat =
  | 'chat'
  | 'embeddings'
  | 'messages'
  | 'messages.count_tokens'
  | 'images.generations'
  | 'images.edits';

/** Where a request is going: the model entry and its provider's settings, secrets resolved. */
export interface ProviderTarget {
  readonly model: ModelConfig & { id: string; model: string };
  readonly provider: ProviderConfig<string>;
  /** provider.baseUrl, or the plugin's default */
  readonly baseUrl: string;
}

/** What the client sent that a provider may need, beyond the body (never the client's credentials). */
export interface InboundInfo {
  /** lower-cased request headers with credentials removed */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /**
   * The client's body exactly as received, present only while the `request` given to `toUpstream` is
   * its parse unchanged (the client's own format, no input guardrail attached). An operation that only
   * renames the model can send it with `bodyWithModel` rather than serialise the request again.
   */
  readonly bodyText?: string;
}

export interface UpstreamRequest {
  /** appended to the target's baseUrl */
  path: string;
  method?: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string | Uint8Array | AsyncIterable<Uint8Array>;
}

/**
 * The request exactly as it goes on the wire, handed to `Provider.prepareRequest` as the last step before
 * it is sent: the full URL (base URL + path, query included), the method, every header and the body's
 * bytes (a body streamed from the client is gathered first). What the hook returns is what is sent.
 */
export interface PreparedRequest {
  url: string;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: Uint8Array;
}

/**
 * Turns an upstream's streamed body into events, for upstreams whose stream is not SSE (AWS binary
 * event-stream frames, a JSON array written piece by piece). The events are `SseFrame`s so the
 * operation's `fromUpstreamEvent` reads them as it reads SSE frames: `event` names the kind of event
 * and `data` carries its payload (JSON text).
 */
export interface StreamDecoder {
  /** one chunk of the body in, the events it completes out */
  push(chunk: Uint8Array): SseFrame[];
  /** the body ended: events still held, or throw if it ended in the middle of one (a cut stream) */
  end?(): SseFrame[];
}

/** Per-stream scratch space for a translator (e.g. which content block is open). */
export type StreamState = Record<string, unknown>;

/** An operation the provider serves by calling an upstream over HTTP; the core does the I/O. */
export interface HttpOperation<Req = any, Res = any> {
  toUpstream(request: Req, target: ProviderTarget, inbound: InboundInfo): UpstreamRequest;
  fromUpstream(body: any, target: ProviderTarget, request: Req): Res;
  /**
   * The decoder for a streamed answer with this content type. Absent (or returning undefined): an answer
   * of type `text/event-stream` is read as SSE, any other as one JSON document.
   */
  streamDecoder?(contentType: string, target: ProviderTarget): StreamDecoder | undefined;
  /** One upstream SSE frame (or decoder event) in, zero or more frames of this operation's client format out. */
  fromUpstreamEvent?(frame: SseFrame, state: StreamState, target: ProviderTarget): SseFrame | SseFrame[] | null;
  /** Frames to send after the upstream's last frame (e.g. a closing event). */
  endOfStream?(state: StreamState, target: ProviderTarget): SseFrame[];
  /**
   * For an upstream that takes less in one call than a client may send (Vertex AI's gemini-embedding-001
   * embeds one input a call): the requests to send instead of this one, undefined (or one) to send it as
   * it is. Each part is its own call, a few at a time, read with `fromUpstream`; the first part to fail
   * fails the request. `join` makes the client's answer from the parts' answers, in the parts' order.
   * Never for a stream; both hooks or neither.
   */
  split?(request: Req, target: ProviderTarget): Req[] | undefined;
  join?(answers: Res[], request: Req, target: ProviderTarget): Res;
}

export interface LocalResult<Res> {
  body?: Res;
  stream?: AsyncIterable<SseFrame>;
}

/** An operation answered in process, with no upstream (the echo demo model). */
export interface LocalOperation<Req = any, Res = any> {
  readonly local: true;
  invoke(request: Req, target: ProviderTarget, signal: AbortSignal): Promise<LocalResult<Res>>;
}

export type ProviderOperation<Req = any, Res = any> = HttpOperation<Req, Res> | LocalOperation<Req, Res>;

export interface Provider {
  /** used when the provider config has no baseUrl */
  readonly defaultBaseUrl?: string;
  /** The formats served natively. A model call in another format is translated to `chat` by the core. */
  readonly operations: Partial<Record<ApiFormat, ProviderOperation>>;
  /**
   * The last step before each attempt is sent (again on every retry): sign the final bytes (SigV4), add
   * an OAuth token the provider fetched and caches, move the request to another URL. Runs inside the
   * attempt's first-byte deadline; `signal` aborts when the client goes away or the deadline passes.
   * A GatewayError it throws reaches the client as it is; any other error becomes a 502
   * `upstream_auth_failed` without its message (it may hold a credential).
   */
  prepareRequest?(request: PreparedRequest, target: ProviderTarget, signal: AbortSignal): PreparedRequest | Promise<PreparedRequest>;
  /** Turn an upstream error answer into a GatewayError; never echo credentials or the upstream URL. */
  toError(status: number, body: unknown, headers: Record<string, string | string[] | undefined>): GatewayError;
}

export function isLocalOperation(op: ProviderOperation): op is LocalOperation {
  return (op as LocalOperation).local === true;
}

// ---------------------------------------------------------------------------------------------------
// Guardrail engines
// ---------------------------------------------------------------------------------------------------

/** A piece of text the core extracted from a request or response. Engines return masked text by id. */
export interface TextSegment {
  readonly id: number;
  readonly text: string;
  /** where it came from, for messages: e.g. "messages[1].content[0].text" */
  readonly path: string;
}

export interface GuardrailInput {
  readonly phase: 'pre' | 'post';
  readonly traffic: 'chat' | 'mcp';
  readonly segments: readonly TextSegment[];
  /** model name or `<server>/<tool>` */
  readonly target: string;
}

export type GuardrailVerdict =
  | { action: 'allow' }
  | { action: 'mask'; segments: { id: number; text: string }[]; findings?: string[] }
  | { action: 'block'; code: string; reason: string };

export interface GuardrailEngine {
  check(input: GuardrailInput, signal: AbortSignal): GuardrailVerdict | Promise<GuardrailVerdict>;
}

// ---------------------------------------------------------------------------------------------------
// MCP transports
// ---------------------------------------------------------------------------------------------------

export interface McpTransportTarget {
  readonly url: string;
  /** stored credential and static headers, already resolved, plus per-request forwarded headers */
  readonly headers: Record<string, string>;
  /** connect only to public addresses (the host name is checked again as the socket connects) */
  readonly publicOnly?: boolean;
}

/**
 * `data.reason` of the JSON-RPC error (code -32000, connection closed) a transport answers a request
 * with when the server's stream for it ended without the answer: the gateway reports
 * `mcp_upstream_unanswered` at once instead of waiting for the call's timeout.
 */
export const MCP_UNANSWERED_REASON = 'stream_ended_unanswered';

export interface McpTransportFactory {
  /** A fresh SDK transport for one connection to the upstream server. */
  connect(target: McpTransportTarget): Transport | Promise<Transport>;
  /**
   * Optional: a fresh SDK 2.x (`@modelcontextprotocol/client`) transport for the same target, which can
   * carry MCP revision 2026-07-28 (per-request `_meta` envelope, `MCP-Protocol-Version` and `Mcp-Method`
   * headers). A factory that has it lets the gateway probe each server with `server/discover` and speak
   * 2026-07-28 to those that answer; without it every server is spoken to in 2025-11-25 over `connect`.
   */
  connectModern?(target: McpTransportTarget): ModernTransport | Promise<ModernTransport>;
  /** Release what the factory holds (connection pools); called when the gateway stops. */
  close?(): Promise<void>;
}

export type ProviderPlugin<O = any> = PluginDefinition<'provider', O, Provider>;
export type GuardrailPlugin<O = any> = PluginDefinition<'guardrail', O, GuardrailEngine>;
export type McpTransportPlugin<O = any> = PluginDefinition<'mcp-transport', O, McpTransportFactory>;
