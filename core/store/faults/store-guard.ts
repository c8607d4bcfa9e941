import { circuitBreaker, ConsecutiveBreaker, handleAll, isBrokenCircuitError, isIsolatedCircuitError, isTaskCancelledError, timeout, TimeoutStrategy, wrap, type IPolicy } from 'cockatiel';
import { StoreUnavailableError } from '../../errors/gateway-error';

export interface StoreGuardOptions {
  /** longest wait for one store command (default 250 ms) */
  timeoutMs?: number;
  /** consecutive failures that open the breaker (default 3) */
  failures?: number;
  /** how long the breaker stays open before one trial command goes through (default 1000 ms) */
  halfOpenAfterMs?: number;
}

/**
 * Bounds every store command (issue 13 point 5): a timeout, then a circuit breaker over it. While the
 * breaker is open every command fails at once, so a frozen or dead store costs a request a few
 * microseconds, not a timeout each; one trial command per `halfOpenAfterMs` tells when it is back, and
 * the breaker closes on its own (no restart). Every failure becomes a StoreUnavailableError (503
 * `store_unavailable`), which callers must never read as "not found".
 */
export class StoreGuard {
  private readonly policy: IPolicy;
  readonly timeoutMs: number;
  /** commands that did not answer in time (a number for the metrics) */
  timeouts = 0;
  /** commands refused at once because the breaker was open */
  rejected = 0;
  /** commands that failed with an error of the store */
  failed = 0;
  private open = false;

  constructor(options: StoreGuardOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 250;
    // Aggressive: the caller gets its answer at the deadline even if the client library is still waiting
    const perCommand = timeout(this.timeoutMs, TimeoutStrategy.Aggressive);
    const breaker = circuitBreaker(handleAll, { halfOpenAfter: options.halfOpenAfterMs ?? 1000, breaker: new ConsecutiveBreaker(options.failures ?? 3) });
    breaker.onBreak(() => (this.open = true));
    breaker.onReset(() => (this.open = false));
    this.policy = wrap(breaker, perCommand);
  }

  /** true while the breaker refuses commands (the store was found unreachable and has not answered since) */
  get isOpen(): boolean {
    return this.open;
  }

  async run<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await this.policy.execute(() => command());
    } catch (err) {
      if (isTaskCancelledError(err)) this.timeouts += 1;
      else if (isBrokenCircuitError(err) || isIsolatedCircuitError(err)) this.rejected += 1;
      else this.failed += 1;
      throw new StoreUnavailableError(undefined, { cause: err, headers: { 'retry-after': '1' } });
    }
  }
}

/** Whether a store error was a timeout: the command was sent and may still take effect. */
export function storeTimedOut(err: unknown): boolean {
  return err instanceof StoreUnavailableError && isTaskCancelledError((err as Error).cause);
}
