import { Agent, errors as undiciErrors } from 'undici';
import type Dispatcher from 'undici/types/dispatcher';
import type { TimeoutsConfig } from '../config/types';
import { GatewayError, UpstreamError, UpstreamTimeoutError } from '../errors/gateway-error';
import type { PreparedRequest, UpstreamRequest } from '../plugins/contracts';
import type { AnswerDeadlines, AttemptHandler } from './attempt-handler';
import { errorBodyOf, GatherHandler, type GatheredAnswer } from './gathered-answer';
import { prepareForWire, type PrepareHook } from './prepare-request';
import { StreamHandler, type StreamedAnswer, type StreamedBody } from './streamed-answer';
import { wireUrl } from './wire-url';
import type { ClientSignal } from '../pipeline/client-signal';

/** A streamed exchange's answer: status and headers, the body still coming. */
export type UpstreamResponse = StreamedAnswer;

type AttemptHandlerClass<Answer> = new (deadlines: AnswerDeadlines, signal: ClientSignal, translate: (err: unknown) => GatewayError) => AttemptHandler<Answer>;

/** The client went away: not an upstream fault, and never answered to anyone. */
export class ClientAbortError extends GatewayError {
  constructor() {
    super(499, 'client_closed_request', 'client_abort', 'The client closed the request.');
  }
}

/**
 * The core's HTTP client for upstreams (design.md §4: providers translate, the core does I/O). One undici
 * Agent keeps a keep-alive pool per origin (one more per distinct per-model connect timeout). Timeouts:
 * connect (the agent's), first byte (a deadline from the start of the attempt, so it covers connecting
 * too), idle time between body chunks (bodyTimeout) and the total time of the attempt, body or stream
 * included. Errors never carry the upstream URL or credentials. A provider's `prepareRequest` (`prepare`)
 * is the last step before the bytes go out, inside the first-byte deadline.
 */
export class UpstreamClient {
  readonly agent: Agent;
  private readonly agents = new Map<number, Agent>();

  constructor(readonly defaults: Required<TimeoutsConfig>) {
    this.agent = this.agentFor(defaults.connectMs);
  }

  /** Agents are keyed by connect timeout; the values come from the config, so there are only a few. */
  private agentFor(connectMs: number): Agent {
    let agent = this.agents.get(connectMs);
    if (!agent) {
      agent = new Agent({
        connect: { timeout: connectMs },
        keepAliveTimeout: 30_000,
        keepAliveMaxTimeout: 600_000,
        connections: 256,
        headersTimeout: this.defaults.firstByteMs,
        bodyTimeout: this.defaults.idleMs,
      });
      this.agents.set(connectMs, agent);
    }
    return agent;
  }

  /** An attempt's deadlines (the request's own timeouts over the defaults); first byte never after total. */
  private deadlines(timeouts: TimeoutsConfig): { totalMs: number; firstByteMs: number; idleMs: number } {
    const totalMs = timeouts.totalMs ?? this.defaults.totalMs;
    return { totalMs, firstByteMs: Math.min(timeouts.firstByteMs ?? this.defaults.firstByteMs, totalMs), idleMs: timeouts.idleMs ?? this.defaults.idleMs };
  }

  private dispatcherFor(timeouts: TimeoutsConfig): Agent {
    return timeouts.connectMs === undefined ? this.agent : this.agentFor(timeouts.connectMs);
  }

  /**
   * One attempt whose answer is read as it comes (a stream): resolves once the headers are in, with the body
   * still coming (streamed-answer.ts). The timeouts: connect, first byte from the start of the attempt, idle
   * between chunks, and total, the stream included. A reader that falls behind pauses the upstream.
   */
  send(baseUrl: string, req: UpstreamRequest, signal: ClientSignal, timeouts: TimeoutsConfig = {}, prepare?: PrepareHook): Promise<UpstreamResponse> {
    return this.attempt(StreamHandler, baseUrl, req, signal, timeouts, prepare);
  }

