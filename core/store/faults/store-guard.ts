import { BrokenCircuitError, circuitBreaker, ConsecutiveBreaker, handleAll, IsolatedCircuitError, TaskCancelledError, timeout, TimeoutStrategy, wrap, type IPolicy } from 'cockatiel';
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
    let sent: Promise<T> | undefined;
    try {
      return await this.policy.execute(() => (sent = command()));
    } catch (err) {
      // instanceof, not cockatiel's isTaskCancelledError: in 3.x that one tests the bulkhead's flag
      const timedOut = err instanceof TaskCancelledError;
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

/** How a command that timed out ended after all: written (`done`), failed, or still running (`pending`). */
export interface LateOutcome {
  state(): 'pending' | 'done' | 'failed';
}

const timedOutCommands = new WeakMap<object, LateOutcome>();

function settledOutcome(command: Promise<unknown>): LateOutcome {
  let state: 'pending' | 'done' | 'failed' = 'pending';
  command.then(
    () => (state = 'done'),
    () => (state = 'failed'),
  );
  return { state: () => state };
}

/** For a store error that was a timeout, how the command that was sent ends; undefined for any other error. */
export function lateOutcome(err: unknown): LateOutcome | undefined {
  return typeof err === 'object' && err !== null ? timedOutCommands.get(err) : undefined;
}
