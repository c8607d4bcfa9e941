/**
 * Parts handed from the multipart parser (push side) to whoever streams them on (pull side). The parser
 * is held back by the file streams themselves, so the queue only ever holds a few small entries.
 */
export class PartQueue<T> {
  private readonly items: T[] = [];
  private waiter?: { resolve(value: T | undefined): void; reject(err: Error): void };
  private ended = false;
  private error?: Error;

  push(item: T): void {
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w.resolve(item);
    } else this.items.push(item);
  }

  end(): void {
    this.ended = true;
    this.settleWaiter();
  }

  /** Fail the reader: the error wins over any entries still queued. */
  fail(err: Error): void {
    if (!this.error) this.error = err;
    this.settleWaiter();
  }

  /** The next part, or undefined when the body has ended. */
  next(): Promise<T | undefined> {
    if (this.error) return Promise.reject(this.error);
    if (this.items.length) return Promise.resolve(this.items.shift());
    if (this.ended) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  /** Entries nobody will read (for cleanup). */
  takeAll(): T[] {
    return this.items.splice(0);
  }

  private settleWaiter(): void {
    const w = this.waiter;
    if (!w) return;
    this.waiter = undefined;
    if (this.error) w.reject(this.error);
    else if (this.items.length) w.resolve(this.items.shift());
    else w.resolve(undefined);
  }
}
