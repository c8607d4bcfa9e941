/**
 * One Server-Sent Events frame flowing through the gateway. The raw `data` text and its parsed JSON are
 * each produced lazily and cached, so a frame that nobody inspects or changes is written out byte for byte
 * as the upstream sent it (no parse, no re-serialisation on the pass-through path).
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
  private wire: Uint8Array | undefined;

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
   * decoder checks): written as they came, with no string building or re-encoding.
   */
  static fromWire(data: string, event: string | undefined, wire: Uint8Array): SseFrame {
    const frame = new SseFrame(event, data, undefined, false);
    frame.wire = wire;
    return frame;
  }

  static fromJson(value: unknown, event?: string): SseFrame {
    return new SseFrame(event, undefined, value, true);
  }

  /** The data line's text, e.g. a JSON document or `[DONE]`. */
  get data(): string {
    if (this.rawData === undefined) this.rawData = JSON.stringify(this.parsed);
    return this.rawData;
  }

  /** The parsed JSON payload; throws a SyntaxError on a malformed frame. */
  get json(): any {
    if (!this.hasParsed) {
      this.parsed = JSON.parse(this.rawData as string);
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
    return this.rawData === '[DONE]';
  }

  /** The upstream's own bytes when the frame passes through unchanged (the same bytes as toWire()). */
  get wireBytes(): Uint8Array | undefined {
    return this.wire;
  }

  /** The frame as written on the wire. */
  toWire(): string {
    return this.event === undefined ? `data: ${this.data}\n\n` : `event: ${this.event}\ndata: ${this.data}\n\n`;
  }
}

export const DONE_FRAME_WIRE = 'data: [DONE]\n\n';
