import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';

export interface Measurement {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** responses completed during the run (for CPU per request) */
  requests: number;
}

export interface LoadSpec {
  url: string;
  connections: number;
  durationSeconds: number;
  body?: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
}

/** wrk (Debian's package) reports latency in microseconds; autocannon only in whole milliseconds. */
export const HAVE_WRK = spawnSync('wrk', ['--version']).error === undefined;

export async function measure(label: string, spec: LoadSpec): Promise<Measurement> {
  return HAVE_WRK ? measureWithWrk(label, spec) : measureWithAutocannon(label, spec);
}

function wrkScript(spec: LoadSpec): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'mg-wrk-'));
  const file = path.join(dir, 'request.lua');
  const headers = { 'content-type': 'application/json', ...spec.headers };
  const lines = [`wrk.method = ${JSON.stringify(spec.method ?? 'POST')}`];
  if (spec.body) lines.push(`wrk.body = ${luaString(spec.body)}`);
  for (const [k, v] of Object.entries(headers)) lines.push(`wrk.headers[${luaString(k)}] = ${luaString(v)}`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

function luaString(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/** "1.23ms" / "850.00us" / "1.02s" -> milliseconds */
function toMs(value: string): number {
  const m = /^([\d.]+)(us|ms|s)$/.exec(value.trim());
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === 'us' ? n / 1000 : m[2] === 's' ? n * 1000 : n;
}

async function measureWithWrk(label: string, spec: LoadSpec): Promise<Measurement> {
  const { stdout } = await promisify(execFile)('wrk', ['-t1', `-c${spec.connections}`, `-d${spec.durationSeconds}s`, '--latency', '-s', wrkScript(spec), spec.url]);
  const pct = (p: string) => toMs(new RegExp(`^\\s*${p}%\\s+(\\S+)`, 'm').exec(stdout)?.[1] ?? '');
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? NaN);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const errors = non2xx + (socket ? socket.slice(1).reduce((n, v) => n + Number(v), 0) : 0);
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? NaN);
  return { label, rps, p50: pct('50'), p99: pct('99'), errors, requests };
}

/** One autocannon run (a real HTTP load generator) against a URL; latency is to the end of the response. */
async function measureWithAutocannon(label: string, spec: LoadSpec): Promise<Measurement> {
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.durationSeconds,
    method: spec.method ?? 'POST',
    headers: { 'content-type': 'application/json', ...spec.headers },
    body: spec.body,
  });
  const errors = result.errors + result.timeouts + (result.non2xx ?? 0);
  return { label, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors, requests: result.requests.total };
}

/** Warm connections and JIT before measuring. */
export async function warm(spec: LoadSpec): Promise<void> {
  if (HAVE_WRK) {
    await measureWithWrk('warm-up', { ...spec, durationSeconds: 1 });
    return;
  }
  await autocannon({ ...spec, duration: 1, method: spec.method ?? 'POST', headers: { 'content-type': 'application/json', ...spec.headers } } as autocannon.Options);
}

export function formatTable(title: string, rows: Measurement[], baseline?: string): string {
  const base = rows.find((r) => r.label === baseline);
  const lines = [`\n${title}`, `${'target'.padEnd(34)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'errors'.padStart(7)}${base ? `  ${'vs ' + base.label}` : ''}`];
  for (const r of rows) {
    const ratio = base && r !== base ? `  ${(r.rps / base.rps).toFixed(2)}x req/s, p50 ${r.p50 - base.p50 >= 0 ? '+' : ''}${(r.p50 - base.p50).toFixed(3)} ms` : '';
    lines.push(`${r.label.padEnd(34)} ${r.rps.toFixed(0).padStart(9)} ${r.p50.toFixed(3).padStart(8)} ${r.p99.toFixed(3).padStart(8)} ${String(r.errors).padStart(7)}${ratio}`);
  }
  return lines.join('\n');
}
