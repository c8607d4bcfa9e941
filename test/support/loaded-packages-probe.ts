/**
 * Preloaded into a gateway process by a test (`node --require …/loaded-packages-probe.js main.js`): when
 * the process exits it writes, to the file LOADED_PACKAGES_FILE names, the npm packages it had loaded
 * (from require.cache), one name a line. Tests read it to see what a config made the gateway load.
 */
import { writeFileSync } from 'node:fs';

const out = process.env.LOADED_PACKAGES_FILE;
if (out) {
  process.on('exit', () => {
    const names = new Set<string>();
    for (const file of Object.keys(require.cache)) {
      const m = /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(file);
      if (m) names.add(m[1].replace(/\\/g, '/'));
    }
    writeFileSync(out, [...names].sort().join('\n'));
  });
}
