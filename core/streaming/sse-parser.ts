import { UpstreamError } from '../errors/gateway-error';
import { SseFrame } from './sse-frame';

const LF = 10;
const CR = 13;
const COLON = 58;
const SPACE = 32;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const DATA = Buffer.from('data');
const EVENT = Buffer.from('event');
const ID = Buffer.from('id');
const DATA_PREFIX = Buffer.from('data: ');

/**
 * The most an event may hold before its end (its lines, comments included). A hostile or broken upstream
 * (an MCP server is an organisation's own) could otherwise send one event that never ends and have it
 * held in memory until the process fails. Well above what real events carry: a streamed image's frame is
 * a few tens of MiB at most.
 */
export const MAX_EVENT_BYTES = 64 * 1024 * 1024;

function eventTooLong(): UpstreamError {
  return new UpstreamError(`The upstream sent an event of more than ${MAX_EVENT_BYTES / 1024 / 1024} MiB.`, 'upstream_bad_response');
}

/** whether buf[start, newline) is a `data: ` line with LF alone at its end (no CR before it) */
function isDataLine(buf: Buffer, start: number, newline: number): boolean {
  if (newline - start < DATA_PREFIX.length || buf[newline - 1] === CR) return false;
  for (let i = 0; i < DATA_PREFIX.length; i++) if (buf[start + i] !== DATA_PREFIX[i]) return false;
  return true;
}

/** whether buf[start, end) is the field name `name` (compared as bytes: no string per line) */
function isField(buf: Buffer, start: number, end: number, name: Buffer): boolean {
  if (end - start !== name.length) return false;
  for (let i = 0; i < name.length; i++) if (buf[start + i] !== name[i]) return false;
  return true;
}

/**
 * Incremental SSE decoder (the WHATWG event-stream rules that matter for model APIs): frames end at a
 * blank line, `data:` lines of one frame are joined with "\n", comments (`:`) are skipped, and CRLF or
 * LF line endings both work. Synchronous: one upstream read in, the frames it completes out, so a caller
 * can handle them without an async hop per frame.
 *
 * It works on the bytes: lines are found by scanning for LF, and only complete lines are decoded, each
 * on its own (a LF byte never occurs inside a multi-byte UTF-8 character, so a character split across
 * reads is whole by then; decoding a line costs a fraction of a streaming TextDecoder). A frame written
 * exactly as the gateway would write it (`event: E\n` at most, one `data: ` line, LF endings) keeps the
 * upstream's bytes, so it can pass through without being encoded again (SseFrame.wireBytes), and its
 * text is decoded only if something reads it: a chunk pushed must not be written to afterwards, since its
 * frames may point into it.
 */
export class SseDecoder {
  /**
   * bytes not yet made into frames, `pendingLength` of them: they start at the current frame's first line.
   * A buffer of the decoder's own with room to spare, so a frame that spans many reads is appended to
   * rather than copied whole at each one: a frame of 10,000 lines read one at a time copied 50 GB.
   */
  private pending: Buffer | undefined;
  private pendingLength = 0;
  /** how far into `pending` the lines have been read (a partial line starts here) */
  private scanned = 0;
  private event: string | undefined;
  /** the frame's `data:` values so far, as [start, end) pairs of byte offsets from the frame's first byte */
  private data: number[] = [];
  /** the frame's bytes are already in the gateway's own wire form so far */
  private canonical = true;
  private lines = 0;
  /**
   * Reads after `pending` that end no line, kept aside: they are joined to it once, when a read brings a
   * line end. Joining at every read copied a long line again with each piece of it: a 30 MiB frame (a
   * streamed image) cost seconds of CPU instead of milliseconds.
   */
  private waiting: Buffer[] = [];
  private waitingBytes = 0;
  /**
   * The stream has numbered an event (an `id` field, any value): a client can resume it with
   * Last-Event-ID. Frames carry no id; a caller that cares asks the decoder.
   */
  numbersEvents = false;
  /** the value of the last `id` field read: what a client resuming the stream sends as Last-Event-ID */
  lastEventId: string | undefined;

  private started = false;

