/**
 * The per-request store work alone: CPU µs per log entry through the stack a request's entry takes
 * (RequestLog → LogWriter's turn → timed store → store guard → SQLite appendLogs, one transaction per
 * turn), with K entries settled per event-loop turn. Not part of `npm run bench`; run it alone to
 * compare two builds: `node dist/test/bench/log-write-bench.js [entries]`.
 *
 * `log-write-bench.js paced [seconds]`: entries as a gateway under load settles them, five a turn and a
 * turn a millisecond, so that the store's timers (its commit every COMMIT_EVERY_MS) run as they do in a
 * serving process; the loop's own cost, measured without the entries, is taken off.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GatewayMetrics } from '../../core/observability/metrics';
import { timedStore } from '../../core/observability/timed-store';
import type { LogEntry } from '../../core/store/log-entry';
import { openGatewayStore } from '../../core/store/open-gateway-store';
import { RequestLog } from '../../core/store/request-log';

const silent = { debug() {}, info() {}, warn() {}, error() {} } as never;
const TOTAL = Number(process.argv[2] ?? 40_000);

function entry(i: number): LogEntry {
  const id = `req_${i.toString(36).padStart(24, '0')}`;
  return { id, requestId: id, time: new Date().toISOString(), keyId: 'key_bench', org: 'bench', endpoint: 'chat', model: 'bench-model', deploymentId: 'up/bench-model', promptTokens: 120, completionTokens: 40, cost: 0.0002, status: 200, latencyMs: 3, errorCode: null, outcome: 'ok', details: {} };
}

async function run(perTurn: number): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mg-logbench-'));
  const opened = await openGatewayStore({ url: `sqlite://${path.join(dir, 'gw.db')}` } as never, Date.now, { logger: silent });
  const metrics = new GatewayMetrics({ deployments: () => [], logWriter: () => ({ queued: 0, dropped: 0, failedWrites: 0, written: 0 }) });
  const log = new RequestLog(timedStore(opened.backend, metrics), silent);
  let n = 0;
  const turn = () => Promise.all(Array.from({ length: perTurn }, () => log.record(entry(n++))));
  for (let i = 0; i < 500; i++) await turn();
  const turns = Math.ceil(TOTAL / perTurn);
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < turns; i++) await turn();
  const cpu = process.cpuUsage(cpu0);
  const us = (cpu.user + cpu.system) / (turns * perTurn);
  metrics.close();
  await opened.close();
  rmSync(dir, { recursive: true, force: true });
  return `${String(perTurn).padStart(3)} entries/turn: ${us.toFixed(1).padStart(6)} µs CPU per entry (${(cpu.system / (turns * perTurn)).toFixed(1)} of it system)`;
}

/** CPU µs per entry (all threads) with entries settled five a turn, a turn a millisecond, for `seconds`. */
async function paced(seconds: number, record: boolean): Promise<number> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mg-logbench-'));
  const opened = await openGatewayStore({ url: `sqlite://${path.join(dir, 'gw.db')}` } as never, Date.now, { logger: silent });
  const metrics = new GatewayMetrics({ deployments: () => [], logWriter: () => ({ queued: 0, dropped: 0, failedWrites: 0, written: 0 }) });
  const log = new RequestLog(timedStore(opened.backend, metrics), silent);
  let n = 0;
  const runFor = async (ms: number): Promise<number> => {
    const end = Date.now() + ms;
    let entries = 0;
    while (Date.now() < end) {
      for (let i = 0; i < 5; i++) {
        const e = entry(n++);
        if (record) void log.record(e);
      }
      entries += 5;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    return entries;
  };
  await runFor(2000);
  const cpu0 = process.cpuUsage();
  const entries = await runFor(seconds * 1000);
  const cpu = process.cpuUsage(cpu0);
  metrics.close();
  await opened.close();
  rmSync(dir, { recursive: true, force: true });
  return (cpu.user + cpu.system) / entries;
}

void (async () => {
  if (process.argv[2] === 'paced') {
    const seconds = Number(process.argv[3] ?? 8);
    const loop = await paced(seconds, false);
    const stored = await paced(seconds, true);
    process.stdout.write(`paced, 5 entries a turn: ${(stored - loop).toFixed(1)} µs CPU per entry (${stored.toFixed(1)} with the loop's own ${loop.toFixed(1)})\n`);
    return;
  }
  for (const k of [1, 2, 4, 16]) process.stdout.write(`${await run(k)}\n`);
})();
