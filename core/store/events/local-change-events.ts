import type { ChangeEvent, ChangeEvents } from './change-events';
import { Subscribers } from './subscribers';

/**
 * One process, one store (memory, SQLite): every gateway built on the same backend object shares one of
 * these, so in-process gateways on one store see each other's changes. Delivery is on a later tick, like
 * a network transport's, so no publisher depends on its handlers having run before `publish` returns.
 */
export class LocalChangeEvents implements ChangeEvents {
  private readonly subscribers = new Subscribers();

  constructor(private readonly onHandlerError: (err: unknown) => void = () => undefined) {}

  async publish(event: ChangeEvent): Promise<void> {
    const copy = JSON.parse(JSON.stringify(event)) as ChangeEvent;
    setImmediate(() => this.subscribers.deliver(copy, this.onHandlerError));
  }

  subscribe(handler: (event: ChangeEvent) => void): () => void {
    return this.subscribers.add(handler);
  }

  async close(): Promise<void> {
    this.subscribers.clear();
  }
}
