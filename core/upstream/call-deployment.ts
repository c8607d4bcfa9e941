import type { IncomingHttpHeaders } from 'node:http';
import type { TimeoutsConfig } from '../config/types';
import { InvalidRequestError, UpstreamError } from '../errors/gateway-error';
import { formatAdapter } from '../formats/registry';
import { chatAnswerFrames } from '../formats/chat-answer-stream';
import { streamOfFrames } from '../streaming/frames-stream';
import { imagesAnswerFrames } from '../apis/images/images-answer-stream';
import { messagesAnswerFrames } from '../apis/messages/messages-answer-stream';
import type { ChatRequest, ChatResponse } from '../types/chat';
import { answerText, errorBodyOf, type GatheredAnswer } from './gathered-answer';
import { isLocalOperation, type HttpOperation, type InboundInfo, type PreparedRequest, type ProviderOperation, type ProviderTarget, type UpstreamRequest } from '../plugins/contracts';
import type { ModelExchange, ModelResult } from '../pipeline/context';
import { ClientSignal } from '../pipeline/client-signal';
import type { Deployment } from '../routing/deployment';
import { unsupportedOperation } from '../routing/model-errors';
import { SseDecoder } from '../streaming/sse-parser';
import type { SseFrame } from '../streaming/sse-frame';
import { FrameBatches } from '../streaming/frame-batches';
import { takingTurns } from '../streaming/taking-turns';
import { TranslatedStream } from './translated-stream';
import { unreadableAnswer } from './unreadable-answer';
import { childSignal } from './child-signal';
import { ClientAbortError, readErrorBody, translateTransportError, type UpstreamClient } from './upstream-client';

/** What an upstream answered when it answered with an error status (for the retry decision). */
export interface UpstreamAnswer {
  status: number;
  retryAfter?: string;
  /** `retry-after-ms` (Azure OpenAI, and what the OpenAI SDKs read first): the pause in milliseconds */
  retryAfterMs?: string;
}

/**
 * A failed attempt with what the retry decision needs beside the error itself: whether the upstream
 * answered (its status and Retry-After), and whether another attempt could help at all (not when the
 * provider could not build the request, nor when the attempt used up a request body that cannot be sent
 * again). The retry policy unwraps it (core/routing/retry-policy.ts); the client sees `failure`.
 */
export class AttemptError extends Error {
  constructor(
    readonly failure: unknown,
    readonly final: boolean,
    readonly answer?: UpstreamAnswer,
    /** the provider could not build the request for its upstream: nothing was sent */
    readonly unsent = false,
  ) {
    super('upstream attempt failed');
  }

  /** the same failure, now final */
  static final(err: unknown): AttemptError {
    return err instanceof AttemptError ? new AttemptError(err.failure, true, err.answer) : new AttemptError(err, true);
  }

  /** the provider refused to build the request (a field or content its API has no form for) */
  static unsent(err: unknown): AttemptError {
    return new AttemptError(err, true, undefined, true);
  }
}

/**
 * One attempt at one deployment. Uses the provider's native operation for the exchange's format when it
 * has one (pass-through); otherwise translates the request to the canonical chat shape, calls the
 * provider's `chat` operation and translates the answer back. A stream is returned only once its first
 * frame has arrived and is not an error, so the caller may still retry elsewhere until then.
 * `timeouts` (per request) override the deployment's own. `traceHeaders` (tracing on) continue the
 * attempt's span upstream.
 */
