import type { IncomingHttpHeaders } from 'node:http';
import type Dispatcher from 'undici/types/dispatcher';
import { UpstreamError } from '../errors/gateway-error';
import { AttemptHandler } from './attempt-handler';
import { answerText, MAX_ANSWER_BYTES } from './gathered-answer';

/** A streamed answer's body: its chunks as they come, read once. */
export interface StreamedBody extends AsyncIterable<Uint8Array> {
  /**
   * the rest of the body as text, read the way undici's `body.text()` reads it (see answerText); past
   * MAX_ANSWER_BYTES a 502 upstream_bad_response, and the upstream request is cancelled
   */
  text(): Promise<string>;
  /**
   * Stop reading: the upstream request is cancelled (its connection closes) unless the answer was already
   * in. With `err`, a read waiting or to come fails with it; without, the body just ends.
   */
  destroy(err?: Error): void;
}

/** An upstream answer whose headers are in and whose body is still coming: what a streamed exchange needs. */
export interface StreamedAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: StreamedBody;
}

/**
 * How much of the answer may wait unread before the upstream is paused (undici stops reading its socket,
 * so TCP slows the upstream down). SSE chunks are small: the byte bound is for upstreams that send big
 * ones, and also hold while the chunks of one socket read wait to be handed to a reader that asked for
 * them. Reading resumes once the reader has taken everything that waited.
 */
const MAX_WAITING_CHUNKS = 16;
const MAX_WAITING_BYTES = 64 * 1024;

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

interface Reader {
  resolve(result: IteratorResult<Buffer>): void;
  reject(err: unknown): void;
}

/**
 * An undici dispatch handler for streamed answers (SSE and the like): `answer` resolves once the headers
 * are in, and the handler itself is the answer's body, an async iterator fed by undici's chunks. Compared
 * with undici's `request()` it spares, on every attempt, the body Readable and its async iterator, an
 * AbortController and the listener undici adds to its signal.
 *
 * The attempt (deadlines, the client going away: attempt-handler.ts) lasts until the body has been read
 * to its end or given up, so the total deadline covers the stream, and a client that goes away while
 * chunks still wait fails the reads. A failure after the headers (a socket reset, undici's idle timeout)
 * fails the waiting or next read with undici's own error; the stream's reader names it (translated-stream.ts).
 */
export class StreamHandler extends AttemptHandler<StreamedAnswer> implements StreamedBody, AsyncIterator<Buffer> {
  /** chunks not yet read, oldest first (those of the current socket read wait for the hand-off too) */
  private waiting: Buffer[] = [];
  private waitingBytes = 0;
  /** reads waiting for a chunk (one, from a for-await loop) */
  private readers: Reader[] = [];
  /** a hand-off to a waiting reader is queued for after undici's parse of the current socket read */
  private handOffQueued = false;
  /** the upstream sent its last byte */
  private ended = false;

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200 || this.over) return; // 1xx informational answers are not the answer
    this.status = statusCode;
    this.deliver({ status: statusCode, headers, body: this });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.over) return;
    this.waiting.push(chunk);
    this.waitingBytes += chunk.length;
    const readerWaits = this.readers.length > 0;
    if (readerWaits && !this.handOffQueued) {
      // Handed over once undici has parsed the whole socket read: an upstream that writes each event as
      // its own HTTP chunk (most do) sends many chunks in one read, and the reader gets them as one, so a
      // stream costs a pass through its reader's layers per read rather than per event.
      this.handOffQueued = true;
      queueMicrotask(this.handOff);
    }
    // the byte bound holds either way; the chunk bound only for chunks no reader is waiting for
    if (this.waitingBytes > MAX_WAITING_BYTES || (!readerWaits && this.waiting.length > MAX_WAITING_CHUNKS)) controller.pause();
  }

  private readonly handOff = (): void => {
    this.handOffQueued = false;
    if (this.waiting.length === 0) return; // closed or failed meanwhile: the reader has been answered
    const reader = this.readers.shift();
    if (reader) reader.resolve({ done: false, value: this.takeWaiting() });
  };

  onResponseEnd(): void {
    if (this.over) return;
    this.ended = true;
    if (this.waiting.length === 0) this.close();
  }

  override onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    if (this.over) return; // after fail() or destroy(), undici reports the abort we asked for
    // before the headers the attempt failed (a gateway error for the retry decision); after them the stream broke
    this.fail(this.status === 0 ? this.translate(err) : err);
  }

  protected override failedAfterAnswer(err: Error): void {
    this.drop();
    for (const reader of this.readers.splice(0)) reader.reject(err);
  }

  next(): Promise<IteratorResult<Buffer>> {
    if (this.waiting.length > 0) return Promise.resolve({ done: false, value: this.takeWaiting() });
    if (this.failure) return Promise.reject(this.failure);
    if (this.over) return Promise.resolve(DONE);
    return new Promise((resolve, reject) => this.readers.push({ resolve, reject }));
  }

  /** A reader that stops early (a for-await loop left by break or throw) cancels the rest. */
  return(): Promise<IteratorResult<Buffer>> {
    this.destroy();
    return Promise.resolve(DONE);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  destroy(err?: Error): void {
    if (err) return this.fail(err);
    if (this.over) return;
    // over first: the abort below comes back through onResponseError, which must not fail the reads
    this.close();
    this.controller?.abort(new Error('The gateway stopped reading the upstream answer.'));
  }

  async text(): Promise<string> {
    const chunks: Buffer[] = [];
    let length = 0;
    for (let read = await this.next(); !read.done; read = await this.next()) {
      length += read.value.length;
      // an error answer, or JSON where a stream was asked for, is held whole: bounded as a gathered answer is
      if (length > MAX_ANSWER_BYTES) {
        const err = new UpstreamError(`The upstream's answer is larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB.`, 'upstream_bad_response');
        this.destroy(err);
        throw err;
      }
      chunks.push(read.value);
    }
    return answerText(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length));
  }

  /** Everything that waits, as one chunk (joined: at most MAX_WAITING_BYTES and a chunk); reading resumes. */
  private takeWaiting(): Buffer {
    const { waiting } = this;
    const value = waiting.length === 1 ? waiting[0] : Buffer.concat(waiting, this.waitingBytes);
    this.drop();
    if (this.ended) this.close();
    // may deliver chunks (or the end, or an error) at once: they wait behind this read's chunk
    else if (this.controller?.paused) this.controller.resume();
    return value;
  }

  /** The body is over without a failure: the attempt ends, waiting reads end too. */
  private close(): void {
    this.finish();
    this.drop();
    for (const reader of this.readers.splice(0)) reader.resolve(DONE);
  }

  private drop(): void {
    this.waiting = [];
    this.waitingBytes = 0;
  }
}
