/**
 * A whole Messages answer as the event stream it would have been. A client that asks for `stream: true`
 * reads SSE only: handed the JSON of an upstream that ignores the field (a proxy in front of Anthropic, a
 * Messages-compatible server), the Anthropic SDK reads no event ("request ended without sending any
 * chunks"). The gateway streams the answer instead, as chat-answer-stream.ts does for chat: Anthropic's
 * sequence, each block whole in one delta. `message_start` carries the prompt's counts and
 * `message_delta` the answer's whole usage, as Anthropic's own streams do: the meter takes each counter
 * message_delta names as the stream's total (format.ts), so the answer is charged once, and the SDK's
 * final usage is the answer's.
 */
import { SseFrame } from '../../streaming/sse-frame';

/** The usage counters of the prompt, which `message_start` reports before any output. */
const PROMPT_COUNTERS = ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const;

/** The frames, made at once: an answer not of the Messages shape throws here, before any frame goes out. */
export function messagesAnswerFrames(response: unknown): SseFrame[] {
  const answer = response as { type?: unknown; content?: unknown; usage?: unknown; stop_reason?: unknown; stop_sequence?: unknown } | null;
  if (answer === null || typeof answer !== 'object' || answer.type !== 'message' || !Array.isArray(answer.content)) throw new TypeError('not a Messages answer');
  const usage = answer.usage !== null && typeof answer.usage === 'object' ? (answer.usage as Record<string, unknown>) : {};
  const promptUsage: Record<string, unknown> = { output_tokens: 0 };
  for (const key of PROMPT_COUNTERS) if (Object.hasOwn(usage, key)) promptUsage[key] = usage[key];
  const { content, stop_reason: stopReason, stop_sequence: stopSequence, usage: _usage, ...message } = answer as Record<string, unknown>;
  const frames = [event({ type: 'message_start', message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: promptUsage } })];
  (content as unknown[]).forEach((block, index) => frames.push(...blockFrames(block, index)));
  frames.push(event({ type: 'message_delta', delta: { stop_reason: stopReason ?? null, stop_sequence: stopSequence ?? null }, usage }));
  frames.push(event({ type: 'message_stop' }));
  return frames;
}

/** One content block: started empty, filled by one delta of its kind; a kind without deltas starts whole. */
function blockFrames(block: unknown, index: number): SseFrame[] {
  if (block === null || typeof block !== 'object') throw new TypeError('a content block is not an object');
  const b = block as Record<string, unknown>;
  const deltas: Record<string, unknown>[] = [];
  let start: Record<string, unknown> = b;
  if (b.type === 'text' && typeof b.text === 'string') {
    start = { ...b, text: '' };
    if (b.text !== '') deltas.push({ type: 'text_delta', text: b.text });
  } else if (b.type === 'thinking' && typeof b.thinking === 'string') {
    start = { ...b, thinking: '', signature: '' };
    if (b.thinking !== '') deltas.push({ type: 'thinking_delta', thinking: b.thinking });
    if (typeof b.signature === 'string' && b.signature !== '') deltas.push({ type: 'signature_delta', signature: b.signature });
  } else if ((b.type === 'tool_use' || b.type === 'server_tool_use' || b.type === 'mcp_tool_use') && b.input !== null && typeof b.input === 'object') {
    start = { ...b, input: {} };
    if (Object.keys(b.input).length > 0) deltas.push({ type: 'input_json_delta', partial_json: JSON.stringify(b.input) });
  }
  return [
    event({ type: 'content_block_start', index, content_block: start }),
    ...deltas.map((delta) => event({ type: 'content_block_delta', index, delta })),
    event({ type: 'content_block_stop', index }),
  ];
}

function event(payload: { type: string; [key: string]: unknown }): SseFrame {
  return SseFrame.fromJson(payload, payload.type);
}