export async function callDeployment(
  client: UpstreamClient,
  deployment: Deployment,
  exchange: ModelExchange,
  inbound: InboundInfo,
  signal: ClientSignal,
  timeouts?: TimeoutsConfig,
  traceHeaders?: Record<string, string>,
): Promise<ModelResult> {
  // per-request timeouts (x-gateway-timeout) override the deployment's; most requests send none
  const effective = timeouts ? { ...deployment.config.timeouts, ...timeouts } : (deployment.config.timeouts ?? {});
  const native = deployment.provider.operations[exchange.format];
  if (native) {
    const withText = exchange.bodyText === undefined ? inbound : { ...inbound, bodyText: exchange.bodyText };
    const result = await invoke(client, deployment, native, exchange.body, exchange.stream, exchange.format, withText, signal, effective, traceHeaders);
    // the client asked for a stream and the upstream answered JSON: streamed, for the formats that can be.
    // An edit's `stream` that came after its files was read only as the body went upstream (a form's
    // text, in the body the stages see): the client asked all the same, and the JSON would reach its SDK
    // as a stream with no events, the images lost.
    const asked = exchange.stream || (exchange.format === 'images.edits' && exchange.body?.stream === 'true');
    const asFrames = asked && !result.stream ? WHOLE_ANSWER_FRAMES.get(exchange.format) : undefined;
    if (asFrames) return { ...result, body: undefined, rawBody: undefined, stream: streamOfFrames(readUpstream(() => asFrames(result.body))) };
    return result;
  }

  const adapter = formatAdapter(exchange.format);
  const chat = deployment.provider.operations.chat;
  if (!chat || !adapter.toChat || !adapter.fromChat) {
    throw unsupportedOperation(exchange.requestedModel, exchange.format);
  }
  let chatRequest: ChatRequest;
  try {
    chatRequest = adapter.toChat(exchange.body);
  } catch (err) {
    // the request has no chat form this deployment could take (a server tool only Claude runs): nothing
    // was sent, and a fallback of another provider may still serve it
    throw AttemptError.unsent(err);
  }
  const result = await invoke(client, deployment, chat, chatRequest, exchange.stream, 'chat', inbound, signal, effective, traceHeaders);
  if (exchange.stream) {
    if (!adapter.streamFromChat) throw new InvalidRequestError(`Streaming is not supported for ${exchange.format} on this model.`, 'unsupported_operation');
    // an upstream that ignored `stream: true` answered JSON: the client asked for a stream and gets one
    const frames = result.stream ?? streamOfFrames(readUpstream(() => chatAnswerFrames(result.body as ChatResponse)));
    return { ...result, body: undefined, rawBody: undefined, stream: readingUpstream(adapter.streamFromChat(frames, exchange.body)) };
  }
  return { ...result, body: readUpstream(() => adapter.fromChat!(result.body as never, exchange.body)), rawBody: undefined };
}

/** Whether callDeployment can serve `format` on this deployment: the provider's own API for it, or its chat API and a translation. */
export function servesFormat(deployment: Deployment, format: ModelExchange['format']): boolean {
  if (deployment.provider.operations[format]) return true;
  const adapter = formatAdapter(format);
  return Boolean(deployment.provider.operations.chat && adapter.toChat && adapter.fromChat);
}

/** A translation of an upstream's answer; what its throw means is unreadableAnswer's. */
function readUpstream<T>(translate: () => T): T {
  try {
    return translate();
  } catch (err) {
    throw badResponse(err);
  }
}

/** readUpstream for a translated stream: the frames before the one that failed still go out. */
async function* readingUpstream(frames: AsyncIterable<SseFrame>): AsyncGenerator<SseFrame> {
  try {
    yield* frames;
  } catch (err) {
    throw badResponse(err);
  }
}

/**
 * A whole answer as the frames of the stream it would have been, per format that has one: the client
 * asked for a stream and the upstream answered one JSON document (chat-answer-stream.ts,
 * images-answer-stream.ts, messages-answer-stream.ts). A format not here passes the JSON on.
 */
const WHOLE_ANSWER_FRAMES: ReadonlyMap<string, (body: unknown) => SseFrame[]> = new Map([
  ['chat', (body: unknown) => chatAnswerFrames(body as ChatResponse)],
  ['messages', messagesAnswerFrames],
  ['images.generations', (body: unknown) => imagesAnswerFrames(body, 'images.generations')],
  ['images.edits', (body: unknown) => imagesAnswerFrames(body, 'images.edits')],
]);

/** What a translator's throw means (unreadable-answer.ts); an attempt's own error passes as it is. */
export function badResponse(err: unknown): unknown {
  return err instanceof AttemptError ? err : unreadableAnswer(err);
}

