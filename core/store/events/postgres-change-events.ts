import pg from 'pg';
import { closedWithin } from '../faults/bounded-close';
import { settleWithin } from '../../time/settle-within';
import { parseChangeEvent, type ChangeEvent, type ChangeEvents } from './change-events';
import { Subscribers } from './subscribers';

/** The LISTEN/NOTIFY channel every instance on one PostgreSQL database shares. */
export const CHANGE_CHANNEL = 'mg_changes';

/**
 * How often the listener's connection is asked a `SELECT 1`, and how long it has to answer. It only
 * receives: one that a NAT or load balancer dropped after its idle timeout (minutes on the common
 * clouds), or whose server vanished, delivered no NOTIFY again and nothing said so, and every change
 * reached this instance only when its cache expired, until it restarted. The question keeps the
 * connection from idling, and a connection that does not answer is replaced.
 */
const HEARTBEAT_MS = 30_000;

/**
 * PostgreSQL LISTEN/NOTIFY between gateway instances, for a fleet on PostgreSQL without Redis. One
 * connection of its own listens (a pooled one could not: LISTEN belongs to a session); publishing takes
 * a short-lived connection from a small pool. A listener connection that drops is opened again after a
 * pause; events sent meanwhile are lost, and the caches expire within seconds (they are the backstop).
 */
export class PostgresChangeEvents implements ChangeEvents {
  private readonly subscribers = new Subscribers();
  private readonly pool: pg.Pool;
  private listener: pg.Client | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  private readonly heartbeat: NodeJS.Timeout;

  private constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
    private readonly onHandlerError: (err: unknown) => void,
    private readonly heartbeatMs: number,
  ) {
    this.pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
    this.pool.on('error', () => undefined); // an idle connection that drops is replaced on the next publish
    this.heartbeat = setInterval(this.beat, heartbeatMs);
    this.heartbeat.unref();
  }

  static async connect(url: string, options: { timeoutMs?: number; onHandlerError?: (err: unknown) => void; heartbeatMs?: number } = {}): Promise<PostgresChangeEvents> {
    const events = new PostgresChangeEvents(url, options.timeoutMs ?? 250, options.onHandlerError ?? (() => undefined), options.heartbeatMs ?? HEARTBEAT_MS);
    try {
      await events.listen();
    } catch (err) {
      clearInterval(events.heartbeat);
      await events.pool.end().catch(() => undefined);
      throw err;
    }
    return events;
  }

  private readonly beat = (): void => {
    const client = this.listener;
    if (!client) return;
    settleWithin(client.query('SELECT 1'), this.heartbeatMs, () => {
      throw new Error('no answer');
    }).catch(() => this.reconnect(client));
  };

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 5000 });
    client.on('notification', (msg) => {
      const event = msg.channel === CHANGE_CHANNEL && msg.payload ? parseChangeEvent(msg.payload) : undefined;
      if (event) this.subscribers.deliver(event, this.onHandlerError);
    });
    client.on('error', () => this.reconnect(client));
    client.on('end', () => this.reconnect(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGE_CHANNEL}`);
    } catch (err) {
      client.end().catch(() => undefined);
      throw err;
    }
    this.listener = client;
  }

  private reconnect(dead: pg.Client): void {
    if (this.listener !== dead) return;
    this.listener = undefined;
    dead.end().catch(() => undefined);
    this.scheduleListen();
  }

  private scheduleListen(): void {
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      if (!this.closed) this.listen().catch(() => this.scheduleListen());
    }, 500);
    this.retry.unref();
  }

  async publish(event: ChangeEvent): Promise<void> {
    await this.pool.query('SELECT pg_notify($1, $2)', [CHANGE_CHANNEL, JSON.stringify(event)]);
  }

  subscribe(handler: (event: ChangeEvent) => void): () => void {
    return this.subscribers.add(handler);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.subscribers.clear();
    clearInterval(this.heartbeat);
    if (this.retry) clearTimeout(this.retry);
    // a frozen server never closes its end: the connections are left to the process's exit
    await closedWithin(Promise.all([this.listener?.end(), this.pool.end()]));
  }
}
