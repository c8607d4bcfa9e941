/**
 * Preloaded into a gateway process by a test (`node --require …/process-probe.js main.js`). When the
 * process exits it writes, as JSON to the file PROCESS_PROBE_FILE names:
 * - `packages`: the npm packages it had loaded (from require.cache);
 * - `v8Flags`: the flags it set on V8 at run time (v8.setFlagsFromString, recorded and passed on);
 * - `youngGenerationMiB`: the most V8 committed to its young generation (both semi-spaces), read after
 *   every collection and at exit.
 */
import { writeFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

const out = process.env.PROCESS_PROBE_FILE;
if (out) {
  const v8Flags: string[] = [];
  const setFlags = v8.setFlagsFromString;
  v8.setFlagsFromString = (flags: string) => {
    v8Flags.push(flags);
    setFlags(flags);
  };
  let youngGenerationMiB = 0;
  const readYoungGeneration = () => {
    const newSpace = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
    youngGenerationMiB = Math.max(youngGenerationMiB, (newSpace?.space_size ?? 0) / 1048576);
  };
  new PerformanceObserver(readYoungGeneration).observe({ entryTypes: ['gc'] });
  process.on('exit', () => {
    readYoungGeneration();
    const packages = new Set<string>();
    for (const file of Object.keys(require.cache)) {
      const m = /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(file);
      if (m) packages.add(m[1].replace(/\\/g, '/'));
    }
    writeFileSync(out, JSON.stringify({ packages: [...packages].sort(), v8Flags, youngGenerationMiB }));
  });
}
