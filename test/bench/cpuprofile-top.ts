import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * `node dist/test/bench/cpuprofile-top.js FILE.cpuprofile [N]`: the top N functions of a V8 CPU profile
 * (`node --cpu-prof`) by self time and by total time (self + callees, each function counted once per
 * stack), as percentages of the samples. How the per-request CPU of the gateway was found (issue 16).
 * A third argument skips the first SKIP ms (the process's boot and warm-up), and idle samples never count,
 * so the percentages are shares of the CPU spent serving.
 */
interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const [file, n = '25', skip = '0'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

const name = (node: Node) => {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url ? `${url.includes('node_modules') ? url.slice(url.lastIndexOf('node_modules/') + 13) : path.relative(process.cwd(), url.replace(/^file:\/\//, ''))}:${lineNumber + 1}` : '';
  return `${functionName || '(anonymous)'} ${where}`.trim();
};

const self = new Map<string, number>();
const total = new Map<string, number>();
let elapsedUs = 0;
let count = 0;
for (let i = 0; i < profile.samples.length; i++) {
  elapsedUs += profile.timeDeltas[i] ?? 0;
  const id = profile.samples[i];
  const leaf = byId.get(id)!;
  if (elapsedUs < Number(skip) * 1000 || leaf.callFrame.functionName === '(idle)') continue;
  count++;
  self.set(name(leaf), (self.get(name(leaf)) ?? 0) + 1);
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const label = name(byId.get(cur)!);
    if (seen.has(label)) continue;
    seen.add(label);
    total.set(label, (total.get(label) ?? 0) + 1);
  }
}
const top = (map: Map<string, number>) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(n))
    .map(([label, samples]) => `${((100 * samples) / count).toFixed(1).padStart(5)}%  ${label}`)
    .join('\n');
process.stdout.write(`${count} samples\n\nself time\n${top(self)}\n\ntotal time\n${top(total)}\n`);
