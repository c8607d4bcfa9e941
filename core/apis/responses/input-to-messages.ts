/**
 * Responses `input` (a string or a list of items) -> canonical chat messages.
 *
 * Items the model must see become messages: messages, function calls and their outputs, MCP calls fed
 * back. An `mcp_approval_request` answered by an `mcp_approval_response` in the same input becomes an
 * assistant tool call whose result the tool loop fills in (runs it, or reports the denial); unanswered
 * requests and `mcp_list_tools` items are context for the client only and are skipped. A `reasoning`
 * item the gateway wrote gives its blocks back to the assistant turn that follows it (reasoning.ts).
 */
import { GatewayError, InvalidRequestError } from '../../errors/gateway-error';
import type { ChatMessage, ContentPart, ThinkingBlock, ToolCall } from '../../types/chat';
import { decodeReasoning } from './reasoning';
import { toFunctionName } from './function-names';
import type { InputItem } from './responses-types';
import { clientText } from '../../formats/client-text';

/** A tool call awaiting the client's approval, as the gateway remembers or the client sent it back. */
export interface PendingApproval {
  approvalRequestId: string;
  /** the id of the assistant tool call the model made */
  toolCallId: string;
  /** the MCP tool name (as listed to the client) */
  name: string;
  arguments: string;
  serverLabel: string;
  /** images of the turn's calls that ran at once, to follow the turn's answers once this one is given */
  media?: ContentPart[];
}

export interface ApprovalAnswer {
  approvalRequestId: string;
  approve: boolean;
  reason?: string;
}

/** A tool message whose content the loop fills in once the approved call ran (or was denied). */
export interface AnsweredApproval {
  pending: PendingApproval;
  answer: ApprovalAnswer;
  message: ChatMessage;
}

export interface TranslatedInput {
  messages: ChatMessage[];
  answers: ApprovalAnswer[];
  /** approval requests that came back in the input with their answers (stateless continuation) */
  answered: AnsweredApproval[];
}

/**
 * The input item each chat message came from, and whether its content parts are the item's one for one:
 * a provider's translation names the chat message it refuses, which the client never sent.
 */
const origins = new WeakMap<ChatMessage, { param: string; parts: boolean }>();

function from<T extends ChatMessage | undefined>(message: T, param: string, parts = false): T {
  if (message && !origins.has(message)) origins.set(message, { param, parts });
  return message;
}

const CHAT_PARAM = /^messages\[(\d+)\](\.content\[\d+\])?/;

/**
 * A refusal naming `messages[k]...` of the chat messages sent (`sent`), named instead by the input item
 * (or its content part) the client sent; a chat parameter whose Responses name differs (CHAT_NAMES) by
 * that name. Other errors, and messages not from this request's input (`own`: a continued conversation's
 * are tagged by the request that sent them), are returned as they are.
 */
export function inInputTerms(err: unknown, sent: ChatMessage[], own: ChatMessage[]): unknown {
  if (!(err instanceof GatewayError) || typeof err.param !== 'string') return err;
  const match = CHAT_PARAM.exec(err.param);
  const message = match ? sent[Number(match[1])] : undefined;
  const origin = message && own.includes(message) ? origins.get(message) : undefined;
  const named = err.param;
  const renamed = CHAT_NAMES.find(([chat]) => named === chat || named.startsWith(`${chat}.`));
  if (!origin && renamed) return withParam(err, named, `${renamed[1]}${named.slice(renamed[0].length)}`);
  if (!match || !origin) return err;
  return withParam(err, named, origin.parts && match[2] ? `${origin.param}${match[2]}` : origin.param);
}

/**
 * Chat parameters a refusal may name whose Responses name differs: the conversation as a whole (a prompt
 * over the context window: `input`, as OpenAI names it), the output format, the reasoning effort and the
 * output cap, each from the Responses field the client sent.
 */
const CHAT_NAMES: readonly (readonly [string, string])[] = [
  ['messages', 'input'],
  ['response_format.json_schema', 'text.format'],
  ['response_format', 'text.format'],
  ['reasoning_effort', 'reasoning.effort'],
  ['max_tokens', 'max_output_tokens'],
];

/** The error naming `param` instead, its message too when it begins with the old name. */
function withParam(err: GatewayError, named: string, param: string): GatewayError {
  const text = err.message.startsWith(named) ? `${param}${err.message.slice(named.length)}` : err.message;
  return new GatewayError(err.status, err.type, err.code, text, { param, headers: err.headers, cause: err });
}

