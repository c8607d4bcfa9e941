/**
 * How deep a JSON text nests, found before it is parsed. `JSON.parse` builds a 100,000-deep value without
 * complaint, but everything after it that walks the value recursively (re-serialising it for the upstream,
 * guardrail extraction, ajv) overflows the stack: the limit has to hold before anything is built.
 *
 * One pass over the UTF-8 bytes, counting brackets outside strings (no byte of a multi-byte character can
 * be a bracket or a quote). Strings, most of a request, are skipped with the native `indexOf`. It stops
 * as soon as the limit is passed, so a hostile body costs no more than its first `max` brackets.
 *
 * Before that walk, the opening brackets are counted, in strings or not, with the native search alone:
 * a body cannot nest deeper than it opens, and most open far fewer than the limit (a 1 KB chat request
 * opens six), so most bodies are cleared without the walk: a few native calls instead of a JS loop over
 * every byte outside a string and a call per string (issue 16: 900 instructions for the bench's body
 * under callgrind, where the walk took 6,300).
 */

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = [OPEN_BRACE, OPEN_BRACKET];

/** Whether the JSON in `bytes` nests arrays and objects more than `max` levels deep (strings are skipped). */
export function nestsDeeperThan(bytes: Uint8Array, max: number): boolean {
  if (opensAtMost(bytes, max)) return false;
  let depth = 0;
  const length = bytes.length;
  for (let i = 0; i < length; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      // the closing quote: the next quote not escaped by an odd run of backslashes
      for (;;) {
        i = bytes.indexOf(QUOTE, i + 1);
        if (i === -1) return false; // an unterminated string: the parser reports it
        let backslashes = 0;
        while (bytes[i - 1 - backslashes] === BACKSLASH) backslashes++;
        if ((backslashes & 1) === 0) break;
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** Whether `bytes` holds at most `max` opening brackets and braces in all (stops counting past `max`). */
function opensAtMost(bytes: Uint8Array, max: number): boolean {
  let opens = 0;
  for (const open of OPENERS) {
    for (let i = bytes.indexOf(open); i !== -1; i = bytes.indexOf(open, i + 1)) if (++opens > max) return false;
  }
  return true;
}

/**
 * `nestsDeeperThan` for a value already parsed (by a library: an MCP upstream's answer), walked without
 * recursion, so the check itself cannot overflow the stack that writing the value back would.
 */
export function valueNestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}
