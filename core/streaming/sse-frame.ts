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
    if (this.rawData === undefined && this.wire) return this.wire.includes(token, this.dataStart);
    return this.data.includes(token);
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
