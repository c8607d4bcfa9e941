import type { IncomingHttpHeaders } from 'node:http';
import type Dispatcher from 'undici/types/dispatcher';
import { UpstreamError } from '../errors/gateway-error';
import { AttemptHandler } from './attempt-handler';

/** A whole upstream answer: what a JSON (not streamed) exchange needs. */
export interface GatheredAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** the body's bytes, in one buffer */
  bytes: Buffer;
}

/**
 * The largest whole answer taken from an upstream. An upstream that never stops sending (broken, or
 * hostile) would otherwise be held in memory until the process fails. Well above real answers: the
 * largest are embeddings as JSON numbers (2,048 inputs of 3,072 dimensions, about 130 MB).
 */
export const MAX_ANSWER_BYTES = 256 * 1024 * 1024;

/**
 * An undici dispatch handler that gathers a JSON answer's chunks into one Buffer, for the upstream client's
 * non-streamed exchanges. Compared with undici's `request()` it spares, on every attempt, the response
 * Readable and its consume machinery, an AbortController and the listener undici adds to its signal.
 * Deadlines, the client going away and cancelling are the attempt's (attempt-handler.ts); `answer`
 * resolves with the last byte.
 */
export class GatherHandler extends AttemptHandler<GatheredAnswer> {
  private headers: IncomingHttpHeaders = {};
  private chunks: Buffer[] = [];
  private length = 0;

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200 || this.over) return; // 1xx informational answers are not the answer
    this.status = statusCode;
    this.headers = headers;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.over) return;
    this.length += chunk.length;
    if (this.length > MAX_ANSWER_BYTES) {
      this.chunks = [];
      return this.fail(new UpstreamError(`The upstream's answer is larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB.`, 'upstream_bad_response'));
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.over) return;
    this.finish();
    const { chunks } = this;
    this.chunks = [];
    this.deliver({ status: this.status, headers: this.headers, bytes: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, this.length) });
  }
}

/**
 * An answer's bytes as text, the way undici's `body.text()` reads them: UTF-8, a leading byte order mark
 * dropped, invalid sequences replaced (the JSON parse that follows decides whether the answer is usable).
 */
export function answerText(bytes: Buffer): string {
  const start = bytes.length > 2 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  return bytes.toString('utf8', start);
}

/** An error answer's text as JSON if it is JSON, else as (truncated) text. */
export function errorBodyOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text.slice(0, 2000);
  }
}
