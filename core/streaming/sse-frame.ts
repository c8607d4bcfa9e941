/**
 * One Server-Sent Events frame flowing through the gateway. The raw `data` text and its parsed JSON are
 * each produced lazily and cached, so a frame that nobody inspects or changes is written out byte for byte
 * as the upstream sent it (no parse, no re-serialisation on the pass-through path). A frame read from an
 * upstream keeps its bytes and is not even decoded to text until something reads `data`: the meters ask
 * `hasKey`, `mentions` (byte searches) and `isDone`, so most frames of a stream never become strings.
 */
export class SseFrame {
  /**
   * The usage this frame reports is the gateway's own estimate (a translated `message_start`), not the
   * upstream's count: meters skip it. Never written on the wire.
   */
  usageEstimated = false;
  private rawData: string | undefined;
  private parsed: unknown;
  private hasParsed: boolean;
  /**
   * The upstream's bytes for this frame, exactly what toWire() would write: [wireStart, wireEnd) of `src`,
   * the buffer it shares with the other frames of its upstream read (no view of its own is made unless
   * asked for: a typed array per frame was a third of what a stream allocated). Dropped on any change.
   */
  private src: Buffer | undefined;
  private start = 0;
  private end = 0;
  /** where the data line's value starts in `src` (it ends 2 bytes before `end`: LF, blank line) */
  private dataStart = 0;

  private constructor(readonly event: string | undefined, raw: string | undefined, parsed: unknown, hasParsed: boolean) {
    this.rawData = raw;
    this.parsed = parsed;
    this.hasParsed = hasParsed;
  }

  static fromRaw(data: string, event?: string): SseFrame {
    return new SseFrame(event, data, undefined, false);
  }

  /**
   * A frame read from an upstream whose bytes are already the wire form toWire() would build (the SSE
   * decoder checks): written as they came, with no string building or re-encoding. It is [start, end) of
   * `src`, and the value of its one `data:` line begins at `dataStart`; the text is decoded on first use.
   * `src` must not be written to afterwards.
   */
  static fromWire(event: string | undefined, src: Buffer, start: number, end: number, dataStart: number): SseFrame {
    const frame = new SseFrame(event, undefined, undefined, false);
    frame.src = src;
    frame.start = start;
    frame.end = end;
    frame.dataStart = dataStart;
    return frame;
  }

  static fromJson(value: unknown, event?: string): SseFrame {
    return new SseFrame(event, undefined, value, true);
  }

  /** The data line's text, e.g. a JSON document or `[DONE]`. */
  get data(): string {
    if (this.rawData === undefined) {
      this.rawData = this.src ? this.src.toString('utf8', this.dataStart, this.end - 2) : JSON.stringify(this.parsed);
    }
    return this.rawData;
  }

  /** Whether the data text contains `token`: on an upstream's frame not yet decoded, a search of its bytes. */
  mentions(token: string): boolean {
    const src = this.undecoded;
    return src ? findBytes(src, needle(token), this.dataStart, this.end - 2) !== -1 : this.data.includes(token);
  }

  /**
   * `mentions` for a question asked of this one frame, not of each frame of a read in turn: it searches
   * the frame's own bytes. `mentions` searches on to the end of the read, so that the next frames of the
   * read are answered from that one search, which makes a question about one frame cost the whole read:
   * `"error"` (a quote every few bytes of JSON, each one a false start) through a 4 KB read of 23 chunks
   * took about 3.5 µs, through its first chunk a few hundred ns.
   */
  mentionsInFrame(token: string): boolean {
    const src = this.undecoded;
    if (!src) return this.data.includes(token);
    return src.subarray(this.dataStart, this.end - 2).indexOf(needle(token).bytes) !== -1;
  }

  /**
   * Whether the data (a JSON object's text) may hold the key `name` with a value other than null: a test
   * before parsing, so a stream whose every chunk says `"usage":null` (OpenAI's, once usage is asked
   * for) is not parsed chunk by chunk. A quote inside a JSON string is always escaped, so `name"` then a
   * colon is a key; a nested key of that name also answers true (the caller reads the parsed JSON).
   */
  hasKey(name: string): boolean {
    const key = keyNeedle(name);
    const src = this.undecoded;
    if (src) return keyWithValue(src, key, this.dataStart, this.end - 2);
    const text = this.data;
    return keyWithValue(text, key, 0, text.length);
  }

  /**
   * The code of the data's character at `i` (its byte, on an upstream's frame not yet decoded: compare
   * ASCII only), NaN past its end: a look at a frame's first bytes without a search or a string.
   */
  dataCodeAt(i: number): number {
    const src = this.undecoded;
    if (!src) return this.data.charCodeAt(i);
    const at = this.dataStart + i;
    return at < this.end - 2 ? src[at] : NaN;
  }

  /** The upstream's bytes while the text is not decoded yet (searched as bytes; once decoded, the text is). */
  private get undecoded(): Buffer | undefined {
    return this.rawData === undefined ? this.src : undefined;
  }

  /** The parsed JSON payload; throws a SyntaxError on a malformed frame. */
  get json(): any {
    if (!this.hasParsed) {
      this.parsed = JSON.parse(this.data);
      this.hasParsed = true;
    }
    return this.parsed;
  }

