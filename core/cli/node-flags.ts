/**
 * Was node itself given this V8 flag, on its command line or in NODE_OPTIONS (which takes only some V8
 * flags, `--max-semi-space-size` among them)? The command's own memory settings (heap-growth.ts,
 * young-generation.ts) step aside when it was: the operator's value wins.
 * V8 reads `_` and `-` in a flag's name alike (`--max_semi_space_size`), so both spellings count.
 */
export function givenToNode(flag: string): boolean {
  const wanted = spelled(flag);
  const named = (arg: string) => arg.startsWith('--') && spelled(arg.split('=')[0]) === wanted;
  return process.execArgv.some(named) || (process.env.NODE_OPTIONS ?? '').split(/\s+/).some(named);
}

function spelled(flag: string): string {
  return flag.replace(/^--/, '').replace(/_/g, '-');
}
