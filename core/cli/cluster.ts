import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { ConfigError } from '../errors/gateway-error';
import { isClusterEventMessage } from '../store/events/cluster-change-events';
import { PrimaryMetrics } from '../observability/cluster-metrics';

/** A worker tells the primary it listens, with its address, instead of printing the startup lines itself. */
const LISTENING = 'model-gateway:listening';

/** `--workers N` or `server.workers`: a count, or `auto` for one process per core. */
export function resolveWorkers(value: number | string | undefined, source: string): number {
  if (value === undefined) return 1;
  if (value === 'auto') return availableParallelism();
  const n = typeof value === 'number' ? value : /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new ConfigError(source, `must be an integer from 1 to 256 or "auto", got "${value}"`);
  return n;
}

/** In a worker: hand the address to the primary, which prints the startup lines once for all of them. */
export function reportListening(url: string): void {
  process.send?.({ [LISTENING]: url });
}

/**
 * The primary of `--workers N`: forks N gateway processes that share the port (node:cluster hands each
 * connection to one of them), relays the change events of each worker to the others (key revocations
 * and updates, core/store/events/cluster-change-events.ts), replaces a worker that dies, and on SIGTERM
 * or SIGINT asks every worker to drain and exits when the last one has. It never opens the store: the
 * workers share it (SQLite in WAL mode across processes, Redis or PostgreSQL), so budgets, rate limits and
 * logs are counted in one place.
 */
export function runPrimary(count: number, printStartup: (url: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let stopping = false;
    let started = false;
    let exitCode = 0;
    const listening = new Set<number>();
    /** replacements in a row that exited before they listened */
    let failedBoots = 0;
    /** when each worker was started, for how long it lived */
    const forkedAt = new Map<number, number>();
    let restartDelayMs = 0;
    const fork = () => forkedAt.set(cluster.fork().id, Date.now());
    // a scrape of /metrics reaches one worker, which asks here for every worker's counts
    const metrics = new PrimaryMetrics();
    const workers = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);

    cluster.on('message', (from: Worker, message: unknown) => {
      if (isClusterEventMessage(message)) {
        for (const worker of Object.values(cluster.workers ?? {})) if (worker && worker !== from && worker.isConnected()) worker.send(message);
        return;
      }
      if (metrics.onMessage(from, message, workers)) return;
      const url = typeof message === 'object' && message !== null ? (message as Record<string, unknown>)[LISTENING] : undefined;
      if (typeof url !== 'string') return;
      listening.add(from.id);
      if (started) {
        failedBoots = 0;
        return;
      }
      if (listening.size < count) return;
      started = true;
      // printed once, after every worker listens and the handlers below are in place (see core/main.ts)
      printStartup(url);
      resolve();
    });

    cluster.on('exit', (worker, code, signal) => {
      const listened = listening.delete(worker.id);
      if (stopping) {
        if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitCode);
        return;
      }
      if (!started) {
        // a worker that cannot start (port in use, store unreachable) has printed why; the others would fail alike
        stopping = true;
        for (const other of Object.values(cluster.workers ?? {})) other?.process.kill('SIGTERM');
        reject(new WorkerStartError(`a worker exited before listening (${signal ?? `code ${code}`})`));
        return;
      }
      const lived = Date.now() - (forkedAt.get(worker.id) ?? 0);
      forkedAt.delete(worker.id);
      failedBoots = listened ? 0 : failedBoots + 1;
      if (failedBoots >= MAX_FAILED_BOOTS) {
        // the cause outlives the backoff (a config that no longer reads, a store that stays unreachable):
        // replacing them for ever only printed the same error every 30 s while capacity stayed down, and
        // the primary looked alive to its supervisor, which alone can bring the whole gateway back
        process.stderr.write(
          `model-gateway: ${failedBoots} workers in a row exited before listening (the last: ${signal ?? `code ${code}`}; its error is above); stopping the gateway\n`,
        );
        exitCode = 1;
        stop();
        return;
      }
      restartDelayMs = nextRestartDelay(restartDelayMs, lived);
      const when = restartDelayMs === 0 ? 'now' : `in ${restartDelayMs / 1000} s`;
      process.stderr.write(`model-gateway: worker ${worker.id} (pid ${worker.process.pid}) exited (${signal ?? `code ${code}`}) after ${(lived / 1000).toFixed(1)} s; starting another ${when}\n`);
      setTimeout(() => stopping || fork(), restartDelayMs);
    });

    const stop = () => {
      if (stopping) return;
      stopping = true;
      const workers = Object.values(cluster.workers ?? {});
      if (workers.length === 0) process.exit(exitCode);
      // each worker drains on its own: refuses new work, finishes its streams, writes its log, exits
      for (const worker of workers) worker?.process.kill('SIGTERM');
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);

    for (let i = 0; i < count; i++) fork();
  });
}

/** Replacements in a row that exit before they listen stop the gateway (exit 1) instead of being replaced again. */
export const MAX_FAILED_BOOTS = 5;

/** A worker that ran this long was not failing at its start: the next one starts at once. */
export const STABLE_WORKER_MS = 10_000;
const FIRST_RESTART_DELAY_MS = 100;
const MAX_RESTART_DELAY_MS = 30_000;

/**
 * How long to wait before replacing a worker that exited after `livedMs`. One that ran for a while is
 * replaced at once; one that died young (a store down after the start, a crash at boot) waits, twice as
 * long as the last one did, up to 30 s: replacing it at once would fork in a tight loop while the cause
 * lasts, each fork loading the whole gateway.
 */
export function nextRestartDelay(lastDelayMs: number, livedMs: number): number {
  if (livedMs >= STABLE_WORKER_MS) return 0;
  return Math.min(MAX_RESTART_DELAY_MS, lastDelayMs === 0 ? FIRST_RESTART_DELAY_MS : lastDelayMs * 2);
}

/** Startup failed in a worker, which printed the reason on the shared stderr. */
export class WorkerStartError extends Error {}