export function inputToMessages(input: string | InputItem[] | undefined): TranslatedInput {
  if (input === undefined) return { messages: [], answers: [], answered: [] };
  if (typeof input === 'string') return { messages: [from({ role: 'user', content: input }, 'input')], answers: [], answered: [] };
  if (!Array.isArray(input)) throw new InvalidRequestError("Invalid type for 'input': expected a string or an array of items.", 'invalid_type', { param: 'input' });

  // A client that sends its whole history back (the Agents SDK, item references) sends an approved call's
  // request and answer again beside the `mcp_call` it led to: that call already ran, and must not run twice.
  const carriedOut = new Set<string>();
  for (const item of input) if (item?.type === 'mcp_call' && typeof item.approval_request_id === 'string') carriedOut.add(item.approval_request_id);
  const answers = new Map<string, ApprovalAnswer>();
  input.forEach((item, i) => {
    if (item?.type !== 'mcp_approval_response') return;
    if (typeof item.approval_request_id !== 'string' || typeof item.approve !== 'boolean') {
      throw new InvalidRequestError(`input[${i}]: an mcp_approval_response needs 'approval_request_id' (string) and 'approve' (boolean).`, 'invalid_value', { param: `input[${i}]` });
    }
    if (carriedOut.has(item.approval_request_id)) return;
    answers.set(item.approval_request_id, { approvalRequestId: item.approval_request_id, approve: item.approve, reason: typeof item.reason === 'string' ? item.reason : undefined });
  });

  const messages: ChatMessage[] = [];
  const answered: AnsweredApproval[] = [];
  /** reasoning blocks waiting for the assistant turn they preceded */
  let thinking: ThinkingBlock[] = [];
  const withThinking = (message: ChatMessage | undefined) => {
    if (message?.role === 'assistant' && thinking.length > 0) message.thinking_blocks = [...(message.thinking_blocks ?? []), ...thinking];
    thinking = [];
  };
  /**
   * Images and files of the function outputs just read: a chat tool message holds only text, and the tool
   * answers must follow their calls directly, so these follow the run of answers in a user message.
   */
  let attachments: ContentPart[] = [];
  const attach = () => {
    if (attachments.length > 0) messages.push({ role: 'user', content: attachments });
    attachments = [];
  };
  input.forEach((item, i) => {
    if (typeof item !== 'object' || item === null) throw new InvalidRequestError(`input[${i}] must be an object.`, 'invalid_type', { param: `input[${i}]` });
    const type = item.type ?? 'message';
    if (type !== 'function_call_output') attach();
    switch (type) {
      case 'message': {
        const message = messageOf(item, i);
        messages.push(from(message, `input[${i}]`, Array.isArray(message.content)));
        withThinking(message);
        return;
      }
      case 'function_call':
        appendToolCall(messages, { id: requireString(item, 'call_id', i), type: 'function', function: { name: requireString(item, 'name', i), arguments: stringArgs(item.arguments) } });
        withThinking(from(messages[messages.length - 1], `input[${i}]`));
        return;
      case 'reasoning':
        thinking.push(...decodeReasoning(item.encrypted_content));
        return;
      case 'function_call_output': {
        const output = toolOutput(item.output, `input[${i}].output`);
        messages.push(from({ role: 'tool', tool_call_id: requireString(item, 'call_id', i), content: output.text }, `input[${i}]`));
        attachments.push(...output.media);
        return;
      }
      case 'mcp_call': {
        const name = requireString(item, 'name', i);
        const id = requireString(item, 'id', i);
        appendToolCall(messages, { id, type: 'function', function: { name: toFunctionName(name), arguments: stringArgs(item.arguments) } });
        withThinking(messages[messages.length - 1]);
        const output = typeof item.output === 'string' ? item.output : typeof item.error === 'string' ? `Error: ${item.error}` : '';
        messages.push({ role: 'tool', tool_call_id: id, content: output });
        return;
      }
      case 'mcp_approval_request': {
        const id = requireString(item, 'id', i);
        const answer = answers.get(id);
        if (!answer) return;
        const pending: PendingApproval = { approvalRequestId: id, toolCallId: id, name: requireString(item, 'name', i), arguments: stringArgs(item.arguments), serverLabel: clientText(item.server_label ?? '') };
        appendToolCall(messages, { id, type: 'function', function: { name: toFunctionName(pending.name), arguments: pending.arguments } });
        const message: ChatMessage = { role: 'tool', tool_call_id: id, content: '' };
        messages.push(message);
        answered.push({ pending, answer, message });
        return;
      }
      case 'mcp_approval_response':
      case 'mcp_list_tools':
        return;
      default:
        throw new InvalidRequestError(`input[${i}]: items of type "${clientText(type)}" are not supported by this gateway.`, 'unsupported_value', { param: `input[${i}].type` });
    }
  });
  attach();
  return { messages, answers: [...answers.values()], answered };
}

