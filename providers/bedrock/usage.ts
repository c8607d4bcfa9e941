import { chatUsageFromMessagesUsage, UpstreamError, type Usage } from '../../core/plugins/sdk';
import type { ConverseUsage } from './wire';

/**
 * Converse usage -> chat usage. Like Anthropic's, Converse `inputTokens` leave out the tokens read from
 * or written to the prompt cache, so the mapping is the Messages one (prompt = input + cache read + write).
 */
export function chatUsageFromConverse(usage: ConverseUsage | undefined): Usage {
  return chatUsageFromMessagesUsage({
    input_tokens: usage?.inputTokens ?? 0,
    output_tokens: usage?.outputTokens ?? 0,
    cache_read_input_tokens: usage?.cacheReadInputTokens ?? 0,
    cache_creation_input_tokens: usage?.cacheWriteInputTokens ?? 0,
    // 1-hour cache writes are billed above 5-minute ones: Anthropic's own split, from Converse's
    cache_creation: { ephemeral_1h_input_tokens: cacheWrite1h(usage?.cacheDetails) },
  });
}

function cacheWrite1h(details: ConverseUsage['cacheDetails']): number {
  let tokens = 0;
  if (Array.isArray(details)) for (const d of details) if (d?.ttl === '1h' && typeof d.inputTokens === 'number' && Number.isFinite(d.inputTokens)) tokens += d.inputTokens;
  return tokens;
}

/** Converse stopReason -> chat finish_reason. */
export function finishReasonFromConverse(reason: string | undefined): string {
  switch (reason) {
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/**
 * The stop sequence Claude names in additionalModelResponseFields when the request asked for it
 * (request.ts): Converse itself says only that one ended the answer.
 */
export function stopSequenceOf(fields: unknown): unknown {
  return (fields as { stop_sequence?: unknown } | null | undefined)?.stop_sequence;
}

/** Stop reasons of a generation that failed: the model's output or tool call did not parse. */
const FAILED = new Set(['malformed_model_output', 'malformed_tool_use']);

/**
 * An answer that failed before it said anything: an error, not an empty `stop` that would end an agent's
 * loop without a word. Asking again usually works (the openai SDK retries a 502). An answer that said
 * something keeps it.
 */
export function silentFailure(reason: string | undefined, said: boolean, inStream: boolean): UpstreamError | undefined {
  if (said || reason === undefined || !FAILED.has(reason)) return undefined;
  // inside a stream the code says so: the core reads a plain `upstream_error` there as a broken connection
  return new UpstreamError(`The Bedrock model stopped without an answer (${reason}).`, inStream ? 'upstream_stream_error' : 'upstream_error');
}
