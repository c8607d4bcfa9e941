/**
 * The Responses API shapes the gateway reads and writes (a subset of OpenAI's `POST /v1/responses`).
 * Index signatures keep fields we do not interpret, so nothing the client sent is lost by typing.
 */

export interface McpToolEntry {
  type: 'mcp';
  server_label: string;
  server_url?: string;
  server_description?: string;
  allowed_tools?: string[] | { tool_names?: string[]; read_only?: boolean } | null;
  require_approval?: 'always' | 'never' | ApprovalFilter | null;
  headers?: Record<string, string> | null;
  [extra: string]: unknown;
}

export interface ApprovalFilter {
  always?: { tool_names?: string[]; read_only?: boolean };
  never?: { tool_names?: string[]; read_only?: boolean };
}

export interface FunctionToolEntry {
  type: 'function';
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
  [extra: string]: unknown;
}

export type ToolEntry = McpToolEntry | FunctionToolEntry | { type: string; [extra: string]: unknown };

export interface ResponsesRequest {
  model: string;
  input?: string | InputItem[];
  instructions?: string | null;
  tools?: ToolEntry[];
  tool_choice?: unknown;
  max_output_tokens?: number | null;
  max_tool_calls?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  text?: { format?: { type: string; [extra: string]: unknown }; [extra: string]: unknown } | null;
  stream?: boolean | null;
  previous_response_id?: string | null;
  parallel_tool_calls?: boolean | null;
  metadata?: Record<string, string> | null;
  user?: string;
  [extra: string]: unknown;
}

/** One input item: a message (`type` optional), a function call or its output, or an MCP item fed back. */
export type InputItem = { type?: string; role?: string; content?: unknown; [extra: string]: unknown };

export interface OutputText {
  type: 'output_text';
  text: string;
  annotations: unknown[];
  logprobs?: unknown[];
}

/** A model's refusal (OpenAI's `refusal`, e.g. of a structured output), which clients tell from an answer. */
export interface RefusalContent {
  type: 'refusal';
  refusal: string;
}

export interface MessageItem {
  id: string;
  type: 'message';
  role: 'assistant';
  status: 'in_progress' | 'completed' | 'incomplete';
  content: (OutputText | RefusalContent)[];
}

export interface FunctionCallItem {
  id: string;
  type: 'function_call';
  call_id: string;
  name: string;
  arguments: string;
  status: 'in_progress' | 'completed' | 'incomplete';
}

export interface McpListToolsItem {
  id: string;
  type: 'mcp_list_tools';
  server_label: string;
  tools: { name: string; description?: string | null; input_schema: unknown; annotations?: unknown }[];
  error?: string | null;
}

export interface McpCallItem {
  id: string;
  type: 'mcp_call';
  name: string;
  arguments: string;
  server_label: string;
  output: string | null;
  error: string | null;
  status: 'in_progress' | 'calling' | 'completed' | 'failed' | 'incomplete';
  approval_request_id?: string | null;
}

export interface McpApprovalRequestItem {
  id: string;
  type: 'mcp_approval_request';
  name: string;
  arguments: string;
  server_label: string;
}

export interface ReasoningItem {
  id: string;
  type: 'reasoning';
  summary: { type: 'summary_text'; text: string }[];
  /** the reasoning blocks to pass back (opaque to the client), when the provider signs them */
  encrypted_content?: string;
  status?: 'in_progress' | 'completed' | 'incomplete';
}

export type OutputItem = MessageItem | FunctionCallItem | McpListToolsItem | McpCallItem | McpApprovalRequestItem | ReasoningItem;

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** Why a response stopped early: the two OpenAI reasons plus the gateway's loop bounds. */
export type IncompleteReason = 'max_output_tokens' | 'content_filter' | 'max_tool_rounds' | 'time_limit';

export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: IncompleteReason } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  max_tool_calls: number | null;
  model: string;
  output: OutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  temperature: number | null;
  top_p: number | null;
  text: { format: { type: string; [extra: string]: unknown } };
  tool_choice: unknown;
  tools: ToolEntry[];
  usage: ResponsesUsage | null;
  metadata: Record<string, string>;
  user?: string;
  [extra: string]: unknown;
}
