/**
 * One Server-Sent Events frame flowing through the gateway. The raw `data` text and its parsed JSON are
 * each produced lazily and cached, so a frame that nobody inspects or changes is written out byte for byte
 * as the upstream sent it (no parse, no re-serialisation on the pass-through path). A frame read from an
 * upstream keeps its bytes and is not even decoded to text until something reads `data`: the meters ask
 * `mentions` (a byte search) and `isDone`, so most frames of a stream never become strings at all.
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
  /** the upstream's bytes for this frame, exactly what toWire() would write; dropped on any change */
  private wire: Buffer | undefined;
  /** where the data line's value starts in `wire` (it ends 2 bytes before the end: LF, blank line) */
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
   * decoder checks): written as they came, with no string building or re-encoding. `dataStart` is where
   * the value of its one `data:` line begins; the text is decoded from there on first use.
   */
  static fromWire(event: string | undefined, wire: Buffer, dataStart: number): SseFrame {
    const frame = new SseFrame(event, undefined, undefined, false);
    frame.wire = wire;
    frame.dataStart = dataStart;
    return frame;
  }

  static fromJson(value: unknown, event?: string): SseFrame {
    return new SseFrame(event, undefined, value, true);
  }

  /** The data line's text, e.g. a JSON document or `[DONE]`. */
  get data(): string {
    if (this.rawData === undefined) {
      this.rawData = this.wire ? this.wire.toString('utf8', this.dataStart, this.wire.length - 2) : JSON.stringify(this.parsed);
    }
    return this.rawData;
  }

  /** Whether the data text contains `token`: on an upstream's frame not yet decoded, a search of its bytes. */
  mentions(token: string): boolean {
    if (this.rawData === undefined && this.wire) return this.wire.indexOf(needle(token), this.dataStart) !== -1;
    return this.data.includes(token);
  }

  /**
   * Whether the data (a JSON object's text) may hold the key `name` with a value other than null: a test
   * before parsing, so a stream whose every chunk says `"usage":null` (OpenAI's, once usage is asked
   * for) is not parsed chunk by chunk. A quote inside a JSON string is always escaped, so `name"` then a
   * colon is a key; a nested key of that name also answers true (the caller reads the parsed JSON).
   */
  hasKey(name: string): boolean {
    const wire = this.rawData === undefined ? this.wire : undefined;
    const text: string | Buffer = wire ?? this.data;
    const key = `${name}"`;
    for (let at = indexIn(text, key, wire ? this.dataStart : 0); at !== -1; at = indexIn(text, key, at + key.length)) {
      if (at === 0 || byteAt(text, at - 1) !== QUOTE) continue;
      let i = skipSpace(text, at + key.length);
      if (byteAt(text, i) !== COLON) continue;
      i = skipSpace(text, i + 1);
      if (byteAt(text, i) !== N_LOWER || byteAt(text, i + 1) !== U_LOWER) return true;
    }
    return false;
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
    this.wire = undefined;
  }

  /** Call after mutating `json` in place. */
  markChanged(): void {
    this.rawData = undefined;
    this.wire = undefined;
  }

  get isDone(): boolean {
    if (this.rawData === undefined && this.wire) return this.wire.length - this.dataStart === DONE_VALUE.length && this.wire.includes(DONE_VALUE, this.dataStart);
    return this.rawData === '[DONE]';
  }

  /** The upstream's own bytes when the frame passes through unchanged (the same bytes as toWire()). */
  get wireBytes(): Buffer | undefined {
    return this.wire;
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
 * Tokens the gateway's own code looks for, as bytes, made once each: a search for a Buffer is several
 * times faster than for a string, which Node encodes anew on every call.
 */
const NEEDLES = new Map<string, Buffer>();

function needle(token: string): Buffer {
  let bytes = NEEDLES.get(token);
  if (!bytes) NEEDLES.set(token, (bytes = Buffer.from(token)));
  return bytes;
}

const QUOTE = 0x22;
const COLON = 0x3a;
const N_LOWER = 0x6e;
const U_LOWER = 0x75;

/** where `token` (ASCII) next occurs in a string or a Buffer, from `from` */
function indexIn(text: string | Buffer, token: string, from: number): number {
  return typeof text === 'string' ? text.indexOf(token, from) : text.indexOf(needle(token), from);
}

/** the code unit (of a string) or byte (of a Buffer) at i; NaN past the end. Only ASCII is compared. */
function byteAt(text: string | Buffer, i: number): number {
  return typeof text === 'string' ? text.charCodeAt(i) : i < text.length ? text[i] : NaN;
}

function skipSpace(text: string | Buffer, i: number): number {
  for (let c = byteAt(text, i); c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d; c = byteAt(text, ++i));
  return i;
}
