import { PluginError } from '../../core/plugins/sdk';
import type { BlockRule } from './engine';

/**
 * Compile each pattern case-insensitively, once, at boot. Patterns get the `u` flag (so `\p{L}` works)
 * when they are valid under it, and plain `i` otherwise, since many everyday patterns (`[\w-.]`) are
 * only valid without it. A pattern valid under neither is a boot error naming its option path.
 */
export function compilePatterns(patterns: readonly string[]): BlockRule[] {
  return patterns.map((source, i) => {
    const label = `pattern ${i + 1}`;
    try {
      return { label, regex: new RegExp(source, 'iu') };
    } catch {
      try {
        return { label, regex: new RegExp(source, 'i') };
      } catch (err) {
        throw new PluginError(`patterns[${i}]`, `invalid regular expression: ${(err as Error).message}`);
      }
    }
  });
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * All words in one regex: whole words (no letter, digit or underscore on either side, in any script),
 * case-insensitive; a phrase matches across any run of whitespace.
 */
export function compileWords(words: readonly string[]): BlockRule[] {
  const alternatives = words
    .map((w) => w.trim())
    .filter((w) => w.length > 0)
    .map((w) => w.split(/\s+/).map(escape).join('\\s+'));
  if (alternatives.length === 0) return [];
  return [{ label: 'a blocked word', regex: new RegExp(`(?<![\\p{L}\\p{N}_])(?:${alternatives.join('|')})(?![\\p{L}\\p{N}_])`, 'iu') }];
}
