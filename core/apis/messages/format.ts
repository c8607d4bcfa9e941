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
  const translator = new MessagesStreamTranslator({ estimatedInputTokens: estimatePromptTokens(request), stopSequences: (request as { stop_sequences?: unknown } | null)?.stop_sequences });
  for await (const frame of frames) yield* translator.push(frame);
  yield* translator.end();
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function plus(value: number | undefined, more: number): number | undefined {
  return value === undefined ? undefined : value + more;
}

/** The Messages counters a stream has reported so far, as the Anthropic SDK's final usage holds them. */
interface StreamCounters {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  /** of cacheWrite, the 1-hour cache's (usage.cache_creation) */
  cacheWrite1h?: number;
  compaction?: ReturnType<typeof compactionTokens>;
}

const COUNTER_OF_KEY = [
  ['input_tokens', 'input'],
  ['output_tokens', 'output'],
  ['cache_read_input_tokens', 'cacheRead'],
  ['cache_creation_input_tokens', 'cacheWrite'],
] as const;

/**
 * The stream's usage so far, after one Messages stream frame (only message_start and message_delta carry
 * any; other frames are recognised by their SSE event name and never parsed). message_delta's counters
 * are cumulative totals (Anthropic's streaming docs): each one it names replaces the earlier value, even
 * a smaller one (an upstream that estimated the prompt in message_start, then counted it), and one it
 * leaves out keeps the earlier value, as the Anthropic SDK reads them. `scratch` keeps the counters
 * between the frames of one stream.
 */
export function usageOfMessagesFrame(frame: SseFrame, scratch: Record<string, unknown> = {}): Partial<TokenUsage> | undefined {
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
  const seen = (scratch.messagesCounters ??= {}) as StreamCounters;
  for (const [key, counter] of COUNTER_OF_KEY) {
    const value = count(u[key]);
    if (value !== undefined) seen[counter] = value;
  }
  const written1h = cacheWrite1hTokens(u);
  if (written1h !== undefined) seen.cacheWrite1h = written1h;
  // a compaction step's tokens are billed beside the counts of the frame that reports it (usage.ts)
  if (Array.isArray(u.iterations)) seen.compaction = compactionTokens(u);
  const compaction = seen.compaction ?? compactionTokens(undefined);
  const out: Partial<TokenUsage> = {};
  const cacheRead = plus(seen.cacheRead, compaction.cacheRead);
  const cacheWrite = plus(seen.cacheWrite, compaction.cacheWrite);
  const cacheWrite1h = plus(seen.cacheWrite1h, compaction.cacheWrite1h);
  const output = plus(seen.output, compaction.output);
  if (output !== undefined) out.outputTokens = output;
  if (cacheRead !== undefined) out.cacheReadTokens = cacheRead;
  if (cacheWrite !== undefined) out.cacheWriteTokens = cacheWrite;
  if (cacheWrite1h !== undefined) out.cacheWrite1hTokens = cacheWrite1h;
  // TokenUsage counts the whole prompt; Anthropic's input_tokens leave the cached part out
  if (seen.input !== undefined) out.inputTokens = seen.input + compaction.input + (cacheRead ?? 0) + (cacheWrite ?? 0);
  return out;
}

export const messagesFormat: FormatAdapter = {
  format: 'messages',
  toChat: (body) => chatRequestFromMessages(body),
  fromChat: (response: ChatResponse, request) => messagesResponseFromChat(response, request),
  streamFromChat: (frames, request) => streamFromChat(frames, request),
  usageOf: (body) => readMessagesResponseUsage(body),
  usageOfFrame: usageOfMessagesFrame,
  usageOfFrameIsTotal: true,
  isTerminalFrame: (frame) => frame.event === 'message_stop',
};

/** count_tokens costs nothing and has no chat equivalent: only Anthropic models serve it. */
export const messagesCountTokensFormat: FormatAdapter = {
  format: 'messages.count_tokens',
  usageOf: () => undefined,
};
