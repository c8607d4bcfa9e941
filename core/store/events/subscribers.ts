import type { ChangeEvent } from './change-events';

/** The handler list every transport keeps: one throwing handler never stops the others. */
export class Subscribers {
  private readonly handlers = new Set<(event: ChangeEvent) => void>();

  add(handler: (event: ChangeEvent) => void): () => void {
    // wrapped, so the same function subscribed twice gets two deliveries and two unsubscribes
    const entry = (event: ChangeEvent) => handler(event);
    this.handlers.add(entry);
    return () => {
      this.handlers.delete(entry);
    };
  }

  deliver(event: ChangeEvent, onError: (err: unknown) => void): void {
    for (const handler of [...this.handlers]) {
      try {
        handler(event);
      } catch (err) {
        onError(err);
      }
    }
  }

  clear(): void {
    this.handlers.clear();
  }
}
