import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import type { BenchContext } from './extra-benches';
import { chatBody } from './chat-body';
import { measure, warm } from './measure';
import { pinSelf, startGatewayProcess, startNode, type Child } from './processes';
import { cpuMicros } from './proc-stats';

const KEY = 'sk-bench-workers-key';

/** The pids of a process and its children (a `--workers` primary and its workers), from /proc. */
function processTree(pid: number): number[] {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    return [pid, ...children.flatMap(processTree)];
  } catch {
    return [pid];
  }
}

/** Busy and total jiffies of the whole machine (/proc/stat), to tell how much CPU was left over. */
function machineTicks(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  const idle = fields[3] + (fields[4] ?? 0);
  return { busy: total - idle, total };
}

/**
 * Issue 16, "every core": the gateway on SQLite with `--workers 1` and `--workers 2`, and the bare proxy,
 * none pinned (the workers need every core), each against the same fast upstream at c=64. Reports req/s,
 * the scaling from 1 to 2 workers, CPU per request summed over the primary and its workers, and how busy
 * the whole machine was: on a 2-core machine the load generator and the upstream share the cores with
 * the workers, which is what bounds the scaling there.
 */
export async function workersBench(ctx: BenchContext): Promise<string> {
  // the bench pins itself (and so whatever it starts) to core 0: this section needs every core, for the
  // workers and for wrk, and gives core 0 back to the load generator when it is done
  const cores = cpus().length;
  if (ctx.pin) pinSelf(`0-${cores - 1}`);
  const children: Child[] = [];
  const dir = mkdtempSync(path.join(tmpdir(), 'mg-bench-workers-'));
  try {
    const targets: { label: string; url: string; pid: number }[] = [];
    const bare = await startNode([path.join(__dirname, 'bare-proxy.js'), ctx.upstreamUrl], /^listening \d+/, undefined);
    children.push(bare);
    targets.push({ label: 'bare proxy (1 process)', url: `http://127.0.0.1:${bare.line.split(' ')[1]}`, pid: bare.process.pid! });
    for (const workers of [1, 2]) {
      const config = {
        store: { url: `sqlite://${path.join(dir, `workers-${workers}.db`)}` },
        organizations: [{ id: 'bench' }],
        keys: [{ key: KEY, org: 'bench' }],
        providers: [{ id: 'up', type: 'openai', baseUrl: `${ctx.upstreamUrl}/v1`, apiKey: 'upstream-key' }],
        models: [{ name: 'bench-model', provider: 'up', price: { inputPerMTok: 1, outputPerMTok: 2 } }],
      };
      const gw = await startGatewayProcess(ctx.gatewayBinary, config, undefined, {}, ['--workers', String(workers)]);
      children.push(gw.child);
      targets.push({ label: `model-gateway --workers ${workers}`, url: gw.url, pid: gw.child.process.pid! });
    }
    const body = chatBody('bench-model', false);
    const headers = { authorization: `Bearer ${KEY}` };
    const rows: { label: string; rps: number; p50: number; cpu: number; busy: number }[] = [];
    for (const t of targets) {
      const spec = { url: `${t.url}/v1/chat/completions`, connections: 64, durationSeconds: ctx.durationSeconds, body, headers };
      await warm(spec);
      const pids = processTree(t.pid);
      const cpuBefore = pids.reduce((n, pid) => n + (cpuMicros(pid) ?? 0), 0);
      const ticksBefore = machineTicks();
      const m = await measure(t.label, spec);
      const ticksAfter = machineTicks();
      const cpuAfter = pids.reduce((n, pid) => n + (cpuMicros(pid) ?? 0), 0);
      rows.push({ label: t.label, rps: m.rps, p50: m.p50, cpu: (cpuAfter - cpuBefore) / m.requests, busy: (ticksAfter.busy - ticksBefore.busy) / (ticksAfter.total - ticksBefore.total) });
    }
    const one = rows[1].rps;
    const lines = [
      '\nevery core: chat JSON, c=64, SQLite store, nothing pinned (load generator and upstream on the same cores)',
      `${'target'.padEnd(28)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'CPU µs/req'.padStart(10)} ${'machine busy'.padStart(12)}`,
      ...rows.map((r) => `${r.label.padEnd(28)} ${r.rps.toFixed(0).padStart(8)} ${r.p50.toFixed(3).padStart(8)} ${r.cpu.toFixed(0).padStart(10)} ${`${(100 * r.busy).toFixed(0)}%`.padStart(12)}`),
      `  scaling from 1 to 2 workers: ${(rows[2].rps / one).toFixed(2)}x on ${cores} cores; 2 workers reach ${(rows[2].rps / rows[0].rps).toFixed(2)}x the bare proxy`,
    ];
    return lines.join('\n');
  } finally {
    for (const c of children.reverse()) await c.stop();
    rmSync(dir, { recursive: true, force: true });
    if (ctx.pin) pinSelf(0);
  }
}
