import type Dispatcher from 'undici/types/dispatcher';
import type { GatewayError } from '../errors/gateway-error';
import { UpstreamTimeoutError } from '../errors/gateway-error';
import type { ClientSignal } from '../pipeline/client-signal';

export interface AnswerDeadlines {
  /** the attempt's start (Date.now()): both deadlines count from it */
  startedAt: number;
  /** the headers must have arrived by then (connecting and a provider's prepareRequest included) */
  firstByteMs: number;
  /** the whole answer must be in by then */
  totalMs: number;
}

/**
 * What every undici dispatch handler of the upstream client does for one attempt, whatever it does with
 * the answer (gathered-answer.ts gathers it, streamed-answer.ts hands it on as it comes): the answer's
 * promise, the deadlines, the client going away, a provider hook's signal, and cancelling the undici request.
 *
 * Deadlines: one timer per attempt. It is armed for the first-byte deadline; if it finds the headers in,
 * it re-arms itself for what is left of the total deadline, so a quick answer costs one setTimeout and one
 * clearTimeout. The idle time between chunks is undici's bodyTimeout (the client passes it).
 *
 * Failing ends the attempt at once, even while undici is still connecting, and aborts the undici request
 * as soon as undici hands over its controller, so the upstream sees the connection close. A failure
 * before the answer was handed over rejects `answer`; after it, it goes to `failedAfterAnswer`.
 */
export abstract class AttemptHandler<Answer> implements Dispatcher.DispatchHandler {
  readonly answer: Promise<Answer>;
  private resolve!: (answer: Answer) => void;
  private reject!: (err: unknown) => void;
  private answered = false;
  protected controller: Dispatcher.DispatchController | undefined;
  /** why the attempt was given up, for a controller that arrives after that */
  protected failure: Error | undefined;
  /** the attempt is over (its answer complete, or given up): no timer, no listener on the client's signal */
  protected over = false;
  /** the answer's status once its headers are in; 0 until then */
  protected status = 0;
  private timer: NodeJS.Timeout;
  /** only for a provider's prepareRequest hook, which takes a signal */
  private hook: AbortController | undefined;

  constructor(
    private readonly deadlines: AnswerDeadlines,
    /** the client's request: its end cancels the attempt (the listener is removed once the attempt is over) */
    private readonly signal: ClientSignal,
    /** errors -> gateway errors; the client's translation, which answers a client abort once `signal` aborted */
    protected readonly translate: (err: unknown) => GatewayError,
  ) {
    this.answer = new Promise<Answer>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.timer = setTimeout(this.onDeadline, deadlines.firstByteMs);
    if (signal.aborted) this.onClientAbort();
    else signal.onAbort(this.onClientAbort);
  }

  /** A signal that aborts when this attempt is given up (a deadline passed, the client gone). */
  hookSignal(): AbortSignal {
    this.hook ??= new AbortController();
    if (this.failure) this.hook.abort(this.failure);
    return this.hook.signal;
  }

  /** Give up the attempt with `err`: end it at once, cancel the upstream request whenever undici lets us. */
  fail(err: Error): void {
    if (this.over) return;
    this.finish();
    this.failure = err;
    this.hook?.abort(err);
    this.controller?.abort(err);
    if (this.answered) this.failedAfterAnswer(err);
    else this.reject(err);
  }

  /** Hand the answer over; the attempt goes on if the answer is still coming (a stream). */
  protected deliver(answer: Answer): void {
    this.answered = true;
    this.resolve(answer);
  }

  /** A failure once the answer was handed over (a stream that breaks): whoever reads it must learn of it. */
  protected failedAfterAnswer(_err: Error): void {}

  /** The attempt is over: stop its timer and stop listening to the client. */
  protected finish(): void {
    this.over = true;
    clearTimeout(this.timer);
    this.signal.offAbort(this.onClientAbort);
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
    if (this.over) controller.abort(this.failure ?? new Error('request already over'));
    else this.controller = controller;
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    // after fail(), undici reports the abort we asked for: already answered
    if (!this.over) this.fail(this.translate(err));
  }
}
