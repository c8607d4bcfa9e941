import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chatBody } from './chat-body';
import { BENCH_KEY, BENCH_MODEL, benchGatewayConfig } from './gateway-config';
import { measure, warm, type Measurement } from './measure';
import { median } from './median';
import { comparePaired, type PairedComparison } from './paired';
import { canPin, pinSelf, startGatewayProcess, startNode, type Child } from './processes';
import { cpuMicros } from './proc-stats';

/**
 * `node dist/test/bench/compare-builds.js BUILD_A BUILD_B [json|stream] [rounds] [seconds]`: two builds of
 * the gateway (each a checkout with `dist/` built, e.g. a `git worktree` of an older commit), the same
 * load on each in alternating rounds (A then B, then B then A), the median CPU µs per request and req/s of
 * each, then B against A round by round with a sign test (paired.ts). How the before and after numbers of
 * a performance change are taken on a noisy host: the host's noise changes from one minute to the next, so
 * only runs taken side by side, many times over, compare (issue 16).
 *
 * COMPARE_TOGETHER=1 loads both builds at the same moment instead, both on core 1, each with its own load
 * at the same concurrency: whatever else the host does in a round, both get it, so the CPU per request
 * compares even when the host's noise swings by a third from one round to the next (how the changes of
 * issue 16's seventeenth session were found). The process started second on the core got about 3% less
 * CPU per request in runs of one build against itself, so the first half of the rounds runs with A
 * started first and the second half with B started first; the req/s of a round are not a comparison
 * here (the two share one core).
 *
 * As `npm run bench` runs the gateway: SQLite store in a temp dir, the 1 KB chat body, a priced model, an
 * access line per request, c=16 (or COMPARE_CONNECTIONS), the gateway alone on core 1 (both of them with
 * COMPARE_TOGETHER). For a CPU profile, start the gateway by hand with `node --cpu-prof dist/core/main.js`
 * and load it with wrk: Node refuses `--cpu-prof` in NODE_OPTIONS, so it cannot reach the processes
 * started here.
 */
const [buildA, buildB, mode = 'json', roundsArg = '5', secondsArg = '4'] = process.argv.slice(2);
/** COMPARE_CONNECTIONS=1 compares the added latency of one client (the p50 medians), not throughput */
const CONNECTIONS = Number(process.env.COMPARE_CONNECTIONS ?? 16);
const TOGETHER = process.env.COMPARE_TOGETHER === '1';

interface Build {
  root: string;
  cpu: number[];
  rps: number[];
  p50: number[];
  p99: number[];
}

interface Running {
  build: Build;
  child: Child;
  url: string;
  pid: number;
}

