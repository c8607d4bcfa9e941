import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../plugins/contracts';
import { lateOutcome } from '../store/faults/store-guard';
import type { StoreBackend } from '../store/store-backend';

/** A limit counter: its store key, and when its period is over (none for a budget that never resets). */
export interface Counter {
  readonly key: string;
  readonly ttlMs?: number;
  /** after this (clock time) the counter belongs to no current period: leave it alone */
  readonly expiresAt?: number;
}

interface Correction {
  readonly counter: Counter;
  readonly delta: number;
}

const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;
/** corrections held for a store that stays down; past this the oldest are given up */
const MAX_WAITING = 10_000;
/** how often a stopping gateway tries its waiting corrections again */
const FLUSH_RETRY_MS = 100;

/**
 * Corrections to limit counters (a reservation taken back, an estimate replaced by the real figure) that
 * must not be lost when the store fails at that moment. Before, a refused correction was dropped, and a
 * charge whose command timed out (the guard stopped waiting; the store applied it later) was never taken
 * back: a short stall of Redis left reservations in the counters for good, and a budget without a
 * period filled up with spend that never happened.
 *
 * A correction is tried at once; a refused one is tried again, every second and then less often, up to
 * 30 s apart, until the store takes it or its counter's period is over. One that timed out is tried again
 * only if it failed after all, so nothing is counted twice. They live in this process: when the gateway
 * stops, those still waiting are tried until the store takes them or the drain window ends (a budget
 * without a period would otherwise keep their reservations for good); only a killed process, or a store
 * down through the whole window, loses them.
 */
export class Compensations {
  private waiting: Correction[] = [];
  private timer: NodeJS.Timeout | undefined;
  private delayMs = FIRST_RETRY_MS;
  private closed = false;

  constructor(
    private readonly store: StoreBackend,
    private readonly clock: Clock,
  ) {}

  /** Add `delta` to the counter, now or as soon as the store takes it. Never throws. */
  async apply(counter: Counter, delta: number): Promise<void> {
    if (delta === 0 || this.over(counter)) return;
    await this.attempt({ counter, delta });
  }

  /** A charge of `amount` whose command failed: if it was written after all (a timeout), take it back. */
  takeBackIfWritten(err: unknown, counter: Counter, amount: number): void {
    void lateOutcome(err)?.settled.then((end) => (end === 'done' ? this.apply(counter, -amount) : undefined));
  }

  private async attempt(correction: Correction): Promise<void> {
    const { counter, delta } = correction;
    const ttlMs = counter.expiresAt === undefined ? undefined : counter.expiresAt - this.clock.now();
    try {
      await this.store.incrByFloat(counter.key, delta, ttlMs);
    } catch (err) {
      const late = lateOutcome(err);
      if (!late) return this.hold(correction);
      // it may still be written: try again only once it is known to have failed (not waited for here:
      // a frozen store would hold the request's settle, and the drain, until it thaws)
      void late.settled.then((end) => (end === 'failed' ? this.hold(correction) : undefined));
    }
  }

  /**
   * The gateway is stopping and its store closes next: try what still waits now, and again every
   * FLUSH_RETRY_MS while the store refuses, for at most `timeoutMs` (real time, not the clock: the
   * process is going away).
   */
  async flush(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    try {
      for (;;) {
        this.cancelTimer();
        const batch = this.waiting;
        this.waiting = [];
        // all at once: a store that batches (SQLite: one transaction a turn) waits out a lock once a round, not once each
        await Promise.all(batch.filter((correction) => !this.over(correction.counter)).map((correction) => this.attempt(correction)));
        const left = deadline - Date.now();
        if (this.waiting.length === 0 || left <= 0) return;
        await sleep(Math.min(FLUSH_RETRY_MS, left));
      }
    } finally {
      this.cancelTimer();
      this.closed = true;
    }
  }

  private cancelTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private hold(correction: Correction): void {
    // after the flush the store is closed: nothing would take it
    if (this.closed || this.over(correction.counter)) return;
    if (this.waiting.push(correction) > MAX_WAITING) this.waiting.shift();
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(this.retry, this.delayMs);
    this.timer.unref();
  }

  private readonly retry = async (): Promise<void> => {
    this.timer = undefined;
    const batch = this.waiting;
    this.waiting = [];
    for (const correction of batch) if (!this.over(correction.counter)) await this.attempt(correction);
    // a store still refusing: wait longer before the next round; one that took everything: start over
    this.delayMs = this.waiting.length > 0 ? Math.min(MAX_RETRY_MS, this.delayMs * 2) : FIRST_RETRY_MS;
    if (this.waiting.length > 0) this.schedule();
  };

  private over(counter: Counter): boolean {
    return counter.expiresAt !== undefined && this.clock.now() >= counter.expiresAt;
  }
}
