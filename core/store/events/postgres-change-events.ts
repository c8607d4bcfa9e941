import pg from 'pg';
import { closedWithin } from '../faults/bounded-close';
import { parseChangeEvent, type ChangeEvent, type ChangeEvents } from './change-events';
import { Subscribers } from './subscribers';

/** The LISTEN/NOTIFY channel every instance on one PostgreSQL database shares. */
export const CHANGE_CHANNEL = 'mg_changes';

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

  private constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
    private readonly onHandlerError: (err: unknown) => void,
  ) {
    this.pool = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
    this.pool.on('error', () => undefined); // an idle connection that drops is replaced on the next publish
  }

  static async connect(url: string, options: { timeoutMs?: number; onHandlerError?: (err: unknown) => void } = {}): Promise<PostgresChangeEvents> {
    const events = new PostgresChangeEvents(url, options.timeoutMs ?? 250, options.onHandlerError ?? (() => undefined));
    await events.listen();
    return events;
  }

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
    if (this.retry) clearTimeout(this.retry);
    // a frozen server never closes its end: the connections are left to the process's exit
    await closedWithin(Promise.all([this.listener?.end(), this.pool.end()]));
  }
}
