/**
 * The Anthropic Messages wire format, as far as the gateway reads or writes it. Every type keeps an
 * index signature: on the pass-through path fields we do not model (thinking, citations, server tools,
 * fields added next month) travel through untouched.
 */

export interface MessagesCacheControl { type: 'ephemeral'; ttl?: string; [extra: string]: unknown }

export interface MessagesTextBlock { type: 'text'; text: string; cache_control?: MessagesCacheControl | null; [extra: string]: unknown }

export type MessagesImageSource =
  | { type: 'base64'; media_type: string; data: string; [extra: string]: unknown }
  | { type: 'url'; url: string; [extra: string]: unknown }
  | { type: string; [extra: string]: unknown };

export interface MessagesImageBlock { type: 'image'; source: MessagesImageSource; cache_control?: MessagesCacheControl | null; [extra: string]: unknown }

export interface MessagesToolUseBlock { type: 'tool_use'; id: string; name: string; input: unknown; [extra: string]: unknown }

export interface MessagesToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | MessagesContentBlock[];
  is_error?: boolean;
  cache_control?: MessagesCacheControl | null;
  [extra: string]: unknown;
}

export type MessagesContentBlock =
  | MessagesTextBlock
  | MessagesImageBlock
  | MessagesToolUseBlock
  | MessagesToolResultBlock
  | { type: string; [extra: string]: unknown };

export interface MessagesMessage {
  role: 'user' | 'assistant';
  content: string | MessagesContentBlock[];
  [extra: string]: unknown;
}

export interface MessagesTool {
  name: string;
  description?: string;
  input_schema?: Record<string, unknown>;
  /** absent or "custom" for a client tool; server tools carry a versioned type such as web_search_20250305 */
  type?: string;
  [extra: string]: unknown;
}

export type MessagesToolChoice =
  | { type: 'auto' | 'any' | 'none'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean };

export interface MessagesRequest {
  model: string;
  max_tokens: number;
  messages: MessagesMessage[];
  system?: string | MessagesTextBlock[];
  stream?: boolean;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop_sequences?: string[];
  tools?: MessagesTool[];
  tool_choice?: MessagesToolChoice;
  metadata?: { user_id?: string | null; [extra: string]: unknown };
  /** extended thinking: `{type: "enabled", budget_tokens}`, `{type: "adaptive"}` or `{type: "disabled"}` */
  thinking?: { type: string; budget_tokens?: number; [extra: string]: unknown };
  /** structured output (`format`) and effort */
  output_config?: { format?: { type: string; schema?: Record<string, unknown>; [extra: string]: unknown } | null; effort?: string | null; [extra: string]: unknown };
  [extra: string]: unknown;
}

export type MessagesStopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded';

export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  /** the cache writes split by TTL */
  cache_creation?: { ephemeral_5m_input_tokens?: number; ephemeral_1h_input_tokens?: number } | null;
  [extra: string]: unknown;
}

export interface MessagesResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: MessagesContentBlock[];
  stop_reason: MessagesStopReason | string | null;
  stop_sequence: string | null;
  usage: MessagesUsage;
  [extra: string]: unknown;
}

/** `{"type":"error","error":{"type","message"}}`, the body of every Anthropic error answer. */
export interface MessagesErrorBody {
  type: 'error';
  error: { type: string; message: string; [extra: string]: unknown };
  [extra: string]: unknown;
}
