/**
 * A Messages request -> the canonical chat request, for a model whose provider is not Anthropic.
 *
 * Mapping choices a client can observe:
 * - `system` (string or text blocks) becomes one leading system message; blocks are joined with a
 *   blank line because many OpenAI-compatible servers accept only a string there.
 * - `tool_result` blocks become `tool` messages placed BEFORE the rest of that user turn, as the chat
 *   format requires tool answers to follow the assistant's tool calls directly; one with `is_error` has
 *   its text prefixed `Error: ` (chat has no error flag).
 * - thinking blocks of earlier assistant turns travel as that message's `thinking_blocks` (signatures
 *   unchanged; providers without reasoning input leave them out); `thinking` -> `reasoning_effort`.
 * - `output_config.format` (structured output) -> `response_format` json_schema; what in `output_config`
 *   has no chat equivalent is refused, never dropped (output-config.ts).
 * - `cache_control` markers have no chat equivalent and are dropped; `top_k` too.
 * - A `document` block holding a base64 PDF becomes a chat `file` part (`file_data` as a data URL, the
 *   title as filename), one holding plain text a text part; inside a tool_result alike. Other documents (by URL, file id, content
 *   blocks), server tools (web search, code execution, ...) and MCP connector servers cannot run on another provider: they are
 *   refused with a clear error instead of being silently ignored.
 */
import { createHash } from 'node:crypto';
import { InvalidRequestError } from '../../errors/gateway-error';
import { clientText } from '../../formats/client-text';
import type { ChatMessage, ChatRequest, ChatTool, ContentPart } from '../../types/chat';
import type { ThinkingBlock } from '../../types/chat';
import { chatFieldsOfOutputConfig } from './output-config';
import { effortOfBudget, isThinkingBlock, thinkingBlockOf } from './thinking';
import type {
  MessagesContentBlock,
  MessagesImageBlock,
  MessagesMessage,
  MessagesRequest,
  MessagesTextBlock,
  MessagesTool,
  MessagesToolResultBlock,
  MessagesToolUseBlock,
} from './types';


export function chatRequestFromMessages(request: MessagesRequest): ChatRequest {
  if (!request || typeof request !== 'object') throw new InvalidRequestError('The request body must be a JSON object.');
  if (!Array.isArray(request.messages)) throw new InvalidRequestError('messages: field required', 'invalid_request', { param: 'messages' });

  const messages: ChatMessage[] = [];
  const system = systemText(request.system);
  if (system !== undefined) messages.push({ role: 'system', content: system });
  request.messages.forEach((message, i) => messages.push(...chatMessagesFrom(message, i)));

  const chat: ChatRequest = { model: request.model, messages };
  if (request.max_tokens !== undefined) chat.max_tokens = request.max_tokens;
  if (request.temperature !== undefined) chat.temperature = request.temperature;
  // -1 is the Messages API's "not set" (LangChain sends it); chat APIs refuse it
  if (request.top_p !== undefined && request.top_p !== -1) chat.top_p = request.top_p;
  if (request.stop_sequences !== undefined && request.stop_sequences.length > 0) chat.stop = [...request.stop_sequences];
  if (request.tools !== undefined && request.tools.length > 0) chat.tools = request.tools.map(chatTool);
  // the MCP connector's servers lend the model their tools on Anthropic's side (with the 2025-04-04 beta
  // without any entry in `tools`): dropped, the model would answer as if they did not exist
  const mcpServers = (request as { mcp_servers?: unknown }).mcp_servers;
  if (Array.isArray(mcpServers) && mcpServers.length > 0) {
    throw new InvalidRequestError('mcp_servers: MCP connector servers are supported only for Anthropic models', 'unsupported_tool', { param: 'mcp_servers' });
  }
  if (request.tool_choice !== undefined) Object.assign(chat, chatToolChoice(request.tool_choice));
  const effort = reasoningEffortOfThinking(request.thinking);
  if (effort !== undefined) chat.reasoning_effort = effort;
  // output_config.effort, when given, is the more precise of the two
  Object.assign(chat, chatFieldsOfOutputConfig(request.output_config));
  const user = request.metadata?.user_id;
  if (typeof user === 'string' && user !== '') chat.user = chatUser(user);
  if (request.stream === true) {
    chat.stream = true;
    // the Messages stream reports usage at its end, so the chat stream must carry it
    chat.stream_options = { include_usage: true };
  }
  return chat;
}

/** OpenAI refuses a `user` over 64 characters ("Invalid 'user': string too long"). */
const MAX_CHAT_USER = 64;

/**
 * `metadata.user_id` as a chat `user`. Claude Code's is about 150 characters (user, account and session
 * ids): a longer one goes as its SHA-256 in hex, 64 characters, the same for the same user.
 */
