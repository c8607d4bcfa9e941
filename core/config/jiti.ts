import type * as Jiti from 'jiti';

/**
 * jiti compiles TypeScript config files and plugins at run time. It is required here, when a `.ts`/`.js`
 * config or a plugin file is first loaded, so a gateway started from a JSON config never holds it.
 *
 * `model-gateway` and `model-gateway/sdk`, imported by a config file or a plugin, are the running gateway
 * itself: a config kept where no `node_modules/model-gateway` is above it (a mounted /etc/gateway, a
 * global install) failed to load its `import { defineConfig, env } from 'model-gateway'`, and a plugin
 * shares the gateway's error classes whichever copy it was installed beside.
 */
export function createJiti(id: string, options: NonNullable<Parameters<typeof Jiti.createJiti>[1]> = {}): ReturnType<typeof Jiti.createJiti> {
  const self = { 'model-gateway': require.resolve('../index'), 'model-gateway/sdk': require.resolve('../plugins/sdk') };
  return (require('jiti') as typeof Jiti).createJiti(id, { ...options, alias: { ...self, ...options.alias } });
}
