import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { ConfigError } from '../errors/gateway-error';
import { isClusterEventMessage } from '../store/events/cluster-change-events';

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
    const listening = new Set<number>();

    cluster.on('message', (from: Worker, message: unknown) => {
      if (isClusterEventMessage(message)) {
        for (const worker of Object.values(cluster.workers ?? {})) if (worker && worker !== from && worker.isConnected()) worker.send(message);
        return;
      }
      const url = typeof message === 'object' && message !== null ? (message as Record<string, unknown>)[LISTENING] : undefined;
      if (typeof url !== 'string' || started) return;
      listening.add(from.id);
      if (listening.size < count) return;
      started = true;
      // printed once, after every worker listens and the handlers below are in place (see core/main.ts)
      printStartup(url);
      resolve();
    });

    cluster.on('exit', (worker, code, signal) => {
      if (stopping) {
        if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
        return;
      }
      if (!started) {
        // a worker that cannot start (port in use, store unreachable) has printed why; the others would fail alike
        stopping = true;
        for (const other of Object.values(cluster.workers ?? {})) other?.process.kill('SIGTERM');
        reject(new WorkerStartError(`a worker exited before listening (${signal ?? `code ${code}`})`));
        return;
      }
      process.stderr.write(`model-gateway: worker ${worker.id} (pid ${worker.process.pid}) exited (${signal ?? `code ${code}`}); starting another\n`);
      cluster.fork();
    });

    const stop = () => {
      if (stopping) return;
      stopping = true;
      const workers = Object.values(cluster.workers ?? {});
      if (workers.length === 0) process.exit(0);
      // each worker drains on its own: refuses new work, finishes its streams, writes its log, exits
      for (const worker of workers) worker?.process.kill('SIGTERM');
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);

    for (let i = 0; i < count; i++) cluster.fork();
  });
}

/** Startup failed in a worker, which printed the reason on the shared stderr. */
export class WorkerStartError extends Error {}
