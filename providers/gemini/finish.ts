import { GatewayError, UpstreamError, scrubMessage } from '../../core/plugins/sdk';
import type { GeminiCandidate, GeminiResponse } from './wire';

/** Finish reasons that mean a safety or policy system stopped the answer. */
const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION']);

/** Finish reasons of an answer the model ended itself (or the token limit did). */
const FINISHED = new Set(['STOP', 'MAX_TOKENS']);

/** Gemini finishReason -> chat finish_reason; a turn that called functions finishes with `tool_calls`. */
export function finishReasonFromGemini(reason: string | undefined, calledTools: boolean): string | null {
  if (reason === undefined || reason === 'FINISH_REASON_UNSPECIFIED') return null;
  if (reason === 'MAX_TOKENS') return 'length';
  if (FILTERED.has(reason)) return 'content_filter';
  return calledTools ? 'tool_calls' : 'stop';
}

/**
 * A candidate stopped by anything but the model's own end or a filter failed: a function call that does
 * not parse, a tool it was not given or too many, a missing thought signature, an image it could not make,
 * or a reason Google added since (its list keeps growing). The candidate then usually holds nothing, and an
 * empty `stop` would end an agent's loop without a word. Asking again usually works.
 */
function failed(reason: string): boolean {
  return reason !== 'FINISH_REASON_UNSPECIFIED' && !FINISHED.has(reason) && !FILTERED.has(reason);
}

/**
 * A candidate that stopped before any output, when that is an error rather than an empty answer: stopped
 * by a safety filter (a 400 `content_filter`), or by a failed generation (a 502 clients and the router
 * retry). A candidate that said something keeps it, with its finish reason.
 */
export function silentStopError(candidate: GeminiCandidate): GatewayError | undefined {
  const reason = candidate.finishReason;
  if (reason === undefined || !(FILTERED.has(reason) || failed(reason))) return undefined;
  if ((candidate.content?.parts ?? []).some((p) => p.text || p.functionCall)) return undefined;
  if (FILTERED.has(reason)) return contentFilterError(`The Gemini upstream blocked the answer (${reason}).`);
  const detail = typeof candidate.finishMessage === 'string' && candidate.finishMessage !== '' ? `: ${scrubMessage(candidate.finishMessage).slice(0, 300)}` : '.';
  return new UpstreamError(`The Gemini model stopped without an answer (${reason})${detail}`, 'upstream_error');
}

/** The prompt itself was blocked: Gemini answers 200 with no candidates, the client gets a 400. */
export function promptBlockedError(body: GeminiResponse): GatewayError | undefined {
  const reason = body?.promptFeedback?.blockReason;
  if (!reason || reason === 'BLOCK_REASON_UNSPECIFIED') return undefined;
  return contentFilterError(`The Gemini upstream blocked the prompt (${reason}).`);
}

function contentFilterError(message: string): GatewayError {
  return new GatewayError(400, 'invalid_request_error', 'content_filter', message);
}
