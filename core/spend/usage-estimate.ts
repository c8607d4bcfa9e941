/**
 * Token estimates for what an upstream did but never reported: a stream cut or blocked before its usage
 * frame, and the prompt size a translated Messages stream must announce in `message_start` before the
 * chat upstream has counted it. About four characters per token, the usual rule of thumb for English
 * text; an estimate is always flagged as one (`usageEstimated` in the log).
 */
import type { ApiFormat } from '../plugins/contracts';
import type { SseFrame } from '../streaming/sse-frame';
import type { TokenUsage } from '../types/usage';

export const CHARS_PER_TOKEN = 4;

export function tokensOfChars(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** The prompt a request body carries: its messages (or Responses input), system prompt and tools. */
export function estimatePromptTokens(body: any): number {
  let chars = 0;
  const add = (value: unknown) => {
    if (value === undefined || value === null) return;
    chars += typeof value === 'string' ? value.length : safeLength(value);
  };
  if (body?.messages !== undefined || body?.input !== undefined) {
    add(body.messages);
    add(body.input);
    add(body.system);
    add(body.instructions);
    add(body.tools);
  } else add(body);
  return tokensOfChars(chars);
}

function safeLength(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return 0;
  }
}

/**
 * The string value of a key that holds generated text, in chat chunks and Messages events. Written here,
 * not taken from config; linear (no nested repetition), so native RegExp is safe.
 */
const TEXT_VALUE = /"(?:content|refusal|reasoning_content|arguments|text|partial_json|thinking)":\s*"((?:[^"\\]|\\.)*)"/g;

/**
 * The generated text a frame carries: chat content, reasoning, refusal and tool arguments; Messages text,
 * thinking and tool-input deltas. Read from the frame's text without parsing it (the metered pass-through
 * path parses only its usage frame; this costs about as much as that check, a fifth of a JSON.parse of a
 * typical chunk), escapes counted as written, which is close enough for an estimate.
 */
export function frameTextLength(format: ApiFormat, frame: SseFrame): number {
  if (frame.isDone || (format !== 'chat' && format !== 'messages')) return 0;
  const data = frame.data;
  let n = 0;
  TEXT_VALUE.lastIndex = 0;
  for (let match = TEXT_VALUE.exec(data); match !== null; match = TEXT_VALUE.exec(data)) n += match[1].length;
  return n;
}

/**
 * Fill in the counters the upstream never reported: output from the text streamed so far, input from
 * the request. A stream that ended early may have reported an output count at its start only (Anthropic's
 * `message_start` says 1), so the output estimate wins when it is larger. Returns whether anything was
 * estimated (the caller flags the log entry).
 */
export function fillUnreportedUsage(usage: TokenUsage, requestBody: unknown, outputChars: number): boolean {
  let estimated = false;
  const output = tokensOfChars(outputChars);
  if (output > usage.outputTokens) {
    usage.outputTokens = output;
    estimated = true;
  }
  if (usage.inputTokens === 0 && requestBody !== undefined) {
    usage.inputTokens = estimatePromptTokens(requestBody);
    estimated = usage.inputTokens > 0 || estimated;
  }
  return estimated;
}
