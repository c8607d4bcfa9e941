/**
 * The client's request going away, as a request's stages and its upstream attempts see it.
 *
 * Why not an AbortSignal: most requests end without their client going away, and in Node 20 making an
 * AbortController and adding and removing a listener on its signal cost more per request than anything
 * else of the request's setup (about 3% of a JSON request's CPU). So a request's own signal is a plain
 * flag with a listener list, and the real AbortSignal is made only when something asks for one (a local
 * model, a guardrail engine, the wait between retries).
 *
 * A signal made with `of` follows an AbortSignal that already exists (a Responses loop's step, an MCP
 * call): the same interface, served by that signal.
 */
export class ClientSignal {
  private gone = false;
  private listeners: (() => void)[] | undefined;
  private controller: AbortController | undefined;

  private constructor(private readonly source: AbortSignal | undefined) {}

  /** A request's own signal; `abort()` when its client goes away. */
  static create(): ClientSignal {
    return new ClientSignal(undefined);
  }

  /** A signal that follows `signal`. */
  static of(signal: AbortSignal): ClientSignal {
    return new ClientSignal(signal);
  }

  get aborted(): boolean {
    return this.source ? this.source.aborted : this.gone;
  }

  /** The same as an AbortSignal, for APIs that take one; made on first use. */
  get signal(): AbortSignal {
    if (this.source) return this.source;
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.gone) this.controller.abort();
    }
    return this.controller.signal;
  }

  /** The client went away: listeners run once, the AbortSignal (if one was made) aborts. */
  abort(): void {
    if (this.source) throw new Error('a ClientSignal that follows an AbortSignal aborts with it');
    if (this.gone) return;
    this.gone = true;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners) for (const listener of listeners) listener();
    this.controller?.abort();
  }

  /** Run `listener` once when the client goes away (not if it already has: check `aborted` first). */
  onAbort(listener: () => void): void {
    if (this.source) this.source.addEventListener('abort', listener, { once: true });
    else if (!this.gone) (this.listeners ??= []).push(listener);
  }

  offAbort(listener: () => void): void {
    if (this.source) return this.source.removeEventListener('abort', listener);
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.listeners!.splice(at, 1);
  }
}
