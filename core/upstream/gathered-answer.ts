import type { IncomingHttpHeaders } from 'node:http';
import type Dispatcher from 'undici/types/dispatcher';
import type { GatewayError } from '../errors/gateway-error';
import { UpstreamTimeoutError } from '../errors/gateway-error';

/** A whole upstream answer: what a JSON (not streamed) exchange needs. */
export interface GatheredAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** the body's bytes, in one buffer */
  bytes: Buffer;
}

export interface AnswerDeadlines {
  /** the attempt's start (Date.now()): both deadlines count from it */
  startedAt: number;
  /** the headers must have arrived by then (connecting and a provider's prepareRequest included) */
  firstByteMs: number;
  /** the whole answer must be in by then */
  totalMs: number;
}

/**
 * An undici dispatch handler that gathers a JSON answer's chunks into one Buffer, for the upstream client's
 * non-streamed exchanges. Compared with undici's `request()` it spares, on every attempt, the response
 * Readable and its consume machinery, an AbortController and the listener undici adds to its signal.
 *
 * Deadlines: one timer per attempt. It is armed for the first-byte deadline; if it finds the headers in,
 * it re-arms itself for what is left of the total deadline, so a quick answer costs one setTimeout and one
 * clearTimeout. The idle time between chunks is undici's bodyTimeout (the client passes it).
 *
 * Failing settles `answer` at once, even while undici is still connecting, and aborts the undici request
 * as soon as undici hands over its controller, so the upstream sees the connection close.
 */
export class GatherHandler implements Dispatcher.DispatchHandler {
  readonly answer: Promise<GatheredAnswer>;
  private resolve!: (answer: GatheredAnswer) => void;
  private reject!: (err: unknown) => void;
  private controller: Dispatcher.DispatchController | undefined;
  /** why the attempt was given up, for a controller that arrives after that */
  private failure: Error | undefined;
  private settled = false;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private chunks: Buffer[] = [];
  private length = 0;
  private timer: NodeJS.Timeout;
  /** only for a provider's prepareRequest hook, which takes a signal */
  private hook: AbortController | undefined;

  constructor(
    private readonly deadlines: AnswerDeadlines,
    /** the client's request: its end cancels the attempt (the listener is removed once the attempt settles) */
    private readonly signal: AbortSignal,
    /** errors -> gateway errors; the client's translation, which answers a client abort once `signal` aborted */
    private readonly translate: (err: unknown) => GatewayError,
  ) {
    this.answer = new Promise<GatheredAnswer>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.timer = setTimeout(this.onDeadline, deadlines.firstByteMs);
    if (signal.aborted) this.onClientAbort();
    else signal.addEventListener('abort', this.onClientAbort, { once: true });
  }

  /** A signal that aborts when this attempt is given up (first-byte or total deadline, client gone). */
  hookSignal(): AbortSignal {
    this.hook ??= new AbortController();
    if (this.settled) this.hook.abort(this.failure);
    return this.hook.signal;
  }

  /** Give up the attempt with `err`: settle at once, cancel the upstream request whenever undici lets us. */
  fail(err: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.failure = err;
    clearTimeout(this.timer);
    this.signal.removeEventListener('abort', this.onClientAbort);
    this.chunks = [];
    this.hook?.abort(err);
    this.controller?.abort(err);
    this.reject(err);
  }

  // not the signal's reason: whatever the request was aborted with, the attempt ends as a client abort
  private readonly onClientAbort = () => this.fail(this.translate(undefined));

  private readonly onDeadline = () => {
    if (this.status === 0) return this.fail(new UpstreamTimeoutError('The upstream did not start answering in time.'));
    const left = this.deadlines.startedAt + this.deadlines.totalMs - Date.now();
    if (left <= 0) return this.fail(new UpstreamTimeoutError('The upstream did not finish answering in time (total timeout).', 'upstream_total_timeout'));
    this.timer = setTimeout(this.onDeadline, left);
  };

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // undici may start a request again on a new connection (a pipelined request whose socket failed)
    if (this.settled) controller.abort(this.failure ?? new Error('request already settled'));
    else this.controller = controller;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200 || this.settled) return; // 1xx informational answers are not the answer
    this.status = statusCode;
    this.headers = headers;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.signal.removeEventListener('abort', this.onClientAbort);
    const { chunks } = this;
    this.chunks = [];
    this.resolve({ status: this.status, headers: this.headers, bytes: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, this.length) });
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    // after fail(), undici reports the abort we asked for: already answered
    if (!this.settled) this.fail(this.translate(err));
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
