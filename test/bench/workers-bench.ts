import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import type { BenchContext } from './extra-benches';
import { chatBody } from './chat-body';
import { inTurn } from './in-turn';
import { measure, warm } from './measure';
import { median } from './median';
import { comparePaired } from './paired';
import { pinSelf, startGatewayProcess, startNode, type Child } from './processes';
import { cpuMicros } from './proc-stats';

const KEY = 'sk-bench-workers-key';

interface Sample {
  rps: number;
  p50: number;
  cpu: number;
  busy: number;
}

/** The pids of a process and its children (a `--workers` primary and its workers), from /proc. */
function processTree(pid: number): number[] {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    return [pid, ...children.flatMap(processTree)];
  } catch {
    return [pid];
  }
}

/** CPU time used so far by all of `pids` together (a primary and its workers), in µs. */
function treeCpuMicros(pids: number[]): number {
  return pids.reduce((n, pid) => n + (cpuMicros(pid) ?? 0), 0);
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
 * none pinned (the workers need every core), each against the same fast upstream at c=64, in interleaved
 * repetitions. Reports the medians of req/s, CPU per request summed over the primary and its workers, and
 * how busy the whole machine was, and the median of each repetition's scaling from 1 to 2 workers. On a
 * 2-core machine the load generator and the upstream share the cores with the workers, which is what
 * bounds the scaling there.
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
    const samples = new Map<string, Sample[]>(targets.map((t) => [t.label, []]));
    const spec = (t: (typeof targets)[number]) => ({ url: `${t.url}/v1/chat/completions`, connections: 64, durationSeconds: ctx.durationSeconds, body, headers });
    for (const t of targets) await warm(spec(t));
    // interleaved repetitions, like the main tables: on a shared 2-core host one 4 s run per target put
    // the scaling anywhere from 0.98x to 1.46x
    for (let rep = 0; rep < ctx.repetitions; rep++) {
      for (const t of inTurn(targets, rep)) {
        const pids = processTree(t.pid);
        const cpuBefore = treeCpuMicros(pids);
        const ticksBefore = machineTicks();
        const m = await measure(t.label, spec(t));
        const ticksAfter = machineTicks();
        const cpuAfter = treeCpuMicros(pids);
        samples.get(t.label)!.push({ rps: m.rps, p50: m.p50, cpu: (cpuAfter - cpuBefore) / m.requests, busy: (ticksAfter.busy - ticksBefore.busy) / (ticksAfter.total - ticksBefore.total) });
      }
    }
    const rows = targets.map((t) => {
      const list = samples.get(t.label)!;
      const mid = (pick: (s: Sample) => number) => median(list.map(pick));
      return { label: t.label, rps: mid((s) => s.rps), p50: mid((s) => s.p50), cpu: mid((s) => s.cpu), busy: mid((s) => s.busy) };
    });
    // each repetition's scaling (its two runs seconds apart, on the same moment of the host), then the median
    const [bareRps, oneRps, twoRps] = targets.map((t) => samples.get(t.label)!.map((s) => s.rps));
    const scaling = comparePaired(oneRps, twoRps);
    const ofBare = comparePaired(bareRps, twoRps).medianRatio;
    const lines = [
      `\nevery core: chat JSON, c=64, SQLite store, nothing pinned (load generator and upstream on the same cores), ` +
        `median of ${ctx.repetitions} interleaved`,
      `${'target'.padEnd(28)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'CPU µs/req'.padStart(10)} ${'machine busy'.padStart(12)}`,
      ...rows.map((r) => `${r.label.padEnd(28)} ${r.rps.toFixed(0).padStart(8)} ${r.p50.toFixed(3).padStart(8)} ${r.cpu.toFixed(0).padStart(10)} ${`${(100 * r.busy).toFixed(0)}%`.padStart(12)}`),
      `  scaling from 1 to 2 workers: ${scaling.medianRatio.toFixed(2)}x on ${cores} cores (by repetition: ${scaling.ratios.map((x) => x.toFixed(2)).join(', ')}); ` +
        `2 workers reach ${ofBare.toFixed(2)}x the bare proxy`,
    ];
    return lines.join('\n');
  } finally {
    for (const c of children.reverse()) await c.stop();
    rmSync(dir, { recursive: true, force: true });
    if (ctx.pin) pinSelf(0);
  }
}
