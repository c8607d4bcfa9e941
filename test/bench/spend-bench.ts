/**
 * The spend section of `npm run bench`: `/admin/v1/spend`'s read (RequestLog.spend) over a store holding
 * ten log rows and over one holding a million (BENCH_SPEND_ROWS), on SQLite and PostgreSQL. The rows are
 * written through `appendLogs`, so with their rollups, and fall on the same ten (hour, key, model)
 * combinations, so both stores hold ten rollup rows: the view should answer in the same time. (Its cost
 * follows the number of rollup rows, i.e. hours x combinations in the range, printed beside it.) For
 * scale, the last column is one pass over the log itself (what the view did before rollups).
 * Runs alone too: `node dist/test/bench/spend-bench.js`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { LogEntry } from '../../core/store/log-entry';
import { openStore } from '../../core/store/open-store';
import { RequestLog } from '../../core/store/request-log';
import { SecretBox } from '../../core/store/secrets/secret-box';
import type { StoreBackend } from '../../core/store/store-backend';
import { startPostgres } from '../support/postgres-server';
import { median } from './median';

const BIG = Number(process.env.BENCH_SPEND_ROWS ?? 1_000_000);
const BATCH = 2000;
/** distinct (hour, key, model) combinations */
const GROUPS = 10;
const silent = { debug() {}, info() {}, warn() {}, error() {} } as never;

function entry(i: number, start: number): LogEntry {
  const g = i % GROUPS;
  return {
    id: `bench-${i}`,
    time: new Date(start + g * 3_600_000 + (i % 3_600) * 1000).toISOString(),
    keyId: `key-${g % 5}`,
    org: `org-${g % 2}`,
    endpoint: 'chat',
    model: `model-${g % 3}`,
    deploymentId: `up/model-${g % 3}`,
    promptTokens: 12,
    completionTokens: 30,
    cost: 0.0000123,
    status: 200,
    latencyMs: 3,
  };
}

async function fill(store: StoreBackend, rows: number): Promise<void> {
  const start = Date.UTC(2026, 0, 1);
  for (let from = 0; from < rows; from += BATCH) {
    await store.appendLogs(Array.from({ length: Math.min(BATCH, rows - from) }, (_, k) => entry(from + k, start)));
  }
}

/** median of `runs` timings of `f`, in ms */
async function medianMs(runs: number, f: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await f();
    times.push(performance.now() - t);
  }
  return median(times);
}

async function measureStore(label: string, open: () => Promise<{ store: StoreBackend; done(): Promise<void> }>): Promise<string[]> {
  const lines: string[] = [];
  for (const rows of [10, BIG]) {
    const { store, done } = await open();
    try {
      const t0 = performance.now();
      await fill(store, rows);
      const fillS = (performance.now() - t0) / 1000;
      const log = new RequestLog(store, silent);
      await log.spend('key'); // the first read opens connections: not part of the view's cost
      const view = await medianMs(9, () => log.spend('key'));
      const scan = await medianMs(1, async () => {
        let cost = 0;
        for await (const e of store.scanLogs()) cost += e.cost;
        return cost;
      });
      const buckets = (await store.spendBuckets()).length;
      lines.push(`  ${label.padEnd(11)} ${String(rows).padStart(9)} rows  ${String(buckets).padStart(5)} rollup rows  spend view ${view.toFixed(2).padStart(8)} ms  (log scan ${scan.toFixed(0).padStart(6)} ms; written in ${fillS.toFixed(1)} s)`);
    } finally {
      await done();
    }
  }
  return lines;
}

export async function spendBench(): Promise<string> {
  const lines = [`spend view over rollups: ${BIG} log rows vs 10 (median of 9 reads of /admin/v1/spend?groupBy=key)`];
  lines.push(
    ...(await measureStore('SQLite', async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'mg-spend-bench-'));
      const store = await openStore(`sqlite://${path.join(dir, 'gw.db')}`, Date.now, { secretBox: SecretBox.ephemeral() });
      return { store, done: async () => (await store.close(), rmSync(dir, { recursive: true, force: true })) };
    })),
  );
  try {
    const server = await startPostgres();
    lines.push(
      ...(await measureStore('PostgreSQL', async () => {
        const store = await openStore(await server.createDatabase(), Date.now, { secretBox: SecretBox.ephemeral() });
        return { store, done: () => store.close() };
      })),
    );
  } catch (err) {
    lines.push(`  PostgreSQL: skipped (${(err as Error).message})`);
  }
  return lines.join('\n');
}

if (require.main === module) {
  spendBench().then(
    (text) => {
      process.stdout.write(`${text}\n`);
      process.exit(0);
    },
    (err) => {
      process.stderr.write(`spend bench failed: ${(err as Error).stack}\n`);
      process.exit(1);
    },
  );
}