function chatUser(userId: string): string {
  return userId.length <= MAX_CHAT_USER ? userId : createHash('sha256').update(userId).digest('hex');
}

function systemText(system: MessagesRequest['system']): string | undefined {
  if (system === undefined || system === null) return undefined;
  if (typeof system === 'string') return system === '' ? undefined : system;
  if (!Array.isArray(system)) throw new InvalidRequestError('system: must be a string or an array of text blocks', 'invalid_request', { param: 'system' });
  const texts = system.map((block, i) => {
    if (block?.type !== 'text') throw new InvalidRequestError(`system.${i}: only text blocks are allowed`, 'invalid_request', { param: `system.${i}` });
    return block.text;
  });
  return texts.length === 0 ? undefined : texts.join('\n\n');
}

function chatMessagesFrom(message: MessagesMessage, i: number): ChatMessage[] {
  const where = `messages.${i}`;
  if (message?.role !== 'user' && message?.role !== 'assistant') {
    throw new InvalidRequestError(`${where}.role: must be "user" or "assistant"`, 'invalid_request', { param: `${where}.role` });
  }
  if (typeof message.content === 'string') return [{ role: message.role, content: message.content }];
  if (!Array.isArray(message.content)) throw new InvalidRequestError(`${where}.content: must be a string or an array of blocks`, 'invalid_request', { param: `${where}.content` });
  return message.role === 'assistant' ? [assistantMessage(message.content, where)] : userMessages(message.content, where);
}

function assistantMessage(blocks: MessagesContentBlock[], where: string): ChatMessage {
  const texts: string[] = [];
  const toolCalls: NonNullable<ChatMessage['tool_calls']> = [];
  const thinking: ThinkingBlock[] = [];
  blocks.forEach((block, j) => {
    if (isThinkingBlock(block)) thinking.push(thinkingBlockOf(block));
    else if (block.type === 'text') texts.push((block as MessagesTextBlock).text);
    else if (block.type === 'tool_use') {
      const use = block as MessagesToolUseBlock;
      toolCalls.push({ id: use.id, type: 'function', function: { name: use.name, arguments: JSON.stringify(use.input ?? {}) } });
    } else unsupportedBlock(block, `${where}.content.${j}`);
  });
  const message: ChatMessage = { role: 'assistant', content: texts.length > 0 ? texts.join('') : toolCalls.length > 0 ? null : '' };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (thinking.length > 0) message.thinking_blocks = thinking;
  return message;
}

/** One user turn -> its tool answers first, then (if anything is left) one user message. */
function userMessages(blocks: MessagesContentBlock[], where: string): ChatMessage[] {
  const toolMessages: ChatMessage[] = [];
  const parts: ContentPart[] = [];
  blocks.forEach((block, j) => {
    const at = `${where}.content.${j}`;
    if (block.type === 'tool_result') {
      const result = block as MessagesToolResultBlock;
      const { text, files } = toolResultContent(result, at);
      // a chat tool message has no error flag: without the mark the model takes a failed call for a
      // result whenever the tool's text does not say it failed
      toolMessages.push({ role: 'tool', tool_call_id: result.tool_use_id, content: result.is_error === true ? errorText(text) : text });
      // a chat tool message holds text only: images and PDFs follow in the user message
      parts.push(...files);
    } else if (block.type === 'text') parts.push({ type: 'text', text: (block as MessagesTextBlock).text });
    else if (block.type === 'image') parts.push(imagePart(block as MessagesImageBlock, at));
    else if (block.type === 'document') parts.push(documentPart(block, at));
    else if (!isThinkingBlock(block)) unsupportedBlock(block, at);
  });
  const out = [...toolMessages];
  if (parts.length > 0 || toolMessages.length === 0) out.push({ role: 'user', content: parts });
  return out;
}

function toolResultContent(result: MessagesToolResultBlock, at: string): { text: string; files: ContentPart[] } {
  const content = result.content;
  if (content === undefined || content === null) return { text: '', files: [] };
  if (typeof content === 'string') return { text: content, files: [] };
  // the request schema checks a message's blocks, not what a tool_result holds: checked here, as the API would
  if (!Array.isArray(content)) throw invalidToolResult(`${at}.content`, 'Input should be a valid string or a list of content blocks');
  const texts: string[] = [];
  const files: ContentPart[] = [];
  content.forEach((item: unknown, k) => {
    if (item === null || typeof item !== 'object' || typeof (item as { type?: unknown }).type !== 'string') throw invalidToolResult(`${at}.content.${k}`, 'Input should be a content block with a type');
    const block = item as { type: string };
    if (block.type === 'text') {
      // as a message's own text blocks are (request-schema.ts): joined, an object with its own toString threw (a 500)
      const text = (block as MessagesTextBlock).text;
      if (typeof text !== 'string') throw invalidToolResult(`${at}.content.${k}.text`, 'Input should be a valid string');
      texts.push(text);
    } else if (block.type === 'image') files.push(imagePart(block as MessagesImageBlock, `${at}.content.${k}`));
    else if (block.type === 'document') {
      // a tool may return a document (Claude Code's Read of a PDF), as a user turn may hold one
      const part = documentPart(block, `${at}.content.${k}`);
      if (part.type === 'text') texts.push((part as { text: string }).text);
      else files.push(part);
    } else unsupportedBlock(block, `${at}.content.${k}`);
  });
  return { text: texts.join('\n'), files };
}

