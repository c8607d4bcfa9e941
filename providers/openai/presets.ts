import { createHash } from 'node:crypto';
import type { ChatMessage, ChatRequest } from '../../core/plugins/sdk';

/**
 * Named OpenAI-compatible vendors (`type: "openai", preset: "groq"`): the base URL, and the request
 * fields each vendor is known to refuse with a 400 (dropped) or to name differently (renamed). The README
 * table "OpenAI-compatible presets" lists the same; change both together.
 */
export interface Preset {
  readonly baseUrl: string;
  /** fields the vendor rejects: left out of the upstream request */
  readonly drop?: readonly string[];
  /** fields of a message the vendor rejects: left out of every message */
  readonly dropFromMessages?: readonly string[];
  /** fields the vendor names differently: [ours, theirs] */
  readonly rename?: readonly (readonly [string, string])[];
  /** fields dropped only for some of the vendor's models (its reasoning models) */
  readonly dropFor?: readonly { readonly models: RegExp; readonly fields: readonly string[] }[];
  /** a local server: an API key is optional */
  readonly local?: boolean;
  /** tool call ids in the form the vendor takes (ids another model made may not be) */
  readonly toolCallId?: (id: string) => string;
}

const MISTRAL_ID = /^[a-zA-Z0-9]{9}$/;
const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * Mistral refuses any tool call id but nine letters and digits ("Tool call id was toolu_01... but must be
 * a-z, A-Z, 0-9, with a length of 9"): an id another model made (Claude's `toolu_…`, OpenAI's `call_…`)
 * becomes nine taken from its hash, so a call and its result, hashed alike, still match.
 */
function mistralToolCallId(id: string): string {
  if (MISTRAL_ID.test(id)) return id;
  const digest = createHash('sha256').update(id).digest();
  let out = '';
  for (let i = 0; i < 9; i++) out += ALPHANUMERIC[digest[i] % ALPHANUMERIC.length];
  return out;
}

export const PRESETS: ReadonlyMap<string, Preset> = new Map<string, Preset>([
  // Groq answers 400 to a message's `name` (its OpenAI compatibility page), which LangGraph's agents and
  // AutoGen put on their messages
  ['groq', { baseUrl: 'https://api.groq.com/openai/v1', drop: ['logit_bias', 'logprobs', 'top_logprobs', 'store', 'metadata', 'service_tier'], dropFromMessages: ['name'] }],
  [
    'mistral',
    {
      baseUrl: 'https://api.mistral.ai/v1',
      drop: ['stream_options', 'user', 'logit_bias', 'logprobs', 'top_logprobs', 'store', 'metadata', 'service_tier', 'parallel_tool_calls'],
      rename: [['seed', 'random_seed'], ['max_completion_tokens', 'max_tokens']],
      toolCallId: mistralToolCallId,
    },
  ],
  ['deepseek', { baseUrl: 'https://api.deepseek.com/v1', drop: ['store', 'metadata', 'service_tier'], rename: [['max_completion_tokens', 'max_tokens']] }],
  ['together', { baseUrl: 'https://api.together.xyz/v1', drop: ['store', 'metadata', 'service_tier'], rename: [['max_completion_tokens', 'max_tokens']] }],
  ['fireworks', { baseUrl: 'https://api.fireworks.ai/inference/v1', drop: ['store', 'metadata', 'service_tier'], rename: [['max_completion_tokens', 'max_tokens']] }],
  ['openrouter', { baseUrl: 'https://openrouter.ai/api/v1' }],
  [
    'xai',
    {
      baseUrl: 'https://api.x.ai/v1',
      drop: ['store', 'metadata', 'service_tier'],
      dropFor: [
        // Grok's reasoning models answer 400 to these sampling parameters
        { models: /^grok-(3-mini|4)/, fields: ['presence_penalty', 'frequency_penalty', 'stop'] },
        // and all but grok-3-mini, grok-4.3 and grok-4.20-multi-agent to a reasoning effort ("Model grok-4-0709
        // does not support parameter reasoningEffort"), which a Messages client's thinking arrives as: they
        // reason all the same, without the dial (xAI's reasoning guide)
        { models: /^grok-(3(?!-mini)|4(?!\.3|\.20-multi-agent)|code-fast)/, fields: ['reasoning_effort'] },
      ],
    },
  ],
  ['ollama', { baseUrl: 'http://localhost:11434/v1', local: true, rename: [['max_completion_tokens', 'max_tokens']] }],
  ['vllm', { baseUrl: 'http://localhost:8000/v1', local: true }],
  ['lmstudio', { baseUrl: 'http://localhost:1234/v1', local: true, rename: [['max_completion_tokens', 'max_tokens']] }],
]);

/** The chat body with the preset's quirks applied; the client's own request object is not touched. */
export function applyPreset(preset: Preset, body: ChatRequest, upstreamModel: string): ChatRequest {
  const out = { ...body } as Record<string, unknown>;
  for (const [ours, theirs] of preset.rename ?? []) {
    if (Object.prototype.hasOwnProperty.call(out, ours)) {
      // a value the client also gave under the vendor's name wins: it is what the client meant there
      if (!Object.prototype.hasOwnProperty.call(out, theirs)) out[theirs] = out[ours];
      delete out[ours];
    }
  }
  for (const field of preset.drop ?? []) delete out[field];
  for (const rule of preset.dropFor ?? []) if (rule.models.test(upstreamModel)) for (const field of rule.fields) delete out[field];
  let messages = body.messages;
  if (preset.dropFromMessages && Array.isArray(messages)) messages = messages.map((m) => withoutFields(m, preset.dropFromMessages!));
  if (preset.toolCallId && Array.isArray(messages)) messages = messages.map((m) => withToolCallIds(m, preset.toolCallId!));
  if (messages !== body.messages) out.messages = messages;
  return out as unknown as ChatRequest;
}

/** The message without `fields`; the same message when it has none of them. */
function withoutFields(message: ChatMessage, fields: readonly string[]): ChatMessage {
  if (typeof message !== 'object' || message === null || !fields.some((field) => Object.prototype.hasOwnProperty.call(message, field))) return message;
  const out = { ...message } as Record<string, unknown>;
  for (const field of fields) delete out[field];
  return out as unknown as ChatMessage;
}

function withToolCallIds(message: ChatMessage, toolCallId: (id: string) => string): ChatMessage {
  if (typeof message?.tool_call_id === 'string') return { ...message, tool_call_id: toolCallId(message.tool_call_id) };
  if (!Array.isArray(message?.tool_calls)) return message;
  return { ...message, tool_calls: message.tool_calls.map((call) => (typeof call?.id === 'string' ? { ...call, id: toolCallId(call.id) } : call)) };
}
