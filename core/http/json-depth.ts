/**
 * How deep a JSON text nests, found before it is parsed. `JSON.parse` builds a 100,000-deep value without
 * complaint, but everything after it that walks the value recursively (re-serialising it for the upstream,
 * guardrail extraction, ajv) overflows the stack: the limit has to hold before anything is built.
 *
 * One pass over the characters, counting brackets outside strings; it stops as soon as the limit is
 * passed, so a hostile body costs no more than its first `max` brackets.
 */

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Whether `text` nests arrays and objects more than `max` levels deep (strings are skipped). */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // skip the string; an escaped character (\" included) is passed over with its backslash
      for (i++; i < length; i++) {
        const s = text.charCodeAt(i);
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}
