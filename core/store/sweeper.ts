/**
 * The periodic sweep: expired stored responses, hosted images, recent lists and counters are otherwise
 * deleted only when someone reads them, and most are never read again. Every `store.sweepIntervalSeconds`
 * it deletes in batches of `SWEEP_BATCH`, at most `SWEEP_MAX_BATCHES` per tick, so one tick never holds
 * the event loop (or a shared Redis) for long; what is left waits for the next tick. The same tick cuts
 * the request log to its retention window (`store.logRetentionDays`), in batches of the same size; the
 * spend rollups are not the log's and stay.
 */
import type { Logger } from '../plugins/contracts';
import type { StoreBackend } from './store-backend';

export const SWEEP_BATCH = 500;
export const SWEEP_MAX_BATCHES = 20;

const DAY_MS = 86_400_000;

export interface LogRetention {
  days: number;
  now: () => number;
}

/** One tick: returns how many records (and log entries) went. */
export async function sweepOnce(store: StoreBackend, retention?: LogRetention): Promise<number> {
  let total = await inBatches((limit) => store.sweepExpired(limit));
  if (retention && retention.days > 0) {
    const before = new Date(retention.now() - retention.days * DAY_MS).toISOString();
    total += await inBatches((limit) => store.sweepLogs(before, limit));
  }
  return total;
}

async function inBatches(sweep: (limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (let i = 0; i < SWEEP_MAX_BATCHES; i++) {
    const removed = await sweep(SWEEP_BATCH);
    total += removed;
    if (removed < SWEEP_BATCH) break;
  }
  return total;
}

/** Start the timer (unref'd: it never keeps the process alive); returns what stops it. 0 s: no sweep. */
export function startSweeper(store: StoreBackend, intervalSeconds: number, logger: Logger, retention?: LogRetention): () => Promise<void> {
  if (intervalSeconds <= 0) return async () => undefined;
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    if (running) return; // a slow tick (a big backlog on Redis) is not run twice at once
    running = sweepOnce(store, retention)
      .then((removed) => removed > 0 && logger.debug('store sweep', { removed }))
      .catch((err: Error) => logger.warn('store sweep failed', { error: err.message }))
      .finally(() => (running = undefined));
  }, intervalSeconds * 1000);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
