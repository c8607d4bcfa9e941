import { createClient } from '@keyv/redis';
import { parseChangeEvent, type ChangeEvent, type ChangeEvents } from './change-events';
import { Subscribers } from './subscribers';

type RedisClient = ReturnType<typeof createClient>;

/** The channel every instance on one Redis database shares. */
export const CHANGE_CHANNEL = 'mg:changes';

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
    const events = new RedisChangeEvents(pub as unknown as RedisClient, sub as unknown as RedisClient, options.timeoutMs ?? 250, options.onHandlerError ?? (() => undefined));
    await sub.subscribe(CHANGE_CHANNEL, (message: string) => {
      const event = parseChangeEvent(message);
      if (event) events.subscribers.deliver(event, events.onHandlerError);
    });
    return events;
  }

  async publish(event: ChangeEvent): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`change event not published within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      await Promise.race([this.pub.publish(CHANGE_CHANNEL, JSON.stringify(event)), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  subscribe(handler: (event: ChangeEvent) => void): () => void {
    return this.subscribers.add(handler);
  }

  async close(): Promise<void> {
    this.subscribers.clear();
    for (const c of [this.sub, this.pub]) {
      if (c.isReady) await c.quit().catch(() => undefined);
      else if (c.isOpen) c.destroy();
    }
  }
}
