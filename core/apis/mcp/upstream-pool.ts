/**
 * Connections to upstream MCP servers: one session per server (upstream-session.ts), connected on first
 * use and kept for the next request (the handshake is paid once, not per call).
 *
 * Revision: a server is first probed with `server/discover` (SDK 2.x, pinned to 2026-07-28) when its
 * transport plugin can carry 2026-07-28 (`connectModern`); a server that does not answer it gets the
 * legacy `initialize` handshake (SDK 1.x). The verdict is remembered per server, so later connections
 * skip the probe (a modern one adopts the remembered `server/discover` answer, no round trip); it is
 * forgotten when a connection fails or the server record changes, so a server that changed revision is
 * learned again.
 *
 * A connection that fails is dropped so the next request opens a new one; when a stateful upstream has expired our session (404),
 * the request is retried once on a fresh connection, which is safe because the upstream did not run it.
 *
 * A request that carries per-user forwarded headers gets its own short-lived connection instead: the
 * pooled connection (and a stateful upstream's session) belongs to the server's stored identity, and one
 * user's credential must never ride on a connection another request can reuse.
 */
import type { DiscoverResult } from '@modelcontextprotocol/client';
import { GatewayError, UpstreamError, UpstreamTimeoutError } from '../../errors/gateway-error';
import { ClientAbortError } from '../../upstream/upstream-client';
import { scrubMessage } from '../../errors/scrub';
import type { Logger } from '../../plugins/contracts';
import { DEFAULT_MCP_TRANSPORT, type McpTransports } from './transports';
import { isConnectionFailure, isSessionExpired, toUpstreamGatewayError } from './upstream-errors';
import { LegacySession, MODERN_REVISION, ModernSession, type ProgressUpdate, type ServerCapabilities, type SessionRequestOptions, type UpstreamSession } from './upstream-session';

export type { ServerCapabilities } from './upstream-session';

export interface UpstreamTarget {
  /** server id: the pool key */
  id: string;
  /** server name, for error messages (never the URL) */
  name: string;
  url: string;
  /** the MCP transport plugin id (default: the built-in streamable-HTTP one) */
  transport?: string;
  /** stored credential and static headers */
  headers: Record<string, string>;
  /** checked before every new connection (egress rule); returns an error message to refuse */
  beforeConnect?: () => Promise<string | undefined>;
  /** only public addresses, enforced by the transport as sockets connect (egress rule) */
  publicOnly?: boolean;
}

export interface UpstreamCallOptions {
  timeoutMs: number;
  /** `request`: the whole call, however often progress restarts `timeoutMs` */
  maxTotalMs?: number;
  signal?: AbortSignal;
  /** per-user headers for this request only */
  forwarded?: Record<string, string>;
  /** the caller's client wants the upstream's progress notifications */
  onprogress?: (progress: ProgressUpdate) => void;
  /** 2026-07-28 upstreams: the input requests the caller's client can answer (upstream-session.ts) */
  clientCapabilities?: Record<string, unknown>;
  /** `tools/call`: the called tool as the upstream listed it (upstream-session.ts) */
  tool?: SessionRequestOptions['tool'];
}

/** What the pool remembers of a server's revision between connections. */
type RevisionVerdict = { kind: 'modern'; discover: DiscoverResult } | { kind: 'legacy' };

interface PooledConnection {
  client: UpstreamSession;
  /** the URL, transport and headers it was opened with: a changed server record must not reuse it */
  fingerprint: string;
  closed: boolean;
  /** requests running on it now */
  active: number;
  /** replaced after a change of the server record: closed once its running requests are done */
  retired?: boolean;
}

interface PoolEntry {
  promise: Promise<PooledConnection>;
  /** set once connected */
  settled?: PooledConnection;
}

export class McpUpstreamPool {
  private readonly connections = new Map<string, PoolEntry>();
  private readonly verdicts = new Map<string, RevisionVerdict>();
  /** what `initialize` negotiated with each legacy server */
  private readonly legacyRevisions = new Map<string, string>();
  /** an upstream said its tools, prompts or resources changed (stateful upstreams, on their event stream) */
  onListChanged: (serverId: string) => void = () => undefined;

