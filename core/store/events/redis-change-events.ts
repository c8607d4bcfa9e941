import { createClient } from '@keyv/redis';
import { closedWithin } from '../faults/bounded-close';
import { settleWithin } from '../../time/settle-within';
import { parseChangeEvent, type ChangeEvent, type ChangeEvents } from './change-events';
import { Subscribers } from './subscribers';

type RedisClient = ReturnType<typeof createClient>;

/** The channel every instance on one Redis database shares (database 0; see changeChannel). */
export const CHANGE_CHANNEL = 'mg:changes';

/**
 * The channel of the database a store URL names (`redis://host:port/2`): Redis delivers a PUBLISH to every
 * subscriber on the server, whatever database it selected, so two fleets sharing a server in databases of
 * their own (staging and production) got each other's events, and a deployment failing in one was put in
 * cooldown in the other. Database 0 keeps the plain name.
 */
export function changeChannel(url: string): string {
  let db = 0;
  try {
    db = Number(new URL(url).pathname.slice(1)) || 0;
  } catch {
    /* not a URL the client could open either */
  }
  return db ? `${CHANGE_CHANNEL}:${db}` : CHANGE_CHANNEL;
}

/**
 * Redis pub/sub between gateway instances. A subscribed Redis connection can do nothing else, so this
 * keeps two of its own: one publishing, one listening; both reconnect on their own, and node-redis
 * subscribes again after a reconnect. An event published while Redis is unreachable is lost: the
 * publisher has already changed the store, and the other instances' caches expire within seconds.
 */
export class RedisChangeEvents implements ChangeEvents {
  private readonly subscribers = new Subscribers();

  private constructor(
    private readonly pub: RedisClient,
    private readonly sub: RedisClient,
    private readonly channel: string,
    private readonly timeoutMs: number,
    private readonly onHandlerError: (err: unknown) => void,
  ) {}

  static async connect(url: string, options: { timeoutMs?: number; onHandlerError?: (err: unknown) => void } = {}): Promise<RedisChangeEvents> {
    let connected = false;
    const reconnectStrategy = (retries: number, cause: Error) => (connected ? Math.min(retries * 50, 500) : cause);
    const pub = createClient({ url, socket: { reconnectStrategy }, disableOfflineQueue: true });
    const sub = pub.duplicate();
    for (const c of [pub, sub]) c.on('error', () => undefined); // reconnects on its own
    await pub.connect();
    await sub.connect();
    connected = true;
    const channel = changeChannel(url);
    const events = new RedisChangeEvents(pub as unknown as RedisClient, sub as unknown as RedisClient, channel, options.timeoutMs ?? 250, options.onHandlerError ?? (() => undefined));
    await sub.subscribe(channel, (message: string) => {
      const event = parseChangeEvent(message);
      if (event) events.subscribers.deliver(event, events.onHandlerError);
    });
    return events;
  }

  async publish(event: ChangeEvent): Promise<void> {
    await settleWithin(this.pub.publish(this.channel, JSON.stringify(event)), this.timeoutMs, () => {
      throw new Error(`change event not published within ${this.timeoutMs} ms`);
    });
  }

  subscribe(handler: (event: ChangeEvent) => void): () => void {
    return this.subscribers.add(handler);
  }

  async close(): Promise<void> {
    this.subscribers.clear();
    await Promise.all(
      [this.sub, this.pub].map(async (c) => {
        if (c.isReady && (await closedWithin(c.quit()))) return;
        // not connected, or frozen (QUIT is never answered): drop the connection
        if (c.isOpen) c.destroy();
      }),
    );
  }
}
