import { BrokenCircuitError, circuitBreaker, ConsecutiveBreaker, handleAll, IsolatedCircuitError, type CircuitBreakerPolicy } from 'cockatiel';
import { StoreUnavailableError } from '../../errors/gateway-error';
import { settleWithin } from '../../time/settle-within';

export interface StoreGuardOptions {
  /** longest wait for one store command (default 250 ms) */
  timeoutMs?: number;
  /** consecutive failures that open the breaker (default 5) */
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
  private readonly policy: CircuitBreakerPolicy;
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
    this.policy = circuitBreaker(handleAll, { halfOpenAfter: options.halfOpenAfterMs ?? 1000, breaker: new ConsecutiveBreaker(options.failures ?? 5) });
    this.policy.onBreak(() => (this.open = true));
    this.policy.onReset(() => (this.open = false));
  }

  /** true while the breaker refuses commands (the store was found unreachable and has not answered since) */
  get isOpen(): boolean {
    return this.open;
  }

  async run<T>(command: () => Promise<T>): Promise<T> {
    let sent: Promise<T> | undefined;
    try {
      return await this.policy.execute(() =>
        settleWithin((sent = command()), this.timeoutMs, () => {
          throw new StoreTimeoutError(this.timeoutMs);
        }),
      );
    } catch (err) {
      const timedOut = err instanceof StoreTimeoutError;
      if (timedOut) this.timeouts += 1;
      else if (err instanceof BrokenCircuitError || err instanceof IsolatedCircuitError) this.rejected += 1;
      else this.failed += 1;
      const error = new StoreUnavailableError(undefined, { cause: err, headers: { 'retry-after': '1' } });
      // the caller stopped waiting, the command did not stop: say when it ends, for writers that must not repeat it
      if (timedOut && sent) timedOutCommands.set(error, settledOutcome(sent));
      throw error;
    }
  }
}

class StoreTimeoutError extends Error {
  constructor(ms: number) {
    super(`store command timed out after ${ms} ms`);
  }
}

/** How a command that timed out ended after all: written (`done`), failed, or still running (`pending`). */
export interface LateOutcome {
  state(): 'pending' | 'done' | 'failed';
  /** settles with how it ended, once it has */
  readonly settled: Promise<'done' | 'failed'>;
}

const timedOutCommands = new WeakMap<object, LateOutcome>();

function settledOutcome(command: Promise<unknown>): LateOutcome {
  let state: 'pending' | 'done' | 'failed' = 'pending';
  const settled = command.then(
    (): 'done' => (state = 'done'),
    (): 'failed' => (state = 'failed'),
  );
  return { state: () => state, settled };
}

/** For a store error that was a timeout, how the command that was sent ends; undefined for any other error. */
export function lateOutcome(err: unknown): LateOutcome | undefined {
  return typeof err === 'object' && err !== null ? timedOutCommands.get(err) : undefined;
}
