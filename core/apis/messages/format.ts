/**
 * The Messages API as a client-facing format (FormatAdapter): how the core translates a Messages call
 * for a non-Anthropic model to chat and back, and how it reads usage from Messages answers.
 */
import type { FormatAdapter } from '../../formats/format-adapter';
import type { SseFrame } from '../../streaming/sse-frame';
import type { ChatResponse } from '../../types/chat';
import type { TokenUsage } from '../../types/usage';
import { chatRequestFromMessages } from './to-chat-request';
import { messagesResponseFromChat } from './from-chat-response';
import { MessagesStreamTranslator } from './from-chat-stream';
import { cacheWrite1hTokens, compactionTokens, readMessagesResponseUsage } from './usage';
import { estimatePromptTokens } from '../../spend/usage-estimate';

async function* streamFromChat(frames: AsyncIterable<SseFrame>, request: unknown): AsyncIterable<SseFrame> {
  const translator = new MessagesStreamTranslator({ estimatedInputTokens: estimatePromptTokens(request) });
  for await (const frame of frames) yield* translator.push(frame);
  yield* translator.end();
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function plus(value: number | undefined, more: number): number | undefined {
  return value === undefined ? undefined : value + more;
}

/**
 * Usage carried by one Messages stream frame. Only message_start and message_delta carry any; other
 * frames are recognised by their SSE event name and never parsed. A message_delta that leaves a counter
 * out leaves the earlier value standing (its counters are cumulative totals).
 */
export function usageOfMessagesFrame(frame: SseFrame): Partial<TokenUsage> | undefined {
  if (frame.event !== 'message_start' && frame.event !== 'message_delta') return undefined;
  // the gateway's estimate of a translated stream's prompt: the upstream's count follows in message_delta
  if (frame.usageEstimated) return undefined;
  let event: any;
  try {
    event = frame.json;
  } catch {
    return undefined;
  }
  const u = event?.type === 'message_start' ? event.message?.usage : event?.type === 'message_delta' ? event.usage : undefined;
  if (!u) return undefined;
  const out: Partial<TokenUsage> = {};
  // a compaction step's tokens are billed beside the counts of the frame that reports it (usage.ts)
  const compaction = compactionTokens(u);
  const input = plus(count(u.input_tokens), compaction.input);
  const cacheRead = plus(count(u.cache_read_input_tokens), compaction.cacheRead);
  const cacheWrite = plus(count(u.cache_creation_input_tokens), compaction.cacheWrite);
  const cacheWrite1h = plus(cacheWrite1hTokens(u), compaction.cacheWrite1h);
  const output = plus(count(u.output_tokens), compaction.output);
  if (output !== undefined) out.outputTokens = output;
  if (cacheRead !== undefined) out.cacheReadTokens = cacheRead;
  if (cacheWrite !== undefined) out.cacheWriteTokens = cacheWrite;
  if (cacheWrite1h !== undefined) out.cacheWrite1hTokens = cacheWrite1h;
  // TokenUsage counts the whole prompt; Anthropic's input_tokens leave the cached part out. A message_delta
  // names only the counters that apply (the SDK overwrites each one it names): one that restates the prompt
  // without cache counts is at least that prompt, and the meter keeps the larger of it and message_start's
  if (input !== undefined) out.inputTokens = input + (cacheRead ?? 0) + (cacheWrite ?? 0);
  return out;
}

export const messagesFormat: FormatAdapter = {
  format: 'messages',
  toChat: (body) => chatRequestFromMessages(body),
  fromChat: (response: ChatResponse) => messagesResponseFromChat(response),
  streamFromChat: (frames, request) => streamFromChat(frames, request),
  usageOf: (body) => readMessagesResponseUsage(body),
  usageOfFrame: usageOfMessagesFrame,
  isTerminalFrame: (frame) => frame.event === 'message_stop',
};

/** count_tokens costs nothing and has no chat equivalent: only Anthropic models serve it. */
export const messagesCountTokensFormat: FormatAdapter = {
  format: 'messages.count_tokens',
  usageOf: () => undefined,
};