async function invoke(
  client: UpstreamClient,
  deployment: Deployment,
  op: ProviderOperation,
  body: unknown,
  stream: boolean,
  format: ModelExchange['format'],
  inbound: InboundInfo,
  signal: ClientSignal,
  timeouts: TimeoutsConfig,
  traceHeaders: Record<string, string> | undefined,
): Promise<ModelResult> {
  const { target } = deployment;
  if (isLocalOperation(op)) {
    const local = await op.invoke(body, target, signal.signal);
    return { status: 200, body: local.body, stream: local.stream && takingTurns(local.stream), headers: {} };
  }
  if (!stream && op.split && op.join) {
    let parts: unknown[] | undefined;
    try {
      parts = op.split(body, target);
    } catch (err) {
      throw AttemptError.unsent(err);
    }
    if (parts && parts.length > 1) return invokeParts(client, deployment, op, parts, body, format, inbound, signal, timeouts, traceHeaders);
  }
  const request = upstreamRequest(op, body, target, inbound, traceHeaders);
  // An edit's `stream` field may come after its files (the SDKs send keys in the order the client wrote
  // them), when the pipeline has long started without it: the upstream then streams, so an edit's answer
  // is read as whichever it turns out to be, a stream or one JSON document.
  const mayStream = stream || format === 'images.edits';
  try {
    return await send(client, deployment, op, request, body, mayStream, format, signal, timeouts);
  } catch (err) {
    // a request body streamed from the client (an image edit's files) was used up by this attempt
    if (request.body !== undefined && typeof request.body !== 'string' && !(request.body instanceof Uint8Array)) throw AttemptError.final(err);
    throw err;
  }
}

/** The provider's request for `body`, with the trace headers (tracing on) that continue the attempt's span. */
function upstreamRequest(op: HttpOperation, body: unknown, target: ProviderTarget, inbound: InboundInfo, traceHeaders: Record<string, string> | undefined): UpstreamRequest {
  let request: UpstreamRequest;
  try {
    request = op.toUpstream(body, target, inbound);
  } catch (err) {
    // a provider that cannot build the request: no other attempt at this deployment can help
    throw AttemptError.unsent(err);
  }
  return traceHeaders ? { ...request, headers: { ...request.headers, ...traceHeaders } } : request;
}

/**
 * Parts of one split request in flight at once: a client's 2,048 inputs to a one-input model should not
 * wait for 2,048 round trips one after another, nor open 2,048 connections and meet the rate limit.
 */
const PARTS_IN_FLIGHT = 4;

/** One attempt made of a split request's parts (HttpOperation.split), joined in order into one answer. */
async function invokeParts(
  client: UpstreamClient,
  deployment: Deployment,
  op: HttpOperation,
  parts: unknown[],
  body: unknown,
  format: ModelExchange['format'],
  inbound: InboundInfo,
  signal: ClientSignal,
  timeouts: TimeoutsConfig,
  traceHeaders: Record<string, string> | undefined,
): Promise<ModelResult> {
  const { target } = deployment;
  // the client's own text is the whole request, never a part's
  const partInbound: InboundInfo = { headers: inbound.headers };
  const requests = parts.map((part) => upstreamRequest(op, part, target, partInbound, traceHeaders));
  // once one part has failed the answer cannot be whole: the parts still out are called off
  const partsSignal = childSignal(signal.signal);
  const partsClient = ClientSignal.of(partsSignal.signal);
  const answers: unknown[] = new Array(parts.length);
  let next = 0;
  const worker = async () => {
    while (next < parts.length && !partsClient.aborted) {
      const i = next++;
      answers[i] = (await send(client, deployment, op, requests[i], parts[i], false, format, partsClient, timeouts)).body;
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(PARTS_IN_FLIGHT, parts.length) }, worker));
  } catch (err) {
    partsSignal.abort();
    throw err;
  } finally {
    partsSignal.release();
  }
  // the client went away between two parts: the workers stopped without an answer for every part
  if (partsClient.aborted) throw new ClientAbortError();
  return { status: 200, body: readUpstream(() => op.join!(answers, body, target)), headers: {} };
}

