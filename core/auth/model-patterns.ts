import { RE2JS } from 're2js';

/**
 * Compile a key's `models` list (`*` matches any run of characters) into one test, once per key. The
 * test runs on RE2 (re2js), in time linear in the model name: on a backtracking engine a list like
 * `a*a*a*a*b` against a long crafted model name from a client takes polynomial time.
 */
export function compileModelPatterns(patterns: string[] | undefined): (name: string) => boolean {
  if (!patterns) return () => true;
  const exact = new Set(patterns.filter((p) => !p.includes('*')));
  const wildcards = patterns.filter((p) => p.includes('*'));
  if (wildcards.length === 0) return (name) => exact.has(name);
  const re = RE2JS.compile(`^(?:${wildcards.map((p) => p.split('*').map(RE2JS.quote).join('.*')).join('|')})$`);
  return (name) => exact.has(name) || re.test(name);
}

