/**
 * A whole chat answer as the chunk stream it would have been. Some OpenAI-compatible servers (and proxies
 * in front of them) ignore `stream: true` and answer one `chat.completion` document; a client that asked
 * for a stream reads SSE only, so handed that JSON its SDK sees no event at all (the openai SDK an empty
 * answer, the Anthropic SDK "request ended without sending any chunks"). The gateway streams the answer
 * instead, as LiteLLM does for providers without streaming: per choice one chunk with the whole message,
 * then one with its finish reason, the usage chunk (which the meter reads, and which a chat client that
 * did not ask for it never sees), and `[DONE]`.
 */
import { SseFrame } from '../streaming/sse-frame';
import type { ChatChunk, ChatChunkChoice, ChatResponse } from '../types/chat';

/**
 * The frames, made at once: an answer not of the chat shape throws here, before any frame goes out, so the
 * client gets the endpoint's plain error (upstream_bad_response) rather than a stream that breaks.
 */
export function chatAnswerFrames(response: ChatResponse): SseFrame[] {
  if (response === null || typeof response !== 'object' || !Array.isArray(response.choices)) throw new TypeError('not a chat completion');
  const base = { id: response.id, object: 'chat.completion.chunk' as const, created: response.created, model: response.model };
  if (response.system_fingerprint !== undefined) Object.assign(base, { system_fingerprint: response.system_fingerprint });
  const chunk = (choices: ChatChunkChoice[], extra: Partial<ChatChunk> = {}) => SseFrame.fromJson({ ...base, choices, ...extra } satisfies ChatChunk);
  const frames: SseFrame[] = [];
  for (const choice of response.choices) {
    const { tool_calls: calls, ...message } = choice.message;
    const delta: ChatChunkChoice['delta'] = { ...message };
    if (calls !== undefined && calls !== null && !Array.isArray(calls)) throw new TypeError('tool_calls is not a list');
    // a streamed call names its place in the message's list of calls
    if (calls && calls.length > 0) delta.tool_calls = calls.map((call, index) => ({ index, ...call }));
    frames.push(chunk([{ index: choice.index, delta, finish_reason: null, ...(choice.logprobs !== undefined ? { logprobs: choice.logprobs } : {}) }]));
    frames.push(chunk([{ index: choice.index, delta: {}, finish_reason: choice.finish_reason }]));
  }
  if (response.usage) frames.push(chunk([], { usage: response.usage }));
  frames.push(SseFrame.fromRaw('[DONE]'));
  return frames;
}
