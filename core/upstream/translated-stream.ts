import { GatewayError, UpstreamError } from '../errors/gateway-error';
import { formatAdapter } from '../formats/registry';
import type { HttpOperation, ProviderTarget, StreamDecoder, StreamState } from '../plugins/contracts';
import type { ModelExchange } from '../pipeline/context';
import type { ClientSignal } from '../pipeline/client-signal';
import type { SseFrame } from '../streaming/sse-frame';
import { unreadableAnswer } from './unreadable-answer';
import { isErrorFrame, upstreamStreamError } from './stream-error-frame';
import { translateTransportError } from './upstream-client';

type Batch = IteratorResult<SseFrame[]>;

const END: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * Upstream events (SSE, or the provider's own decoder) -> frames of the client's format, one batch per
 * upstream read (the frames that read completed; reads that complete none yield nothing); a stream that
 * ends without its terminal frame was cut. A translator that throws part way through a read: the frames
 * before it are still sent, then the error (unreadable-answer.ts: the upstream's event was not of its
 * API's shape, not a broken connection).
 *
 * A plain iterator rather than an async generator: a batch costs one promise step on top of the body's
 * read, where a generator layer adds its own resume and await for every read.
 */
export class TranslatedStream implements AsyncIterator<SseFrame[]> {
  private readonly body: AsyncIterator<Uint8Array>;
  private readonly state: StreamState = {};
  private readonly isTerminal: ((frame: SseFrame) => boolean) | undefined;
  private sawTerminal: boolean;
  /** what comes after the body ended: the last batches, then the error or the end */
  private tail: { batches: SseFrame[][]; error?: unknown } | undefined;
  /** a translator failed part way through a read: thrown once the frames before it went out */
  private failure: { err: unknown } | undefined;
  /** frames have been handed on (an upstream error is then one in the middle of the answer) */
  private started = false;

  constructor(
    body: AsyncIterable<Uint8Array>,
    private readonly decoder: StreamDecoder,
    private readonly op: HttpOperation,
    private readonly target: ProviderTarget,
    format: ModelExchange['format'],
    private readonly signal: ClientSignal,
  ) {
    this.body = body[Symbol.asyncIterator]();
    this.isTerminal = formatAdapter(format).isTerminalFrame;
    this.sawTerminal = !this.isTerminal;
  }

  next(): Promise<Batch> {
    if (this.failure) return Promise.reject(this.fail(this.failure.err));
    if (this.tail) return this.fromTail();
    return this.body.next().then(this.onRead, this.onReadError);
  }

  /** A consumer that stops early (the client went away) cancels the upstream request. */
  async return(): Promise<Batch> {
    this.tail = { batches: [] };
    await this.body.return?.();
    return END;
  }

  private readonly onRead = (read: IteratorResult<Uint8Array>): Batch | Promise<Batch> => this.take(read) ?? this.readOn();

  private readonly onReadError = (err: unknown): never => {
    throw this.translate(err);
  };

  /** What one read gives: a batch, the end (or the error after the last batches), or nothing (read on). */
  private take(read: IteratorResult<Uint8Array>): Batch | Promise<Batch> | undefined {
    if (read.done) {
      this.endOfBody();
      return this.fromTail();
    }
    const batch = this.batchOf(() => this.decoder.push(read.value));
    if (batch.length > 0) return { done: false, value: batch };
    if (this.failure) return Promise.reject(this.fail(this.failure.err));
    return undefined;
  }

  /**
   * Reads that complete no frame (a long frame in many pieces): a loop, so a frame in a thousand reads
   * is a thousand turns of it rather than a chain of a thousand promises waiting on each other.
   */
  private async readOn(): Promise<Batch> {
    for (;;) {
      const taken = this.take(await this.body.next().catch(this.onReadError));
      if (taken) return taken;
    }
  }

  /** The body ended: events a provider decoder still held (the SSE decoder holds none worth sending), then the translator's closing frames. */
  private endOfBody(): void {
    let events: SseFrame[];
    try {
      events = [...(this.decoder.end?.() ?? [])];
    } catch (err) {
      // a decoder's end throws when the body ended inside an event (StreamDecoder's contract): a cut stream
      this.tail = { batches: [], error: err instanceof GatewayError ? err : cutStream() };
      return;
    }
    const batches: SseFrame[][] = [];
    const held = this.batchOf(() => events);
    if (held.length > 0) batches.push(held);
    if (this.failure) {
      this.tail = { batches, error: unreadableAnswer(this.failure.err) };
      this.failure = undefined;
      return;
    }
    try {
      if (this.op.endOfStream) {
        const closing = this.op.endOfStream(this.state, this.target);
        this.noteTerminal(closing);
        if (closing.length > 0) batches.push(closing);
      }
    } catch (err) {
      this.tail = { batches, error: unreadableAnswer(err) };
      return;
    }
    this.tail = { batches, error: this.sawTerminal ? undefined : cutStream() };
  }

  private fromTail(): Promise<Batch> {
    const tail = this.tail!;
    const batch = tail.batches.shift();
    if (batch) return Promise.resolve({ done: false, value: batch });
    if (tail.error !== undefined) {
      const { error } = tail;
      tail.error = undefined;
      return Promise.reject(error);
    }
    return Promise.resolve(END);
  }

  private batchOf(frames: () => SseFrame[]): SseFrame[] {
    let batch: SseFrame[] = [];
    try {
      // an operation without a translator passes the frames on: the decoder's array (new for each read) is the batch
      if (!this.op.fromUpstreamEvent) {
        batch = frames();
      } else {
        for (const frame of frames()) {
          const out = this.op.fromUpstreamEvent(frame, this.state, this.target);
          if (!out) continue;
          if (Array.isArray(out)) for (const f of out) batch.push(f);
          else batch.push(out);
        }
      }
    } catch (err) {
      this.failure = { err };
    }
    // An error event the upstream sends after its answer started (OpenAI's `data: {"error": ...}`, an
    // image stream's `event: error`) ends the stream as a failure, not as an answer that ran to its end:
    // the frames before it go out, then the gateway's one error event, and the request is logged failed.
    if (!this.failure) {
      const at = batch.findIndex((frame, i) => isErrorFrame(frame, !this.started && i === 0));
      if (at !== -1) {
        this.failure = { err: upstreamStreamError(batch[at], this.started || at > 0) };
        batch = batch.slice(0, at);
      }
    }
    if (batch.length > 0) this.started = true;
    this.noteTerminal(batch);
    return batch;
  }

  private noteTerminal(frames: SseFrame[]): void {
    if (!this.sawTerminal) for (const f of frames) if (this.isTerminal!(f)) this.sawTerminal = true;
  }

  /** A translator's failure after the frames before it went out: the upstream is cancelled, the error named. */
  private fail(err: unknown): unknown {
    this.failure = undefined;
    this.tail = { batches: [] };
    this.body.return?.().catch(() => undefined);
    return unreadableAnswer(err);
  }

  /** A failed read of the body (the transport's error, not a translator's). */
  private translate(err: unknown): unknown {
    const error = translateTransportError(err, this.signal);
    // A socket that breaks after the answer started is a cut stream, whatever the transport called it.
    if (error.code === 'upstream_unreachable' || error.code === 'upstream_error') return new UpstreamError('The upstream connection broke in the middle of the stream.', 'upstream_stream_cut');
    return error;
  }
}

function cutStream(): UpstreamError {
  return new UpstreamError('The upstream ended the stream before it was complete.', 'upstream_stream_cut');
}