  push(chunk: Uint8Array | string): SseFrame[] {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.pending !== undefined && this.started && bytes.indexOf(LF) === -1) {
      this.waiting.push(bytes);
      this.waitingBytes += bytes.length;
      if (this.pendingLength + this.waitingBytes > MAX_EVENT_BYTES) throw eventTooLong();
      return [];
    }
    let own = this.pending !== undefined;
    let buf = own ? this.append(bytes) : bytes;
    if (!this.started) {
      // a byte order mark before the first line is not part of it (the WHATWG rules; TextDecoder's default)
      if (buf.length < BOM.length && BOM.subarray(0, buf.length).equals(buf)) {
        this.keep(buf);
        return [];
      }
      this.started = true;
      if (buf.subarray(0, BOM.length).equals(BOM)) {
        buf = buf.subarray(BOM.length);
        own = false;
      }
    }
    const frames: SseFrame[] = [];
    let frameStart = 0;
    let start = this.scanned;
    let newline: number;
    // a blank line (the end of a frame) is tested for before searching: half the lines of a stream are one
    while ((newline = buf[start] === LF ? start : buf.indexOf(LF, start)) !== -1) {
      if (start === frameStart && this.lines === 0 && buf[newline + 1] === LF && isDataLine(buf, start, newline)) {
        // the usual frame, one `data: ` line then the blank line, taken whole: none of the line-by-line
        // state below, which is most of what a frame cost to decode
        frames.push(SseFrame.fromWire(undefined, buf, start, newline + 2, start + DATA_PREFIX.length));
        frameStart = start = newline + 2;
        continue;
      }
      const crlf = newline > start && buf[newline - 1] === CR;
      const end = crlf ? newline - 1 : newline;
      if (crlf) this.canonical = false;
      if (start === end) {
        if (this.data.length > 0) frames.push(this.frame(buf, frameStart, newline + 1));
        this.reset();
        frameStart = newline + 1;
      } else this.line(buf, frameStart, start, end);
      start = newline + 1;
    }
    if (frameStart === buf.length) {
      this.pending = undefined;
      this.pendingLength = 0;
      this.scanned = 0;
    } else if (own && frameStart === 0) {
      if (buf.length > MAX_EVENT_BYTES) throw eventTooLong();
      // no frame came out of the decoder's own buffer, so nothing points into it: it is appended to again
      this.scanned = start;
    } else {
      if (buf.length - frameStart > MAX_EVENT_BYTES) throw eventTooLong();
      // copied, so a few bytes of a partial frame do not keep a whole read's buffer alive
      this.keep(buf.subarray(frameStart));
      this.scanned = start - frameStart;
    }
    return frames;
  }

  /** `pending` followed by the waiting reads and `bytes`, in `pending` (grown to twice the size when full) */
  private append(bytes: Buffer): Buffer {
    const length = this.pendingLength + this.waitingBytes + bytes.length;
    if (length > this.pending!.length) {
      const grown = Buffer.allocUnsafe(Math.max(length, 2 * this.pending!.length));
      this.pending!.copy(grown, 0, 0, this.pendingLength);
      this.pending = grown;
    }
    for (const piece of this.waiting) this.pendingLength += piece.copy(this.pending!, this.pendingLength);
    this.pendingLength += bytes.copy(this.pending!, this.pendingLength);
    if (this.waiting.length > 0) this.waiting = [];
    this.waitingBytes = 0;
    return this.pending!.subarray(0, this.pendingLength);
  }

  private keep(bytes: Buffer): void {
    this.pending = Buffer.from(bytes);
    this.pendingLength = bytes.length;
  }

  private frame(buf: Buffer, start: number, end: number): SseFrame {
    const { data } = this;
    if (this.canonical && data.length === 2 && this.lines === (this.event === undefined ? 1 : 2)) {
      // the read's own bytes, not a copy: Node reads every socket chunk into a buffer of its own and never
      // reuses it, and a frame lives only until it is written (or, a few KiB of them, until counted)
      return SseFrame.fromWire(this.event, buf, start, end, start + data[0]);
    }
    const lines: string[] = [];
    for (let i = 0; i < data.length; i += 2) lines.push(buf.toString('utf8', start + data[i], start + data[i + 1]));
    return SseFrame.fromRaw(lines.join('\n'), this.event);
  }

  private reset(): void {
    this.event = undefined;
    this.data = [];
    this.canonical = true;
    this.lines = 0;
  }

  private line(buf: Buffer, frameStart: number, start: number, end: number): void {
    this.lines++;
    if (buf[start] === COLON /* comment */) {
      this.canonical = false;
      return;
    }
    // the field name ends at the line's first colon (a few bytes in), or the line is all name
    let fieldEnd = start;
    while (fieldEnd < end && buf[fieldEnd] !== COLON) fieldEnd++;
    let valueStart = fieldEnd === end ? end : fieldEnd + 1;
    if (buf[valueStart] === SPACE && valueStart < end) valueStart++;
    else this.canonical = false;
    if (isField(buf, start, fieldEnd, DATA)) {
      // decoded when the frame is made, or (a frame passed through) only if someone reads its text
      this.data.push(valueStart - frameStart, end - frameStart);
    } else if (isField(buf, start, fieldEnd, EVENT)) {
      // the gateway writes `event:` as a frame's first line, before its `data:`
      if (this.data.length > 0 || this.lines !== 1) this.canonical = false;
      this.event = buf.toString('utf8', valueStart, end);
    } else {
      if (isField(buf, start, fieldEnd, ID)) {
        this.numbersEvents = true;
        this.lastEventId = buf.toString('utf8', valueStart, end);
      }
      this.canonical = false;
    }
  }
}

/**
 * The frames of an SSE body. An event not closed by a blank line when the body ends is incomplete and is
 * discarded (as the WHATWG spec says): a cut stream must never hand a half-written JSON document on.
 */
export async function* parseSse(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseFrame> {
  const decoder = new SseDecoder();
  for await (const chunk of body) yield* decoder.push(chunk);
}