async function main(): Promise<void> {
  if (!buildA || !buildB || (mode !== 'json' && mode !== 'stream')) {
    console.error('usage: [COMPARE_TOGETHER=1] compare-builds BUILD_A BUILD_B [json|stream] [rounds] [seconds]');
    process.exit(2);
  }
  const pin = canPin();
  if (pin) pinSelf(0);
  const upstream = await startNode([path.join(__dirname, 'fast-upstream.js')], /^listening \d+/, pin ? 0 : undefined);
  const upstreamUrl = `http://127.0.0.1:${upstream.line.split(' ')[1]}`;
  const children: Child[] = [upstream];
  const dirs: string[] = [];
  const start = async (builds: Build[]): Promise<Running[]> => {
    const running: Running[] = [];
    for (const build of builds) {
      const dir = mkdtempSync(path.join(tmpdir(), 'mg-compare-'));
      dirs.push(dir);
      const config = benchGatewayConfig(upstreamUrl, { url: `sqlite://${path.join(dir, 'gateway.db')}` });
      const gw = await startGatewayProcess(path.resolve(build.root, 'dist', 'core', 'main.js'), config, pin ? 1 : undefined);
      children.push(gw.child);
      running.push({ build, child: gw.child, url: gw.url, pid: gw.child.process.pid! });
    }
    return running;
  };
  try {
    const builds: Build[] = [buildA, buildB].map((root) => ({ root, cpu: [], rps: [], p50: [], p99: [] }));
    const body = chatBody(BENCH_MODEL, mode === 'stream');
    const rounds = Number(roundsArg);
    const spec = (r: Running) => ({ url: `${r.url}/v1/chat/completions`, connections: CONNECTIONS, durationSeconds: Number(secondsArg), body, headers: { authorization: `Bearer ${BENCH_KEY}` } });
    if (TOGETHER) {
      for (const half of [0, 1]) {
        const running = await start(half ? [...builds].reverse() : builds);
        await Promise.all(running.map((r) => warm(spec(r))));
        const halfRounds = half ? rounds - Math.floor(rounds / 2) : Math.floor(rounds / 2);
        for (let round = 0; round < halfRounds; round++) {
          const before = running.map((r) => cpuMicros(r.pid));
          const measured = await Promise.all(running.map((r) => measure(r.build.root, spec(r))));
          running.forEach((r, i) => record(r, measured[i], before[i], cpuMicros(r.pid), half * Math.floor(rounds / 2) + round));
        }
        await Promise.all(running.map((r) => r.child.stop()));
      }
    } else {
      const running = await start(builds);
      for (let round = 0; round < rounds; round++) {
        // A then B, then B then A: a host that drifts within a round does not favour the build measured first
        for (const r of round % 2 ? [...running].reverse() : running) {
          await warm(spec(r));
          const before = cpuMicros(r.pid);
          const m = await measure(r.build.root, spec(r));
          record(r, m, before, cpuMicros(r.pid), round);
        }
      }
    }
    const how = TOGETHER ? 'rounds with both loaded at once on one core' : 'alternating rounds';
    console.log(`\n${mode} c=${CONNECTIONS}, medians of ${roundsArg} ${how} of ${secondsArg} s:`);
    for (const b of builds) console.log(`  ${b.root}: ${median(b.cpu)?.toFixed(0) ?? '?'} µs CPU a request, ${median(b.rps).toFixed(0)} req/s, p50 ${median(b.p50).toFixed(3)} ms, p99 ${median(b.p99).toFixed(3)} ms`);
    const [a, b] = builds;
    if (a.cpu.length === b.cpu.length && a.cpu.length > 0) printPaired('CPU µs a request', comparePaired(a.cpu, b.cpu), a.root, b.root);
    if (!TOGETHER) printPaired('req/s', comparePaired(a.rps, b.rps), a.root, b.root);
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

/** One build's measurement of one round, printed and kept for the medians and the paired comparison. */
function record(r: Running, m: Measurement, before: number | undefined, after: number | undefined, round: number): void {
  const { build } = r;
  if (m.errors > 0) throw new Error(`${build.root}: ${m.errors} requests failed`);
  build.rps.push(m.rps);
  build.p50.push(m.p50);
  build.p99.push(m.p99);
  if (before !== undefined && after !== undefined) build.cpu.push((after - before) / m.requests);
  console.log(`round ${round + 1} ${build.root}: ${m.rps.toFixed(0)} req/s, p50 ${m.p50.toFixed(3)} ms, p99 ${m.p99.toFixed(3)} ms, ${build.cpu.at(-1)?.toFixed(0) ?? '?'} µs CPU a request`);
}

/** The round-by-round verdict (paired.ts): how much B differs from A, and whether the host's noise explains it. */
function printPaired(what: string, c: PairedComparison, rootA: string, rootB: string): void {
  const verdict = c.p < 0.05 ? 'more than this host\'s noise' : 'within this host\'s noise';
  console.log(
    `  ${what}, ${rootB} over ${rootA} round by round: ${c.ratios.map((r) => r.toFixed(2)).join(' ')}; median ${c.medianRatio.toFixed(3)}, ` +
      `lower in ${c.lower} of ${c.ratios.length} rounds, higher in ${c.higher}; sign test p = ${c.p.toFixed(3)} (${verdict})`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