async function send(
  client: UpstreamClient,
  deployment: Deployment,
  op: HttpOperation,
  request: UpstreamRequest,
  body: unknown,
  stream: boolean,
  format: ModelExchange['format'],
  signal: ClientSignal,
  timeouts: TimeoutsConfig,
): Promise<ModelResult> {
  const { target, provider } = deployment;
  const prepare = provider.prepareRequest ? (wire: PreparedRequest, hookSignal: AbortSignal) => provider.prepareRequest!(wire, target, hookSignal) : undefined;
  if (!stream) return readWhole(await client.sendAndRead(target.baseUrl, request, signal, timeouts, prepare), deployment, op, body);
  const response = await client.send(target.baseUrl, request, signal, timeouts, prepare);
  if (response.status >= 400) throw attemptFailure(deployment, response.status, await readErrorBody(response.body), response.headers);
  const contentType = String(response.headers['content-type'] ?? '');
  const decoder = op.streamDecoder?.(contentType, target) ?? (contentType.includes('text/event-stream') ? new SseDecoder() : undefined);
  if (decoder) {
    return { status: 200, stream: await peekFirstFrame(new TranslatedStream(response.body, decoder, op, target, format, signal)), headers: {} };
  }
  // asked to stream, answered with one JSON document
  let text: string;
  try {
    text = await response.body.text();
  } catch (err) {
    throw translateTransportError(err, signal);
  }
  return fromJsonText(text, deployment, op, body);
}

/** A whole answer (the client did not ask for a stream): an error status, or one JSON document. */
function readWhole(answer: GatheredAnswer, deployment: Deployment, op: HttpOperation, body: unknown): ModelResult {
  const text = answerText(answer.bytes);
  if (answer.status >= 400) throw attemptFailure(deployment, answer.status, errorBodyOf(text), answer.headers);
  return fromJsonText(text, deployment, op, body);
}

/** An error status: the provider's error, and what the retry decision needs (status, Retry-After). */
function attemptFailure(deployment: Deployment, status: number, errorBody: unknown, headers: IncomingHttpHeaders): AttemptError {
  const error = deployment.provider.toError(status, errorBody, headers);
  // some upstreams give the pause only in their body (Google's RetryInfo), which the provider reads
  const retryAfter = headers['retry-after'] ?? error.headers['retry-after'];
  const retryAfterMs = headers['retry-after-ms'];
  return new AttemptError(error, false, {
    status,
    retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
    retryAfterMs: typeof retryAfterMs === 'string' ? retryAfterMs : undefined,
  });
}

function fromJsonText(text: string, deployment: Deployment, op: HttpOperation, body: unknown): ModelResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UpstreamError('The upstream sent a response that is not valid JSON.', 'upstream_bad_response');
  }
  const translated = readUpstream(() => op.fromUpstream(parsed, deployment.target, body));
  // An identity translation (pass-through) lets the endpoint send the upstream's bytes unchanged.
  return { status: 200, body: translated, rawBody: translated === parsed ? text : undefined, headers: {} };
}

/**
 * Wait for the first frame: an upstream that fails at once (an error event, or a stream that breaks
 * before its first frame) fails the attempt while nothing has been sent to the client yet.
 */
async function peekFirstFrame(batches: AsyncIterator<SseFrame[]>): Promise<FrameBatches> {
  // an error event among the first frames is thrown by the stream itself (translated-stream.ts)
  const first = await batches.next();
  return new FrameBatches(replayFirst(first, batches));
}

/**
 * The peeked batch, then the rest straight from the upstream iterator: a plain iterator rather than a
 * generator layer, so the batches after the first cost no extra async hop. `return` (a consumer stopping
 * early) closes the upstream iterator too.
 */
function replayFirst(first: IteratorResult<SseFrame[]>, rest: AsyncIterator<SseFrame[]>): AsyncIterator<SseFrame[]> {
  let pending: IteratorResult<SseFrame[]> | undefined = first;
  return {
    next() {
      if (pending) {
        const result = pending;
        pending = undefined;
        return Promise.resolve(result);
      }
      return rest.next();
    },
    async return(value?: unknown) {
      pending = undefined;
      await rest.return?.(value);
      return { done: true, value: undefined };
    },
  };
}

