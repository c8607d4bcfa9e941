/**
 * Instructions per request, counted by valgrind's callgrind: the measure of the request path that this
 * host's noise moves least. The req/s and CPU µs of the main table swing by ±10% from one minute to the
 * next on a shared machine (issue 16), so a change of a few µs cannot be seen there. An instruction count
 * moves much less with what else the machine is doing: two copies of one build, counted side by side,
 * came within 0.7% of each other on JSON and within 5% on the stream (whose work depends more on
 * timing: how frames are gathered into writes, the timers of the stream's end).
 *
 * Each system under test runs under callgrind with instrumentation off (so it starts and warms up at a
 * few times slower than native rather than fifty), takes WARM requests so that V8 has compiled its hot
 * code, then is counted over COUNT requests (16 in flight, the 1 KB chat body): the main thread's
 * instructions over the requests. V8 compiles on helper threads, and those are left out: in a warm
 * process they are idle, and under callgrind they lag behind and would be counted in the window. What the
 * count does not see: the kernel's share (sys time), cache misses and how fast the instructions retire,
 * so it says which build does less work, not by how much it is faster.
 *
 * In `npm run bench` with BENCH_INSTRUCTIONS=1 (about ten minutes more). Alone, to compare builds of the
 * gateway (each a checkout with `dist/` built): `node dist/test/bench/instruction-counts.js [BUILD ...]`.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { chatBody } from './chat-body';
import { BENCH_KEY, BENCH_MODEL, benchGatewayConfig } from './gateway-config';
import type { BenchContext } from './extra-benches';
import { startLoggingProcess, startNode, type Child } from './processes';

const WARM = Number(process.env.BENCH_INSTRUCTIONS_WARM ?? 10_000);
const COUNT = Number(process.env.BENCH_INSTRUCTIONS_COUNT ?? 2_000);
/** a streamed request does more work: half as many of them */
const STREAM_WARM = Math.ceil(WARM / 2);
const STREAM_COUNT = Math.ceil(COUNT / 2);
const CONNECTIONS = 16;
/**
 * BENCH_INSTRUCTIONS_KEEP=DIR copies each count's dump there (`<system>-json.out`, `<system>-stream.out`):
 * `callgrind_annotate --inclusive=no FILE` then says which of node's own functions (V8's builtins and
 * runtime, the garbage collector, libuv, the kernel calls) the instructions went to. JavaScript compiled
 * by V8 shows as addresses without names: with NODE_OPTIONS=--perf-basic-prof each process also writes
 * /tmp/perf-<pid>.map (the pid is in the dump's `pid:` line), whose lines `ADDRESS SIZE NAME` name them.
 */
const KEEP = process.env.BENCH_INSTRUCTIONS_KEEP;
/**
 * One young-generation size for every system, the gateway's under load (core/cli/young-generation.ts):
 * V8 otherwise sizes it by the allocation rate it sees per millisecond, which under callgrind depends on
 * what else runs, and the scavenges it then does moved one build's count by 6% between two runs.
 */
const YOUNG_GENERATION = ['--min-semi-space-size=8', '--max-semi-space-size=8'];

interface Counted {
  label: string;
  json: number;
  stream: number;
}

/** valgrind and callgrind_control on the PATH, or why not. */
function missingTools(): string | undefined {
  for (const tool of ['valgrind', 'callgrind_control']) {
    if (spawnSync(tool, ['--version'], { stdio: 'ignore' }).status !== 0) return `${tool} not found (Debian: apt-get install valgrind)`;
  }
  return undefined;
}

/** A process under callgrind, instrumentation off until `count` turns it on. */
class UnderCallgrind {
  /** dumps written so far: callgrind numbers each dump's files, cg.out.<n>-<thread> */
  private dumped = 0;

  private constructor(
    private readonly child: Child,
    private readonly dir: string,
    readonly url: string,
  ) {}

