/**
 * The per-request store work alone: CPU µs per log entry through the stack a request's entry takes
 * (RequestLog → LogWriter's turn → timed store → store guard → SQLite appendLogs, one transaction per
 * turn), with K entries settled per event-loop turn. Not part of `npm run bench`; run it alone to
 * compare two builds: `node dist/test/bench/log-write-bench.js [entries]`.
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

void (async () => {
  for (const k of [1, 2, 4, 16]) process.stdout.write(`${await run(k)}\n`);
})();