  constructor(
    private readonly transports: McpTransports,
    private readonly logger?: Logger,
  ) {}

  /** Send one JSON-RPC request upstream; resolves with the upstream's result object as it was sent. */
  async request(target: UpstreamTarget, method: string, params: Record<string, unknown> | undefined, options: UpstreamCallOptions): Promise<Record<string, unknown>> {
    // Progress restarts the timeout (below), so only this bounds an upstream that keeps reporting. An abort
    // rather than the SDK's maxTotalTimeout: that one checks only as progress arrives, and never tells
    // the upstream to stop.
    const whole = options.maxTotalMs === undefined ? undefined : new AbortController();
    const timer = whole && setTimeout(() => whole.abort(new UpstreamTimeoutError(`MCP server ${target.name} did not finish within ${options.maxTotalMs! / 1000} s.`, 'mcp_upstream_timeout')), options.maxTotalMs);
    const signal = whole ? (options.signal ? AbortSignal.any([options.signal, whole.signal]) : whole.signal) : options.signal;
    try {
      return await this.withClient(target, { ...options, signal }, (client) =>
        // Asking for progress (a no-op handler) lets an upstream that reports it run past the timeout: a long
        // tool call follows the upstream's own pace as long as it shows it is working.
        client.request(method, params, { timeout: options.timeoutMs, signal, onprogress: options.onprogress ?? (() => undefined), resetTimeoutOnProgress: true, clientCapabilities: options.clientCapabilities, tool: options.tool }),
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Run `work` with a connected client. With forwarded headers the client is short-lived; otherwise it is
   * the pooled one, replaced and retried once when the upstream expired its session.
   */
  async withClient<T>(target: UpstreamTarget, options: UpstreamCallOptions, work: (client: UpstreamSession, capabilities: ServerCapabilities) => Promise<T>): Promise<T> {
    try {
      if (options.forwarded && Object.keys(options.forwarded).length > 0) {
        const client = await this.open(target, { ...target.headers, ...options.forwarded }, options);
        try {
          return await work(client, client.capabilities);
        } finally {
          void client.close().catch(() => undefined);
        }
      }
      const first = await this.pooled(target, options);
      try {
        return await this.use(first, work);
      } catch (err) {
        // the caller gave up (client gone, time limit): the connection is fine, keep it
        if (options.signal?.aborted) throw err;
        if (isSessionExpired(err) || (first.closed && isConnectionFailure(err))) {
          this.drop(target.id, first);
          const second = await this.pooled(target, options);
          return await this.use(second, work);
        }
        if (isConnectionFailure(err)) {
          this.drop(target.id, first);
          this.verdicts.delete(target.id); // re-learn the revision at the next connection
        }
        throw err;
      }
    } catch (err) {
      if (options.signal?.aborted) {
        const reason: unknown = options.signal.reason;
        throw reason instanceof GatewayError ? reason : new ClientAbortError();
      }
      throw toUpstreamGatewayError(target.name, err);
    }
  }

  /** The revision the pool last learned for a server (undefined before its first connection). */
  revisionOf(id: string): string | undefined {
    const verdict = this.verdicts.get(id);
    return verdict?.kind === 'modern' ? MODERN_REVISION : verdict ? this.legacyRevisions.get(id) : undefined;
  }

  /**
   * Forget a server's connection (its record changed or it was removed). New requests open a new one;
   * the requests already running on the old one finish there (closing it under them would fail calls
   * the upstream is running, only because an operator rotated a credential).
   */
  invalidate(id: string): void {
    this.verdicts.delete(id);
    const entry = this.connections.get(id);
    this.connections.delete(id);
    void entry?.promise.then((c) => this.retire(c), () => undefined);
  }

  private async use<T>(connection: PooledConnection, work: (client: UpstreamSession, capabilities: ServerCapabilities) => Promise<T>): Promise<T> {
    connection.active++;
    try {
      return await work(connection.client, connection.client.capabilities);
    } finally {
      connection.active--;
      if (connection.retired && connection.active === 0) this.close(connection);
    }
  }

  private retire(connection: PooledConnection): void {
    connection.retired = true;
    if (connection.active === 0) this.close(connection);
  }

  async closeAll(): Promise<void> {
    const entries = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(entries.map((e) => e.promise.then((c) => this.close(c), () => undefined)));
  }

  private async pooled(target: UpstreamTarget, options: UpstreamCallOptions): Promise<PooledConnection> {
    const fingerprint = JSON.stringify([target.url, target.transport, target.headers]);
    const entry = this.connections.get(target.id);
    if (entry) {
      if (!entry.settled) {
        // Someone else is connecting: wait for it, then look again.
        await entry.promise.catch(() => undefined);
        return this.pooled(target, options);
      }
      if (!entry.settled.closed && entry.settled.fingerprint === fingerprint) return entry.settled;
      this.drop(target.id, entry.settled);
    }
    const created: PoolEntry = {
      // A shared connect is not tied to one caller's signal: its abort must not fail the others waiting.
      promise: this.open(target, target.headers, { timeoutMs: options.timeoutMs }).then((client) => {
        // Only the pooled connection listens: it is the one that lives long enough to hear.
        client.onListChanged(() => this.onListChanged(target.id));
        const connection: PooledConnection = { client, fingerprint, closed: false, active: 0 };
        client.onclose = () => {
          connection.closed = true;
        };
        created.settled = connection;
        return connection;
      }),
    };
    this.connections.set(target.id, created);
    created.promise.catch(() => {
      if (this.connections.get(target.id) === created) this.connections.delete(target.id);
    });
    return created.promise;
  }

  private drop(id: string, connection: PooledConnection): void {
    if (this.connections.get(id)?.settled === connection) this.connections.delete(id);
    this.close(connection);
  }

  private close(connection: PooledConnection): void {
    connection.closed = true;
    void connection.client.close().catch(() => undefined);
  }

  private async open(target: UpstreamTarget, headers: Record<string, string>, options: UpstreamCallOptions): Promise<UpstreamSession> {
    const refusal = await target.beforeConnect?.();
    if (refusal) throw new UpstreamError(`MCP server ${target.name} may not be reached: ${refusal}`, 'mcp_egress_refused');
    const transportId = target.transport ?? DEFAULT_MCP_TRANSPORT;
    // a stored server may name a transport plugin the current config no longer loads
    const factory = this.transports.get(transportId);
    if (!factory) throw new UpstreamError(`MCP server ${target.name} uses the MCP transport "${transportId}", which is not loaded.`, 'mcp_transport_unavailable');
    // The SDK's message may quote the upstream's error body; an upstream that echoes our headers must not
    // get them into the log.
    const onerror = (err: Error) => this.logger?.debug('mcp upstream transport error', { server: target.name, error: scrubMessage(err.message, Object.values(headers)) });
    const connectTarget = { url: target.url, headers, publicOnly: target.publicOnly };
    const verdict = this.verdicts.get(target.id);
    if (factory.connectModern && verdict?.kind !== 'legacy') {
      const modern = ModernSession.create(onerror);
      try {
        const transport = await factory.connectModern(connectTarget);
        await modern.client.connect(transport, { timeout: options.timeoutMs, signal: options.signal, ...(verdict ? { prior: verdict } : {}) } as any);
        const discover = modern.discovered;
        if (discover) this.verdicts.set(target.id, { kind: 'modern', discover });
        return modern;
      } catch (err) {
        void modern.close().catch(() => undefined);
        if (options.signal?.aborted) throw err;
        // No `server/discover` (a 2025 server answers it with an error, or refuses it without a session):
        // the legacy handshake below decides. An unreachable server fails there too, with its own error.
      }
    }
    const transport = await factory.connect(connectTarget);
    const legacy = LegacySession.create(onerror);
    try {
      await legacy.client.connect(transport, { timeout: options.timeoutMs, signal: options.signal });
    } catch (err) {
      void legacy.close().catch(() => undefined);
      throw err;
    }
    const negotiated = (transport as { protocolVersion?: unknown }).protocolVersion;
    if (typeof negotiated === 'string') legacy.revision = negotiated;
    this.verdicts.set(target.id, { kind: 'legacy' });
    this.legacyRevisions.set(target.id, legacy.revision);
    return legacy;
  }
}