  /** `argv`: node's arguments; `{dir}` in them is this process's own directory. */
  static async start(argv: string[]): Promise<UnderCallgrind> {
    const dir = mkdtempSync(path.join(tmpdir(), 'mg-callgrind-'));
    // valgrind's own messages go to a file of their own, not into the bench's output
    const wrapper = ['valgrind', '--tool=callgrind', '--separate-threads=yes', '--instr-atstart=no', `--callgrind-out-file=${path.join(dir, 'cg.out')}`, `--log-file=${path.join(dir, 'valgrind.log')}`];
    const args = [...YOUNG_GENERATION, ...argv.map((a) => a.replaceAll('{dir}', dir))];
    const { child, url } = await startLoggingProcess(dir, args, undefined, {}, { wrapper, readyWithinMs: 180_000 });
    return new UnderCallgrind(child, dir, url);
  }

  /** The main thread's instructions per request over `requests` requests of `body`. */
  async count(body: string, requests: number, name: string): Promise<number> {
    const pid = String(this.child.process.pid);
    control('-i', 'on', pid);
    control('-z', pid);
    await load(this.url, body, requests);
    control('-i', 'off', pid);
    control('-d', pid);
    // the dump's file for thread 1, the main thread
    const file = path.join(this.dir, `cg.out.${++this.dumped}-01`);
    for (let waited = 0; !existsSync(file) || !/^totals:/m.test(readFileSync(file, 'utf8')); waited += 100) {
      if (waited > 60_000) throw new Error(`callgrind wrote no ${file}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (KEEP) copyFileSync(file, path.join(KEEP, `${name}.out`));
    const totals = /^totals:\s*(\d+)/m.exec(readFileSync(file, 'utf8'))!;
    return Number(totals[1]) / requests;
  }

  warm(body: string, requests: number): Promise<void> {
    return load(this.url, body, requests);
  }

  stop(): Promise<void> {
    return this.child.stop();
  }
}

function control(...args: string[]): void {
  const r = spawnSync('callgrind_control', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`callgrind_control ${args.join(' ')}: ${r.stderr || r.stdout}`);
}

/** Exactly `requests` chat requests, CONNECTIONS at a time; every answer must be a 200. */
async function load(url: string, body: string, requests: number): Promise<void> {
  const pool = new Pool(url, { connections: CONNECTIONS, pipelining: 1 });
  let next = 0;
  const worker = async () => {
    while (next < requests) {
      next++;
      const r = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${BENCH_KEY}` }, body });
      await r.body.text();
      if (r.statusCode !== 200) throw new Error(`${url} answered ${r.statusCode}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  } finally {
    await pool.close();
  }
}

/** Count one system: warmed on JSON, the stream and JSON again, JSON counted, warmed on the stream again, stream counted. */
async function countOne(label: string, argv: string[]): Promise<Counted> {
  const target = await UnderCallgrind.start(argv);
  try {
    const json = chatBody(BENCH_MODEL, false);
    const stream = chatBody(BENCH_MODEL, true);
    // both kinds before either is counted, as in `npm run bench` (run-bench.ts says why): V8 throws away
    // code compiled for JSON bodies at the first streamed one and takes thousands of requests to compile
    // it again, so a stream counted after JSON alone counted that interval. (At WARM=5000 the request
    // validator was still waiting to be compiled again when the stream was counted: 5,000 to 8,000
    // instructions of its stream count.)
    await target.warm(json, WARM);
    await target.warm(stream, STREAM_WARM);
    await target.warm(json, Math.ceil(WARM / 2));
    const name = label.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '');
    const jsonCount = await target.count(json, COUNT, `${name}-json`);
    await target.warm(stream, Math.ceil(STREAM_WARM / 2));
    const streamCount = await target.count(stream, STREAM_COUNT, `${name}-stream`);
    return { label, json: jsonCount, stream: streamCount };
  } finally {
    await target.stop();
  }
}

function gatewayArgv(gatewayBinary: string, upstreamUrl: string, dir: string): string[] {
  const config = benchGatewayConfig(upstreamUrl, { url: `sqlite://${path.join(dir, 'gateway.db')}` });
  const file = path.join(dir, 'gateway.config.json');
  writeFileSync(file, JSON.stringify(config));
  return [gatewayBinary, '--config', file, '--port', '0'];
}

/** Count the bare proxy, the essential-work proxy and each gateway, all at once (the counts do not mind). */
export async function countInstructions(upstreamUrl: string, gateways: { label: string; binary: string }[]): Promise<string> {
  const missing = missingTools();
  if (missing) return `instructions per request: not counted: ${missing}`;
  if (KEEP) mkdirSync(KEEP, { recursive: true });
  const dir = mkdtempSync(path.join(tmpdir(), 'mg-instructions-'));
  try {
    const systems: [string, string[]][] = [
      ['bare proxy (undici)', [path.join(__dirname, 'bare-proxy.js'), upstreamUrl]],
      ['essential-work proxy', [path.join(__dirname, 'essential-proxy.js'), upstreamUrl, '{dir}', BENCH_KEY, BENCH_MODEL]],
      ...gateways.map(({ label, binary }, i): [string, string[]] => {
        const own = path.join(dir, `gateway-${i}`);
        mkdirSync(own);
        return [label, gatewayArgv(binary, upstreamUrl, own)];
      }),
    ];
    const counted = await Promise.all(systems.map(([label, argv]) => countOne(label, argv)));
    const [bare, essential] = counted;
    const width = Math.max(...counted.map((c) => c.label.length));
    const lines = [`instructions per request (callgrind, main thread, c=${CONNECTIONS}, counted over ${COUNT} JSON and ${STREAM_COUNT} stream requests after ${WARM} JSON, ${STREAM_WARM} stream and ${Math.ceil(WARM / 2)} JSON to warm up (and ${Math.ceil(STREAM_WARM / 2)} stream before the stream's count); at the default counts, one build counted twice came within 0.7% on JSON, 5% on the stream):`];
    lines.push(`  ${''.padEnd(width)}  ${'chat JSON'.padStart(20)}  ${'chat SSE (20 chunks)'.padStart(20)}  against the essential-work proxy (JSON / SSE)`);
    for (const c of counted) {
      const cell = (n: number, base: number) => `${Math.round(n).toLocaleString('en-US')} ${(n / base).toFixed(2)}x`.padStart(20);
      const against = c === bare || c === essential ? '' : `${(c.json / essential.json).toFixed(2)}x / ${(c.stream / essential.stream).toFixed(2)}x`;
      lines.push(`  ${c.label.padEnd(width)}  ${cell(c.json, bare.json)}  ${cell(c.stream, bare.stream)}  ${against}`);
    }
    return lines.join('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The section in `npm run bench`, when BENCH_INSTRUCTIONS=1. */
export async function instructionsBench(ctx: BenchContext): Promise<string> {
  if (process.env.BENCH_INSTRUCTIONS !== '1') return 'instructions per request: not counted (BENCH_INSTRUCTIONS=1 counts them under valgrind, about ten minutes)';
  return countInstructions(ctx.upstreamUrl, [{ label: 'model-gateway (SQLite)', binary: ctx.gatewayBinary }]);
}

async function main(): Promise<void> {
  const builds = process.argv.slice(2);
  const gateways = builds.length === 0 ? [{ label: 'model-gateway (SQLite)', binary: path.resolve(__dirname, '..', '..', 'core', 'main.js') }] : builds.map((root) => ({ label: `model-gateway ${root}`, binary: path.resolve(root, 'dist', 'core', 'main.js') }));
  const upstream = await startNode([path.join(__dirname, 'fast-upstream.js')], /^listening \d+/, undefined);
  try {
    process.stdout.write(`${await countInstructions(`http://127.0.0.1:${upstream.line.split(' ')[1]}`, gateways)}\n`);
  } finally {
    await upstream.stop();
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