  /** Replace the payload; the raw text is rebuilt on the next write. */
  set json(value: unknown) {
    this.parsed = value;
    this.hasParsed = true;
    this.rawData = undefined;
    this.src = undefined;
  }

  /** Call after mutating `json` in place. */
  markChanged(): void {
    this.rawData = undefined;
    this.src = undefined;
  }

  get isDone(): boolean {
    const src = this.undecoded;
    if (src) return this.end - this.dataStart === DONE_VALUE.length && src.compare(DONE_VALUE, 0, DONE_VALUE.length, this.dataStart, this.end) === 0;
    return this.rawData === '[DONE]';
  }

  /** The upstream's own bytes when the frame passes through unchanged (the same as toWire()), as a view made on request. */
  get wireBytes(): Buffer | undefined {
    return this.src?.subarray(this.start, this.end);
  }

  /**
   * The same bytes without a view: the buffer they are in (shared with the frames of the same upstream
   * read) and where in it, for writers and meters that gather runs of frames.
   */
  get wireSource(): Buffer | undefined {
    return this.src;
  }

  get wireStart(): number {
    return this.start;
  }

  get wireEnd(): number {
    return this.end;
  }

  /** The frame as written on the wire. */
  toWire(): string {
    return this.event === undefined ? `data: ${this.data}\n\n` : `event: ${this.event}\ndata: ${this.data}\n\n`;
  }
}

export const DONE_FRAME_WIRE = 'data: [DONE]\n\n';

/** the data value of the end-of-stream frame with the blank line after it, as bytes */
const DONE_VALUE = Buffer.from('[DONE]\n\n');

/**
 * A token the gateway's own code looks for, as text and as bytes (made once: Node would encode a string
 * needle anew on every search, several times slower), with the last search of it in an upstream's bytes.
 */
interface Needle {
  readonly text: string;
  readonly bytes: Buffer;
  /**
   * The last search: in `src` from `from`, the first occurrence was at `at` (-1: none). It keeps that one
   * read's buffer alive until the next search.
   */
  src: Buffer | undefined;
  from: number;
  at: number;
}

const NEEDLES = new Map<string, Needle>();

function needle(token: string): Needle {
  let found = NEEDLES.get(token);
  if (!found) NEEDLES.set(token, (found = { text: token, bytes: Buffer.from(token), src: undefined, from: 0, at: -1 }));
  return found;
}

/** the needle of a JSON key: the name and its closing quote */
const KEYS = new Map<string, Needle>();

/** the key asked for last: a stream asks about the same key frame after frame (a map lookup for each showed in the instruction counts) */
let lastKey: { name: string; needle: Needle } | undefined;

function keyNeedle(name: string): Needle {
  if (lastKey?.name === name) return lastKey.needle;
  let found = KEYS.get(name);
  if (!found) KEYS.set(name, (found = needle(`${name}"`)));
  lastKey = { name, needle: found };
  return found;
}

/**
 * The first occurrence of the needle in src[from, end), or -1. The frames of one upstream read share
 * `src` and are asked about in order, so the last search, made from an earlier point and run to where it
 * found the needle (or to the end of the read), answers for every later frame before that point: the
 * bytes of a read are searched about once, not once per frame from there to the read's end.
 */
function findBytes(src: Buffer, n: Needle, from: number, end: number): number {
  let at: number;
  if (n.src === src && n.from <= from && (n.at === -1 || n.at >= from)) at = n.at;
  else {
    at = src.indexOf(n.bytes, from);
    n.src = src;
    n.from = from;
    n.at = at;
  }
  return at !== -1 && at + n.bytes.length <= end ? at : -1;
}

function find(text: string | Buffer, n: Needle, from: number, end: number): number {
  if (typeof text !== 'string') return findBytes(text, n, from, end);
  const at = text.indexOf(n.text, from);
  return at !== -1 && at + n.text.length <= end ? at : -1;
}

/** Whether text[from, end) has `key` (a name and its closing quote) as a JSON key whose value is not null. */
function keyWithValue(text: string | Buffer, key: Needle, from: number, end: number): boolean {
  const length = key.text.length;
  for (let at = find(text, key, from, end); at !== -1; at = find(text, key, at + length, end)) {
    if (at === from || byteAt(text, at - 1, end) !== QUOTE) continue;
    let i = skipSpace(text, at + length, end);
    if (byteAt(text, i, end) !== COLON) continue;
    i = skipSpace(text, i + 1, end);
    if (byteAt(text, i, end) !== N_LOWER || byteAt(text, i + 1, end) !== U_LOWER) return true;
  }
  return false;
}

const QUOTE = 0x22;
const COLON = 0x3a;
const N_LOWER = 0x6e;
const U_LOWER = 0x75;

/** the code unit (of a string) or byte (of a Buffer) at i; NaN at or past `end`. Only ASCII is compared. */
function byteAt(text: string | Buffer, i: number, end: number): number {
  if (i >= end) return NaN;
  return typeof text === 'string' ? text.charCodeAt(i) : text[i];
}

function skipSpace(text: string | Buffer, i: number, end: number): number {
  for (let c = byteAt(text, i, end); c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d; c = byteAt(text, ++i, end));
  return i;
}
