import type * as Jiti from 'jiti';

/**
 * jiti compiles TypeScript config files and plugins at run time. It is required here, when a `.ts`/`.js`
 * config or a plugin file is first loaded, so a gateway started from a JSON config never holds it.
 */
export function createJiti(...args: Parameters<typeof Jiti.createJiti>): ReturnType<typeof Jiti.createJiti> {
  return (require('jiti') as typeof Jiti).createJiti(...args);
}
