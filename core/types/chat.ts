/**
 * The canonical model format inside the gateway: the OpenAI chat-completions shape.
 * Every type keeps an index signature so parameters we have never heard of travel through untouched.
 */

export interface TextPart { type: 'text'; text: string; [extra: string]: unknown }
export interface ImageUrlPart { type: 'image_url'; image_url: { url: string; detail?: string }; [extra: string]: unknown }
export type ContentPart = TextPart | ImageUrlPart | { type: string; [extra: string]: unknown };

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  [extra: string]: unknown;
}

/**
 * A model's reasoning as Anthropic returns it: a `thinking` block with the signature that must come back
 * unchanged on the next turn, or a `redacted_thinking` block. The canonical chat format carries them as
 * `thinking_blocks` beside `reasoning_content` (the names LiteLLM and OpenAI-compatible servers use), so a
 * chat client can pass them back; providers without such a field leave them out of the upstream request.
 */
export type ThinkingBlock =
  | { type: 'thinking'; thinking: string; signature?: string; [extra: string]: unknown }
  | { type: 'redacted_thinking'; data: string; [extra: string]: unknown };

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | string;
  content?: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  /** assistant turns: the reasoning that preceded this answer, passed back as it was returned */
  thinking_blocks?: ThinkingBlock[];
  [extra: string]: unknown;
}

export interface ChatTool {
  type: 'function' | string;
  function?: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
  [extra: string]: unknown;
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean; [extra: string]: unknown } | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  temperature?: number | null;
  tools?: ChatTool[];
  tool_choice?: unknown;
  response_format?: unknown;
  stop?: string | string[] | null;
  user?: string;
  [extra: string]: unknown;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number; cache_write_1h_tokens?: number; [extra: string]: unknown } | null;
  completion_tokens_details?: Record<string, unknown> | null;
  [extra: string]: unknown;
}

export interface ChatChoice {
  index: number;
  message: {
    role: 'assistant';
    content: string | null;
    tool_calls?: ToolCall[];
    refusal?: string | null;
    /** the model's reasoning text (DeepSeek, vLLM, Anthropic through the gateway) */
    reasoning_content?: string | null;
    thinking_blocks?: ThinkingBlock[];
    [extra: string]: unknown;
  };
  finish_reason: string | null;
  logprobs?: unknown;
  [extra: string]: unknown;
}

export interface ChatResponse {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: ChatChoice[];
  usage?: Usage;
  [extra: string]: unknown;
}

export interface ChunkToolCall {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChatChunkChoice {
  index: number;
  delta: {
    role?: 'assistant';
    content?: string | null;
    tool_calls?: ChunkToolCall[];
    refusal?: string | null;
    reasoning_content?: string | null;
    /** a finished thinking block's signature (`thinking: ""`), or a redacted block, when the upstream gives one */
    thinking_blocks?: ThinkingBlock[];
    [extra: string]: unknown;
  };
  finish_reason: string | null;
  logprobs?: unknown;
  [extra: string]: unknown;
}

export interface ChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: ChatChunkChoice[];
  usage?: Usage | null;
  [extra: string]: unknown;
}

export interface EmbeddingsRequest {
  model: string;
  input: string | string[] | number[] | number[][];
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
  user?: string;
  [extra: string]: unknown;
}

export interface EmbeddingsResponse {
  object: 'list';
  data: { object: 'embedding'; index: number; embedding: number[] | string }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
  [extra: string]: unknown;
}
