import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chatBody } from './chat-body';
import { BENCH_KEY, BENCH_MODEL, benchGatewayConfig } from './gateway-config';
import { measure } from './measure';
import { startGatewayProcess, startNode } from './processes';
import { cpuMicros, peakRssMiB } from './proc-stats';

/**
 * The memory soak (issue 16): the gateway as users run it (the command, SQLite store, a priced model, a
 * log row per request) under a steady load for a long time, its RSS sampled from /proc every few seconds.
 * Prints the series and its start, peak, end and slope: flat means the slope of the second half is about
 * zero, not climbing with the requests served.
 *
 *   BENCH_SOAK_SECONDS=600 node dist/test/bench/soak.js
 *
 * BENCH_SOAK_SECONDS (default 600), BENCH_SOAK_MODE stream|json (default stream, 20 chunks),
 * BENCH_SOAK_CONNECTIONS (default 16), BENCH_SOAK_SAMPLE_SECONDS (default 5). Linux only (/proc).
 */
const DIST = path.resolve(__dirname, '..', '..');
const SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 600);
const STREAM = (process.env.BENCH_SOAK_MODE ?? 'stream') !== 'json';
const CONNECTIONS = Number(process.env.BENCH_SOAK_CONNECTIONS ?? 16);
const SAMPLE_SECONDS = Number(process.env.BENCH_SOAK_SAMPLE_SECONDS ?? 5);

/** Resident set size now (VmRSS) in MiB. */
function rssMiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for process ${pid}`);
  return Number(m[1]) / 1024;
}

/** Least-squares slope of (t seconds, MiB) points, in MiB per minute. */
function slopePerMinute(points: [number, number][]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mt = points.reduce((s, [t]) => s + t, 0) / n;
  const mv = points.reduce((s, [, v]) => s + v, 0) / n;
  const num = points.reduce((s, [t, v]) => s + (t - mt) * (v - mv), 0);
  const den = points.reduce((s, [t]) => s + (t - mt) ** 2, 0);
  return den === 0 ? 0 : (num / den) * 60;
}

async function main(): Promise<void> {
  const upstream = await startNode([path.join(__dirname, 'fast-upstream.js')], /^listening \d+/, undefined);
  const upstreamUrl = `http://127.0.0.1:${upstream.line.split(' ')[1]}`;
  const storeDir = mkdtempSync(path.join(tmpdir(), 'mg-soak-'));
  const config = benchGatewayConfig(upstreamUrl, { url: `sqlite://${path.join(storeDir, 'gateway.db')}` });
  const { child, url } = await startGatewayProcess(path.join(DIST, 'core', 'main.js'), config, undefined);
  const pid = child.process.pid!;
  try {
    const idle = rssMiB(pid);
    process.stdout.write(`soak: ${STREAM ? 'stream (20 chunks)' : 'json'} at c=${CONNECTIONS} for ${SECONDS} s, RSS every ${SAMPLE_SECONDS} s; idle ${idle.toFixed(1)} MiB\n`);
    const series: [number, number][] = [];
    const started = Date.now();
    const cpu0 = cpuMicros(pid);
    const sampler = setInterval(() => {
      const t = (Date.now() - started) / 1000;
      const rss = rssMiB(pid);
      series.push([t, rss]);
      process.stdout.write(`  t=${t.toFixed(0).padStart(4)} s  RSS ${rss.toFixed(1)} MiB\n`);
    }, SAMPLE_SECONDS * 1000);
    const run = await measure('soak', {
      url: `${url}/v1/chat/completions`,
      connections: CONNECTIONS,
      durationSeconds: SECONDS,
      body: chatBody(BENCH_MODEL, STREAM),
      headers: { authorization: `Bearer ${BENCH_KEY}` },
    });
    clearInterval(sampler);
    const cpu1 = cpuMicros(pid);
    const values = series.map(([, v]) => v);
    const half = series.filter(([t]) => t >= SECONDS / 2);
    const peak = peakRssMiB(pid);
    process.stdout.write(
      [
        `requests ${run.requests} (${run.rps.toFixed(0)} req/s, p50 ${run.p50.toFixed(2)} ms, errors ${run.errors})` + (cpu0 !== undefined && cpu1 !== undefined ? `, CPU ${((cpu1 - cpu0) / run.requests).toFixed(0)} µs/req` : ''),
        `RSS start ${values[0]?.toFixed(1)} MiB, peak ${Math.max(...values).toFixed(1)} MiB (VmHWM ${peak?.toFixed(1)} MiB), end ${values.at(-1)?.toFixed(1)} MiB`,
        `slope ${slopePerMinute(series).toFixed(2)} MiB/min over the run, ${slopePerMinute(half).toFixed(2)} MiB/min over its second half`,
      ].join('\n') + '\n',
    );
  } finally {
    await child.stop();
    await upstream.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`soak failed: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  },
);
