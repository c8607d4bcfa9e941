/**
 * Server name and alias rules (interface.md §2.5, contracts.md §2): spaces become underscores, `-` is
 * refused (it separates the alias from the tool name in `<alias>-<tool>`), names are unique per organisation.
 */
export const NAME_PATTERN = /^[A-Za-z0-9_.]+$/;

/** Normalise a server name or alias; returns the name or an error message. */
export function normalizeServerName(raw: string): { name: string } | { error: string } {
  const name = raw.trim().replace(/\s+/g, '_');
  if (name.length === 0) return { error: 'must not be empty' };
  if (name.includes('-')) return { error: `"${raw}" contains "-"; use "_" instead (e.g. "${name.replace(/-/g, '_')}")` };
  if (!NAME_PATTERN.test(name)) return { error: `"${raw}" may contain only letters, digits, "_" and "."` };
  return { name };
}

/** The separator between a server alias and a tool name when several servers are reachable. */
export const TOOL_PREFIX_SEPARATOR = '-';

export function prefixedToolName(alias: string, tool: string): string {
  return `${alias}${TOOL_PREFIX_SEPARATOR}${tool}`;
}

/** Split `<alias>-<tool>` at the first separator (aliases never contain it). */
export function splitPrefixedToolName(name: string): { alias: string; tool: string } | undefined {
  const at = name.indexOf(TOOL_PREFIX_SEPARATOR);
  if (at <= 0 || at === name.length - 1) return undefined;
  return { alias: name.slice(0, at), tool: name.slice(at + 1) };
}
