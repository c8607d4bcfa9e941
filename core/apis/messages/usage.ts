/**
 * Token usage in the Messages format: conversion to and from the canonical chat usage, and readers that
 * give the spend stage a TokenUsage from a Messages response or stream.
 *
 * Anthropic counts `input_tokens` WITHOUT the cached part: the prompt is input + cache read + cache
 * write. The chat format (and TokenUsage) count the whole prompt and report the cached part inside it.
 */
import type { Usage } from '../../types/chat';
import type { TokenUsage } from '../../types/usage';
import { emptyUsage } from '../../types/usage';
import type { SseFrame } from '../../streaming/sse-frame';
import type { MessagesUsage } from './types';

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/**
 * The tokens written to the 1-hour cache: `usage.cache_creation` splits the cache writes by TTL, and 1-hour
 * writes cost 2x input where 5-minute ones cost 1.25x. Undefined when the usage has no split.
 */
export function cacheWrite1hTokens(usage: unknown): number | undefined {
  const split = (usage as { cache_creation?: { ephemeral_1h_input_tokens?: unknown } | null } | null | undefined)?.cache_creation;
  const tokens = split?.ephemeral_1h_input_tokens;
  return typeof tokens === 'number' && Number.isFinite(tokens) ? tokens : undefined;
}

/** Messages usage -> chat usage (prompt_tokens include the cached tokens). */
export function chatUsageFromMessagesUsage(usage: Partial<MessagesUsage> | null | undefined): Usage {
  const cacheRead = count(usage?.cache_read_input_tokens);
  const cacheWrite = count(usage?.cache_creation_input_tokens);
  const prompt = count(usage?.input_tokens) + cacheRead + cacheWrite;
  const completion = count(usage?.output_tokens);
  const details: NonNullable<Usage['prompt_tokens_details']> = { cached_tokens: cacheRead, cache_write_tokens: cacheWrite };
  // the meter prices 1-hour writes above 5-minute ones: the split rides along when there are any
  const write1h = cacheWrite1hTokens(usage);
  if (write1h) details.cache_write_1h_tokens = write1h;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: details,
  };
}

/** chat usage -> Messages usage (input_tokens exclude the cached tokens). */
export function messagesUsageFromChatUsage(usage: Usage | null | undefined): MessagesUsage {
  const cacheRead = count(usage?.prompt_tokens_details?.cached_tokens);
  const cacheWrite = count(usage?.prompt_tokens_details?.cache_write_tokens);
  const out: MessagesUsage = {
    input_tokens: Math.max(0, count(usage?.prompt_tokens) - cacheRead - cacheWrite),
    output_tokens: count(usage?.completion_tokens),
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
  };
  // a Claude model reached through chat (Vertex, Bedrock) wrote to the 1-hour cache: Anthropic's own split
  const write1h = Math.min(count(usage?.prompt_tokens_details?.cache_write_1h_tokens), cacheWrite);
  if (write1h > 0) out.cache_creation = { ephemeral_5m_input_tokens: cacheWrite - write1h, ephemeral_1h_input_tokens: write1h };
  return out;
}

/**
 * The tokens of the `compaction` entries of a usage's `iterations` (server-side compaction, a beta): the
 * summary of the old context is a sampling step Anthropic bills, yet its tokens are left out of the
 * top-level counts, which are the answer's steps alone.
 */
export function compactionTokens(usage: unknown): { input: number; output: number; cacheRead: number; cacheWrite: number; cacheWrite1h: number } {
  const out = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cacheWrite1h: 0 };
  const iterations = (usage as { iterations?: unknown } | null | undefined)?.iterations;
  if (!Array.isArray(iterations)) return out;
  for (const step of iterations) {
    if (step?.type !== 'compaction') continue;
    out.input += count(step.input_tokens);
    out.output += count(step.output_tokens);
    out.cacheRead += count(step.cache_read_input_tokens);
    out.cacheWrite += count(step.cache_creation_input_tokens);
    out.cacheWrite1h += cacheWrite1hTokens(step) ?? 0;
  }
  return out;
}

/** TokenUsage from a Messages usage object (inputTokens include the cached tokens, and compaction's). */
export function tokenUsageFromMessagesUsage(usage: Partial<MessagesUsage> | null | undefined): TokenUsage {
  const compaction = compactionTokens(usage);
  const cacheRead = count(usage?.cache_read_input_tokens) + compaction.cacheRead;
  const cacheWrite = count(usage?.cache_creation_input_tokens) + compaction.cacheWrite;
  return {
    ...emptyUsage(),
    inputTokens: count(usage?.input_tokens) + compaction.input + cacheRead + cacheWrite,
    outputTokens: count(usage?.output_tokens) + compaction.output,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    cacheWrite1hTokens: (cacheWrite1hTokens(usage) ?? 0) + compaction.cacheWrite1h,
  };
}

/** TokenUsage of a whole (non-streamed) Messages response. */
export function readMessagesResponseUsage(body: unknown): TokenUsage {
  return tokenUsageFromMessagesUsage((body as { usage?: MessagesUsage } | null)?.usage);
}

/**
 * Folds one Messages stream frame into the running usage. Only `message_start` (input and cache
 * counts) and `message_delta` (cumulative output, and input/cache when the API restates them) carry
 * usage; other frames are recognised by their event name and never parsed.
 */
export function foldMessagesStreamUsage(frame: SseFrame, usage: TokenUsage): TokenUsage {
  const kind = frame.event;
  if (kind !== undefined && kind !== 'message_start' && kind !== 'message_delta') return usage;
  let event: any;
  try {
    event = frame.json;
  } catch {
    return usage;
  }
  if (event?.type === 'message_start') {
    return tokenUsageFromMessagesUsage(event.message?.usage);
  }
  if (event?.type === 'message_delta' && event.usage) {
    const u = event.usage;
    // message_delta counters are cumulative totals; a field that is absent keeps its earlier value
    const cacheRead = u.cache_read_input_tokens != null ? count(u.cache_read_input_tokens) : usage.cacheReadTokens;
    const cacheWrite = u.cache_creation_input_tokens != null ? count(u.cache_creation_input_tokens) : usage.cacheWriteTokens;
    const cacheWrite1h = cacheWrite1hTokens(u) ?? usage.cacheWrite1hTokens;
    const inputTokens =
      u.input_tokens != null ? count(u.input_tokens) + cacheRead + cacheWrite : usage.inputTokens - usage.cacheReadTokens - usage.cacheWriteTokens + cacheRead + cacheWrite;
    return {
      ...usage,
      inputTokens,
      outputTokens: u.output_tokens != null ? count(u.output_tokens) : usage.outputTokens,
      cacheReadTokens: cacheRead,
      cacheWriteTokens: cacheWrite,
      cacheWrite1hTokens: cacheWrite1h,
    };
  }
  return usage;
}
