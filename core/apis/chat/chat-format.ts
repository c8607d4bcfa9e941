import type { SseFrame } from '../../streaming/sse-frame';
import type { ChatChunk, ChatResponse, Usage } from '../../types/chat';
import { emptyUsage, type TokenUsage } from '../../types/usage';
import type { FormatAdapter } from '../../formats/format-adapter';

/** OpenAI usage -> TokenUsage. prompt_tokens already includes cached tokens (OpenAI semantics). */
export function tokenUsageFromChat(usage: Usage | null | undefined): TokenUsage | undefined {
  if (!usage) return undefined;
  return {
    ...emptyUsage(),
    inputTokens: usage.prompt_tokens ?? 0,
    outputTokens: usage.completion_tokens ?? 0,
    cacheReadTokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWriteTokens: usage.prompt_tokens_details?.cache_write_tokens ?? 0,
    // a Claude model's 1-hour cache writes (a part of cache_write_tokens), from its Messages usage
    cacheWrite1hTokens: usage.prompt_tokens_details?.cache_write_1h_tokens ?? 0,
  };
}

/** A chunk that carries only usage (`choices: []`), as sent after `stream_options.include_usage`. */
export function isUsageOnlyChunk(chunk: ChatChunk): boolean {
  return !!chunk.usage && Array.isArray(chunk.choices) && chunk.choices.length === 0;
}

export const chatFormat: FormatAdapter = {
  format: 'chat',
  usageOf: (body: ChatResponse) => tokenUsageFromChat(body?.usage),
  usageOfFrame(frame: SseFrame) {
    // A byte test first: only a chunk with a usage key that is not null (usually the last) is parsed.
    if (frame.isDone || !frame.hasKey('usage')) return undefined;
    return tokenUsageFromChat((frame.json as ChatChunk).usage);
  },
  isTerminalFrame: (frame) => frame.isDone,
};
