/**
 * Connections to upstream MCP servers: one SDK `Client` per server, connected on first use and kept for
 * the next request (the `initialize` handshake is paid once, not per call). A connection that fails is
 * dropped so the next request opens a new one; when a stateful upstream has expired our session (404),
 * the request is retried once on a fresh connection, which is safe because the upstream did not run it.
 *
 * A request that carries per-user forwarded headers gets its own short-lived connection instead: the
 * pooled connection (and a stateful upstream's session) belongs to the server's stored identity, and one
 * user's credential must never ride on a connection another request can reuse.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResultSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { GatewayError, UpstreamError } from '../../errors/gateway-error';
import { ClientAbortError } from '../../upstream/upstream-client';
import { scrubMessage } from '../../errors/scrub';
import type { Logger, McpTransportFactory } from '../../plugins/contracts';
import { isConnectionFailure, isSessionExpired, toUpstreamGatewayError } from './upstream-errors';

export interface UpstreamTarget {
  /** server id: the pool key */
  id: string;
  /** server name, for error messages (never the URL) */
  name: string;
  url: string;
  /** stored credential and static headers */
  headers: Record<string, string>;
  /** checked before every new connection (egress rule); returns an error message to refuse */
  beforeConnect?: () => Promise<string | undefined>;
  /** only public addresses, enforced by the transport as sockets connect (egress rule) */
  publicOnly?: boolean;
}

export interface UpstreamCallOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** per-user headers for this request only */
  forwarded?: Record<string, string>;
}

export type ServerCapabilities = NonNullable<ReturnType<Client['getServerCapabilities']>>;

interface PooledConnection {
  client: Client;
  /** the URL and headers it was opened with: a changed server record must not reuse it */
  fingerprint: string;
  closed: boolean;
}

interface PoolEntry {
  promise: Promise<PooledConnection>;
  /** set once connected */
  settled?: PooledConnection;
}

const CLIENT_INFO = { name: 'model-gateway', version: '0.1.0' };

export class McpUpstreamPool {
  private readonly connections = new Map<string, PoolEntry>();
  /** an upstream said its tools, prompts or resources changed (stateful upstreams, on their event stream) */
  onListChanged: (serverId: string) => void = () => undefined;

  constructor(
    private readonly transports: McpTransportFactory,
    private readonly logger?: Logger,
  ) {}

  /** Send one JSON-RPC request upstream; resolves with the upstream's result object as it was sent. */
  async request(target: UpstreamTarget, method: string, params: Record<string, unknown> | undefined, options: UpstreamCallOptions): Promise<Record<string, unknown>> {
    return this.withClient(target, options, (client) =>
      // Asking for progress (a no-op handler) lets an upstream that reports it run past the timeout: a long
      // tool call follows the upstream's own pace as long as it shows it is working.
      client.request({ method, params } as any, ResultSchema, { timeout: options.timeoutMs, signal: options.signal, onprogress: () => undefined, resetTimeoutOnProgress: true }),
    );
  }

  /**
   * Run `work` with a connected client. With forwarded headers the client is short-lived; otherwise it is
   * the pooled one, replaced and retried once when the upstream expired its session.
   */
  async withClient<T>(target: UpstreamTarget, options: UpstreamCallOptions, work: (client: Client, capabilities: ServerCapabilities) => Promise<T>): Promise<T> {
    try {
      if (options.forwarded && Object.keys(options.forwarded).length > 0) {
        const client = await this.open(target, { ...target.headers, ...options.forwarded }, options);
        try {
          return await work(client, client.getServerCapabilities() ?? {});
        } finally {
          void client.close().catch(() => undefined);
        }
      }
      const first = await this.pooled(target, options);
      try {
        return await work(first.client, first.client.getServerCapabilities() ?? {});
      } catch (err) {
        // the caller gave up (client gone, time limit): the connection is fine, keep it
        if (options.signal?.aborted) throw err;
        if (isSessionExpired(err) || (first.closed && isConnectionFailure(err))) {
          this.drop(target.id, first);
          const second = await this.pooled(target, options);
          return await work(second.client, second.client.getServerCapabilities() ?? {});
        }
        if (isConnectionFailure(err)) this.drop(target.id, first);
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

  /** Forget a server's connection (its record changed or it was removed). */
  invalidate(id: string): void {
    const entry = this.connections.get(id);
    this.connections.delete(id);
    void entry?.promise.then((c) => this.close(c), () => undefined);
  }

  async closeAll(): Promise<void> {
    const entries = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(entries.map((e) => e.promise.then((c) => this.close(c), () => undefined)));
  }

  private async pooled(target: UpstreamTarget, options: UpstreamCallOptions): Promise<PooledConnection> {
    const fingerprint = JSON.stringify([target.url, target.headers]);
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
        const changed = async () => this.onListChanged(target.id);
        client.setNotificationHandler(ToolListChangedNotificationSchema, changed);
        client.setNotificationHandler(PromptListChangedNotificationSchema, changed);
        client.setNotificationHandler(ResourceListChangedNotificationSchema, changed);
        const connection: PooledConnection = { client, fingerprint, closed: false };
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

  private async open(target: UpstreamTarget, headers: Record<string, string>, options: UpstreamCallOptions): Promise<Client> {
    const refusal = await target.beforeConnect?.();
    if (refusal) throw new UpstreamError(`MCP server ${target.name} may not be reached: ${refusal}`, 'mcp_egress_refused');
    const transport = await this.transports.connect({ url: target.url, headers, publicOnly: target.publicOnly });
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    // The SDK's message may quote the upstream's error body; an upstream that echoes our headers must not
    // get them into the log.
    client.onerror = (err) => this.logger?.debug('mcp upstream transport error', { server: target.name, error: scrubMessage(err.message, Object.values(headers)) });
    try {
      await client.connect(transport, { timeout: options.timeoutMs, signal: options.signal });
    } catch (err) {
      void client.close().catch(() => undefined);
      throw err;
    }
    return client;
  }
}
