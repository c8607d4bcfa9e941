import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chatBody } from './chat-body';
import { BENCH_KEY, BENCH_MODEL, benchGatewayConfig } from './gateway-config';
import { measure, warm } from './measure';
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
 * As `npm run bench` runs the gateway: SQLite store in a temp dir, the 1 KB chat body, a priced model, an
 * access line per request, c=16 (or COMPARE_CONNECTIONS), the gateway alone on core 1. `--cpu-prof` goes in NODE_OPTIONS if wanted.
 */
const [buildA, buildB, mode = 'json', roundsArg = '5', secondsArg = '4'] = process.argv.slice(2);
/** COMPARE_CONNECTIONS=1 compares the added latency of one client (the p50 medians), not throughput */
const CONNECTIONS = Number(process.env.COMPARE_CONNECTIONS ?? 16);

async function main(): Promise<void> {
  if (!buildA || !buildB || (mode !== 'json' && mode !== 'stream')) {
    console.error('usage: compare-builds BUILD_A BUILD_B [json|stream] [rounds] [seconds]');
    process.exit(2);
  }
  const pin = canPin();
  if (pin) pinSelf(0);
  const upstream = await startNode([path.join(__dirname, 'fast-upstream.js')], /^listening \d+/, pin ? 0 : undefined);
  const children: Child[] = [upstream];
  const dirs: string[] = [];
  try {
    const builds = [];
    for (const root of [buildA, buildB]) {
      const dir = mkdtempSync(path.join(tmpdir(), 'mg-compare-'));
      dirs.push(dir);
      const config = benchGatewayConfig(`http://127.0.0.1:${upstream.line.split(' ')[1]}`, { url: `sqlite://${path.join(dir, 'gateway.db')}` });
      const gw = await startGatewayProcess(path.resolve(root, 'dist', 'core', 'main.js'), config, pin ? 1 : undefined);
      children.push(gw.child);
      builds.push({ root, url: gw.url, pid: gw.child.process.pid!, cpu: [] as number[], rps: [] as number[], p50: [] as number[], p99: [] as number[] });
    }
    const body = chatBody(BENCH_MODEL, mode === 'stream');
    for (let round = 0; round < Number(roundsArg); round++) {
      // A then B, then B then A: a host that drifts within a round does not favour the build measured first
      for (const build of round % 2 ? [...builds].reverse() : builds) {
        const spec = { url: `${build.url}/v1/chat/completions`, connections: CONNECTIONS, durationSeconds: Number(secondsArg), body, headers: { authorization: `Bearer ${BENCH_KEY}` } };
        await warm(spec);
        const before = cpuMicros(build.pid);
        const m = await measure(build.root, spec);
        const after = cpuMicros(build.pid);
        if (m.errors > 0) throw new Error(`${build.root}: ${m.errors} requests failed`);
        build.rps.push(m.rps);
        build.p50.push(m.p50);
        build.p99.push(m.p99);
        if (before !== undefined && after !== undefined) build.cpu.push((after - before) / m.requests);
        console.log(`round ${round + 1} ${build.root}: ${m.rps.toFixed(0)} req/s, p50 ${m.p50.toFixed(3)} ms, p99 ${m.p99.toFixed(3)} ms, ${build.cpu.at(-1)?.toFixed(0) ?? '?'} µs CPU a request`);
      }
    }
    console.log(`\n${mode} c=${CONNECTIONS}, medians of ${roundsArg} alternating rounds of ${secondsArg} s:`);
    for (const b of builds) console.log(`  ${b.root}: ${median(b.cpu)?.toFixed(0) ?? '?'} µs CPU a request, ${median(b.rps).toFixed(0)} req/s, p50 ${median(b.p50).toFixed(3)} ms, p99 ${median(b.p99).toFixed(3)} ms`);
    const [a, b] = builds;
    if (a.cpu.length === b.cpu.length && a.cpu.length > 0) printPaired('CPU µs a request', comparePaired(a.cpu, b.cpu), a.root, b.root);
    printPaired('req/s', comparePaired(a.rps, b.rps), a.root, b.root);
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
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