function messageOf(item: InputItem, i: number): ChatMessage {
  const role = item.role;
  if (role !== 'user' && role !== 'assistant' && role !== 'system' && role !== 'developer') {
    throw new InvalidRequestError(`input[${i}].role must be one of user, assistant, system, developer.`, 'invalid_value', { param: `input[${i}].role` });
  }
  // `developer` is OpenAI's newer name for system instructions; every provider understands `system`.
  const chatRole = role === 'developer' ? 'system' : role;
  const content = item.content;
  if (typeof content === 'string') return { role: chatRole, content };
  if (!Array.isArray(content)) throw new InvalidRequestError(`input[${i}].content must be a string or an array of content parts.`, 'invalid_type', { param: `input[${i}].content` });
  const parts = content.map((part, j) => contentPart(part, `input[${i}].content[${j}]`));
  // Assistant and system turns are plain text in every provider's chat shape.
  if (chatRole !== 'user') return { role: chatRole, content: parts.map((p) => (p.type === 'text' ? (p as { text: string }).text : '')).join('') };
  return { role: chatRole, content: parts };
}

function contentPart(part: any, path: string): ContentPart {
  switch (part?.type) {
    case 'input_text':
    case 'output_text':
    case 'text':
      return { type: 'text', text: clientText(requiredField(part, 'text', path)) };
    case 'refusal':
      return { type: 'text', text: clientText(requiredField(part, 'refusal', path)) };
    case 'input_image': {
      if (typeof part.image_url !== 'string') throw new InvalidRequestError(`${path}: only images given by 'image_url' are supported.`, 'unsupported_value', { param: path });
      return { type: 'image_url', image_url: { url: part.image_url, ...(part.detail ? { detail: part.detail } : {}) } };
    }
    case 'input_file':
      // a chat file part has no URL: a `file_url` would reach the model as an empty file
      if (typeof part.file_data !== 'string' && typeof part.file_id !== 'string') {
        throw new InvalidRequestError(`${path}: only files given by 'file_data' or 'file_id' are supported.`, 'unsupported_value', { param: path });
      }
      return { type: 'file', file: { ...(part.file_data ? { file_data: part.file_data } : {}), ...(part.file_id ? { file_id: part.file_id } : {}), ...(part.filename ? { filename: part.filename } : {}) } };
    default:
      throw new InvalidRequestError(`${path}: content parts of type "${clientText(part?.type)}" are not supported.`, 'unsupported_value', { param: `${path}.type` });
  }
}

/**
 * A text part's text (or a refusal part's refusal), which OpenAI requires: read as empty, a part without it
 * reached the model as an empty message, answered and charged as if the client had meant that.
 */
function requiredField(part: Record<string, unknown>, field: string, path: string): unknown {
  const value = part[field];
  if (value === undefined || value === null) throw new InvalidRequestError(`Missing required parameter: '${path}.${field}'.`, 'missing_required_parameter', { param: `${path}.${field}` });
  return value;
}

/** Consecutive calls belong to one assistant turn (chat carries them as one message's `tool_calls`). */
function appendToolCall(messages: ChatMessage[], call: ToolCall): void {
  const last = messages[messages.length - 1];
  if (last?.role === 'assistant') {
    last.tool_calls = [...(last.tool_calls ?? []), call];
    if (last.content === '') last.content = null;
    return;
  }
  messages.push({ role: 'assistant', content: null, tool_calls: [call] });
}

function requireString(item: InputItem, field: string, i: number): string {
  const value = item[field];
  if (typeof value !== 'string' || value.length === 0) {
    throw new InvalidRequestError(`input[${i}]: missing required string '${field}'.`, 'missing_required_parameter', { param: `input[${i}].${field}` });
  }
  return value;
}

function stringArgs(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined ? '{}' : JSON.stringify(value);
}

/**
 * A function_call_output's `output`: a string, or a list of content parts whose text is joined and whose
 * images and files (a screenshot tool's) are kept as parts for the model to see.
 */
function toolOutput(output: unknown, path: string): { text: string; media: ContentPart[] } {
  if (typeof output === 'string') return { text: output, media: [] };
  if (!Array.isArray(output)) return { text: output === undefined || output === null ? '' : JSON.stringify(output), media: [] };
  const media: ContentPart[] = [];
  const text = output
    .map((p: any, k) => {
      if (p?.type === 'input_image' || p?.type === 'input_file') {
        media.push(contentPart(p, `${path}[${k}]`));
        return '';
      }
      return typeof p?.text === 'string' ? p.text : '';
    })
    .join('');
  return { text, media };
}
