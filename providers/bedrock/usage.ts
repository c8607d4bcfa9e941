import { chatUsageFromMessagesUsage, type Usage } from '../../core/plugins/sdk';
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
  });
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