  /**
   * One attempt whose answer is read whole (a JSON answer, or an error status): resolves once the last byte
   * is in. The same timeouts as `send`, over the whole answer: connect, first byte from the start of the
   * attempt, idle between chunks, total. The handler gathers the bytes (gathered-answer.ts), which costs
   * much less per request than `request()` and a body stream.
   */
  sendAndRead(baseUrl: string, req: UpstreamRequest, signal: ClientSignal, timeouts: TimeoutsConfig = {}, prepare?: PrepareHook): Promise<GatheredAnswer> {
    return this.attempt(GatherHandler, baseUrl, req, signal, timeouts, prepare);
  }

  /**
   * Dispatch one attempt straight to undici with `Handler`, after the provider's prepareRequest hook if it
   * has one. Not an async function: the answer is the handler's promise itself, with no extra promise
   * around it.
   */
  private attempt<Answer>(Handler: AttemptHandlerClass<Answer>, baseUrl: string, req: UpstreamRequest, signal: ClientSignal, timeouts: TimeoutsConfig, prepare: PrepareHook | undefined): Promise<Answer> {
    if (signal.aborted) return Promise.reject(new ClientAbortError());
    const { totalMs, firstByteMs, idleMs } = this.deadlines(timeouts);
    const handler = new Handler({ startedAt: Date.now(), firstByteMs, totalMs }, signal, (err) => translateTransportError(err, signal));
    const go = (wire: WireRequest) => {
      try {
        const { origin, path } = wireUrl(wire.url);
        // undici's types leave out async iterables (an image edit's files), which its dispatch sends as they come
        const body = wire.body as Dispatcher.DispatchOptions['body'];
        this.dispatcherFor(timeouts).dispatch({ origin, path, method: wire.method, headers: wire.headers, body, headersTimeout: firstByteMs, bodyTimeout: idleMs }, handler);
      } catch (err) {
        handler.fail(translateTransportError(err, signal)); // a URL that does not parse
      }
    };
    if (!prepare) go(unpreparedWire(baseUrl, req));
    // a hook that fails, or is cut short by a deadline or the client, fails the attempt
    else prepareForWire(baseUrl, req, prepare, handler.hookSignal()).then(go, (err) => handler.fail(translateTransportError(err, signal)));
    return handler.answer;
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((a) => a.close()));
  }
}

/** A request as it goes out: URL, method, headers and a body in bytes, streamed from the client, or none. */
type WireRequest = Omit<PreparedRequest, 'body'> & { body?: UpstreamRequest['body'] };

/** The request as it goes out when the provider has no `prepareRequest` hook. */
function unpreparedWire(baseUrl: string, req: UpstreamRequest): WireRequest {
  return { url: baseUrl + req.path, method: req.method ?? 'POST', headers: req.headers, body: req.body };
}

/** Map undici/network failures to gateway errors without leaking where the upstream is. */
export function translateTransportError(err: unknown, signal?: { readonly aborted: boolean }): GatewayError {
  if (err instanceof GatewayError) return err;
  if (signal?.aborted) return new ClientAbortError();
  if (err instanceof undiciErrors.HeadersTimeoutError) return new UpstreamTimeoutError('The upstream did not start answering in time.');
  if (err instanceof undiciErrors.BodyTimeoutError) return new UpstreamTimeoutError('The upstream stopped sending data (idle timeout).', 'upstream_idle_timeout');
  if (err instanceof undiciErrors.ConnectTimeoutError) return new UpstreamTimeoutError('Connecting to the upstream timed out.', 'upstream_connect_timeout');
  const code = (err as { code?: string })?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EAI_AGAIN') {
    return new UpstreamError(`The upstream could not be reached (${code}).`, 'upstream_unreachable', { cause: err });
  }
  return new UpstreamError('The upstream request failed.', 'upstream_error', { cause: err });
}

/** Read an error body as JSON if it is JSON, else as (truncated) text; never throws. */
export async function readErrorBody(body: Pick<StreamedBody, 'text'>): Promise<unknown> {
  try {
    return errorBodyOf(await body.text());
  } catch {
    return undefined;
  }
}
