/** Compile a key's `models` list (`*` matches any run of characters) into one test, once per key. */
export function compileModelPatterns(patterns: string[] | undefined): (name: string) => boolean {
  if (!patterns) return () => true;
  const exact = new Set(patterns.filter((p) => !p.includes('*')));
  const wildcards = patterns.filter((p) => p.includes('*'));
  if (wildcards.length === 0) return (name) => exact.has(name);
  const regex = new RegExp(`^(?:${wildcards.map((p) => p.split('*').map(escapeRegex).join('.*')).join('|')})$`);
  return (name) => exact.has(name) || regex.test(name);
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