/** A failed tool's answer, as the model reads it in a chat tool message. */
function errorText(text: string): string {
  return text === '' ? 'Error' : `Error: ${text}`;
}

function invalidToolResult(param: string, message: string): InvalidRequestError {
  return new InvalidRequestError(`${param}: ${message}`, 'invalid_request', { param });
}

function imagePart(block: MessagesImageBlock, at: string): ContentPart {
  const source = block.source as Record<string, unknown> | undefined;
  if (source?.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') {
    return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  }
  if (source?.type === 'url' && typeof source.url === 'string') return { type: 'image_url', image_url: { url: source.url } };
  throw new InvalidRequestError(`${at}.source: an image needs a base64 or url source`, 'invalid_request', { param: `${at}.source` });
}

/** A document chat can carry: a base64 PDF as a `file` part (what OpenAI's models read), plain text as text. */
function documentPart(block: { type: string; [extra: string]: unknown }, at: string): ContentPart {
  const source = block.source as Record<string, unknown> | undefined;
  const title = typeof block.title === 'string' && block.title !== '' ? block.title : undefined;
  if (source?.type === 'base64' && source.media_type === 'application/pdf' && typeof source.data === 'string') {
    return { type: 'file', file: { ...(title ? { filename: title } : {}), file_data: `data:application/pdf;base64,${source.data}` } };
  }
  if (source?.type === 'text' && typeof source.data === 'string') return { type: 'text', text: title ? `${title}\n\n${source.data}` : source.data };
  return unsupportedBlock(block, at);
}

function unsupportedBlock(block: { type: string }, at: string): never {
  throw new InvalidRequestError(
    `${at}: content blocks of type ${JSON.stringify(clientText(block?.type))} are supported only for Anthropic models`,
    'unsupported_content',
    { param: at },
  );
}

function chatTool(tool: MessagesTool, i: number): ChatTool {
  if (tool.type !== undefined && tool.type !== 'custom') {
    throw new InvalidRequestError(`tools.${i}: server tools ("${clientText(tool.type)}") are supported only for Anthropic models`, 'unsupported_tool', {
      param: `tools.${i}`,
    });
  }
  const fn: NonNullable<ChatTool['function']> = { name: tool.name };
  if (tool.description !== undefined) fn.description = tool.description;
  fn.parameters = tool.input_schema ?? { type: 'object', properties: {} };
  return { type: 'function', function: fn };
}

/** `thinking` -> the chat effort: an enabled budget maps to the nearest effort; disabled or adaptive to none. */
function reasoningEffortOfThinking(thinking: unknown): string | undefined {
  if (thinking === undefined || thinking === null) return undefined;
  const type = (thinking as { type?: unknown }).type;
  if (type === 'disabled' || type === 'adaptive') return undefined;
  const budget = (thinking as { budget_tokens?: unknown }).budget_tokens;
  if (type === 'enabled' && typeof budget === 'number' && Number.isFinite(budget)) return effortOfBudget(budget);
  throw new InvalidRequestError('thinking: must be {type: "enabled", budget_tokens}, {type: "adaptive"} or {type: "disabled"}', 'invalid_request', { param: 'thinking' });
}

function chatToolChoice(choice: MessagesRequest['tool_choice']): Partial<ChatRequest> {
  const out: Partial<ChatRequest> = {};
  switch (choice?.type) {
    case 'auto':
      out.tool_choice = 'auto';
      break;
    case 'any':
      out.tool_choice = 'required';
      break;
    case 'none':
      out.tool_choice = 'none';
      break;
    case 'tool':
      out.tool_choice = { type: 'function', function: { name: (choice as { name: string }).name } };
      break;
    default:
      throw new InvalidRequestError('tool_choice.type: must be one of auto, any, tool, none', 'invalid_request', { param: 'tool_choice.type' });
  }
  if (choice.disable_parallel_tool_use === true) out.parallel_tool_calls = false;
  return out;
}
