import type { ChangeEvent, ChangeEvents } from './change-events';
import { parseChangeEvent } from './change-events';
import { Subscribers } from './subscribers';

/**
 * The IPC message that carries a change event between a worker and the primary (core/cli/cluster.ts). The
 * event travels as a JSON string, so a worker parses it with the same checks as one from Redis.
 */
export const CLUSTER_EVENT = 'model-gateway:change-event';

export interface ClusterEventMessage {
  [CLUSTER_EVENT]: string;
}

export function isClusterEventMessage(message: unknown): message is ClusterEventMessage {
  return typeof message === 'object' && message !== null && typeof (message as Record<string, unknown>)[CLUSTER_EVENT] === 'string';
}

/**
 * Change events between the workers of one `--workers N` gateway, when the store has no Redis: a worker
 * sends what it publishes to the primary, which relays it to every other worker; the publisher's own
 * subscribers get it on a later tick, like the other workers'. IPC needs no server and keeps order per worker.
 */
export class ClusterChangeEvents implements ChangeEvents {
  private readonly subscribers = new Subscribers();
  private readonly onMessage = (message: unknown) => {
    if (!isClusterEventMessage(message)) return;
    const event = parseChangeEvent(message[CLUSTER_EVENT]);
    if (event) this.subscribers.deliver(event, this.onHandlerError);
  };

  constructor(
    private readonly channel: NodeJS.Process = process,
    private readonly onHandlerError: (err: unknown) => void = () => undefined,
  ) {
    channel.on('message', this.onMessage);
  }

  async publish(event: ChangeEvent): Promise<void> {
    const raw = JSON.stringify(event);
    const own = parseChangeEvent(raw);
    if (own) setImmediate(() => this.subscribers.deliver(own, this.onHandlerError));
    // a worker whose primary is gone is about to be stopped; its peers reread the store within a cache lifetime
    if (this.channel.connected) this.channel.send?.({ [CLUSTER_EVENT]: raw } satisfies ClusterEventMessage);
  }

  subscribe(handler: (event: ChangeEvent) => void): () => void {
    return this.subscribers.add(handler);
  }

  async close(): Promise<void> {
    this.channel.off('message', this.onMessage);
    this.subscribers.clear();
  }
}
