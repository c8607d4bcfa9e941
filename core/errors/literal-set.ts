/**
 * Finds where any of many fixed strings occurs in a text, in one pass whose cost grows with the text and
 * not with the number of strings. The scrubber needs that: every log line and error message is checked
 * against every secret the gateway knows, and an MCP registry shared by many organisations can hold
 * thousands (one `includes` per secret cost about 0.1 ms a log line per 1,000 secrets).
 *
 * How: a few strings are each looked for with `indexOf` (native and fastest while they are few). More:
 * every string is at least `window` characters long; a rolling hash of each `window`-character stretch of
 * the text is looked up in a bit table (a typed array, one probe per character), and only on a hit are
 * the strings that start with a stretch of that hash compared with the text. No pattern is compiled.
 */
export class LiteralSet {
  /** strings by the hash of their first `window` characters */
  private readonly byHash = new Map<number, string[]>();
  private readonly values: string[] = [];
  private readonly table = new Uint32Array(TABLE_SIZE / 32);
  /** HASH_BASE ** (window - 1), for taking the oldest character out of the rolling hash */
  private readonly dropFactor: number;

  constructor(
    values: Iterable<string>,
    private readonly window: number,
  ) {
    let factor = 1;
    for (let i = 1; i < window; i++) factor = Math.imul(factor, HASH_BASE);
    this.dropFactor = factor;
    for (const value of values) {
      if (value.length < window) throw new RangeError(`a string shorter than ${window} characters cannot be matched`);
      this.values.push(value);
      const hash = hashOf(value, window);
      const same = this.byHash.get(hash);
      if (same) same.push(value);
      else this.byHash.set(hash, [value]);
      const slot = slotOf(hash);
      this.table[slot >>> 5] |= 1 << (slot & 31);
    }
  }

  /**
   * The stretches of `text` covered by occurrences, as [start, end, start, end, ...] in order; occurrences
   * that overlap or touch are merged into one stretch, so two secrets that share characters in the text
   * are both covered whole.
   */
  cover(text: string): number[] {
    const found = this.values.length <= FEW ? this.findEach(text) : this.scan(text);
    return found.length === 0 ? found : merged(found);
  }

  /** [start, end] of every occurrence, string by string */
  private findEach(text: string): number[] {
    const found: number[] = [];
    for (const value of this.values) {
      for (let at = text.indexOf(value); at !== -1; at = text.indexOf(value, at + 1)) found.push(at, at + value.length);
    }
    return found;
  }

  /** [start, end] of every occurrence, in one pass over the text */
  private scan(text: string): number[] {
    const found: number[] = [];
    const { window, table, dropFactor } = this;
    if (text.length < window) return found;
    let hash = hashOf(text, window);
    for (let start = 0; ; start++) {
      const slot = slotOf(hash);
      if (table[slot >>> 5] & (1 << (slot & 31))) {
        for (const value of this.byHash.get(hash) ?? NONE) if (text.startsWith(value, start)) found.push(start, start + value.length);
      }
      const next = start + window;
      if (next >= text.length) return found;
      hash = (Math.imul(hash - Math.imul(text.charCodeAt(start), dropFactor), HASH_BASE) + text.charCodeAt(next)) | 0;
    }
  }
}

/** Up to this many strings, one indexOf each beats the scan (about 30 break even on a 430-character log line). */
const FEW = 24;
const HASH_BASE = 31;
/** bits in the table: 64 Ki (8 KB), so a few thousand strings still leave most probes a miss */
const TABLE_SIZE = 1 << 16;
const NONE: readonly string[] = [];

function hashOf(text: string, length: number): number {
  let hash = 0;
  for (let i = 0; i < length; i++) hash = (Math.imul(hash, HASH_BASE) + text.charCodeAt(i)) | 0;
  return hash;
}

function slotOf(hash: number): number {
  return (hash ^ (hash >>> 16)) & (TABLE_SIZE - 1);
}

/** [start, end] pairs -> sorted, with overlapping or touching stretches joined */
function merged(pairs: number[]): number[] {
  const order: [number, number][] = [];
  for (let i = 0; i < pairs.length; i += 2) order.push([pairs[i], pairs[i + 1]]);
  order.sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [start, end] of order) {
    const last = out.length - 1;
    if (last > 0 && start <= out[last]) out[last] = Math.max(out[last], end);
    else out.push(start, end);
  }
  return out;
}
