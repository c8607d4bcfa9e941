/**
 * The parts of a Responses request that map onto every chat round: sampling parameters, the output cap,
 * `text.format` -> `response_format`, `text.verbosity` -> `verbosity`, client function tools and `tool_choice`. Messages and the MCP tools
 * are added per round by the tool loop.
 */
import { InvalidRequestError } from '../../errors/gateway-error';
import type { ChatMessage, ChatRequest, ChatTool } from '../../types/chat';
import type { FunctionToolEntry, ResponsesRequest } from './responses-types';
import { clientText } from '../../formats/client-text';

/** A chat request still without its messages. */
export type ChatTemplate = Partial<ChatRequest> & { model: string };

/** Responses parameters with the same meaning in chat completions, copied as they are. */
const SAME_NAME = ['temperature', 'top_p', 'user', 'parallel_tool_calls', 'service_tier', 'prompt_cache_key', 'prompt_cache_retention', 'safety_identifier', 'top_logprobs'] as const;

/**
 * Fields that name what OpenAI keeps on its own servers, which no upstream behind the gateway can read:
 * dropped, the model would answer without the prompt or the history the client meant it to have.
 */
const HOSTED_STATE = [
  ['prompt', 'prompt templates stored at OpenAI are not supported by this gateway; send the prompt as instructions.'],
  ['conversation', 'conversations stored at OpenAI are not supported by this gateway; continue with previous_response_id or send the conversation as input.'],
] as const;

export function chatTemplate(request: ResponsesRequest): ChatTemplate {
  for (const [name, why] of HOSTED_STATE) {
    if (request[name] !== undefined && request[name] !== null) throw new InvalidRequestError(`${name}: ${why}`, 'unsupported_parameter', { param: name });
  }
  const chat: ChatTemplate = { model: request.model };
  for (const name of SAME_NAME) if (request[name] !== undefined && request[name] !== null) (chat as Record<string, unknown>)[name] = request[name];
  // OpenAI returns the output text's logprobs when `include` asks for them, with or without top_logprobs
  const include = Array.isArray(request.include) ? request.include : [];
  if (typeof request.top_logprobs === 'number' || include.includes('message.output_text.logprobs')) chat.logprobs = true;
  if (typeof request.max_output_tokens === 'number') chat.max_tokens = request.max_output_tokens;
  const effort = (request.reasoning as { effort?: unknown } | undefined)?.effort;
  if (typeof effort === 'string') chat.reasoning_effort = effort;
  const responseFormat = responseFormatOf(request.text?.format);
  if (responseFormat) chat.response_format = responseFormat;
  // gpt-5's answer length (the AI SDK's textVerbosity, the Agents SDK's text.verbosity): chat has it at the top level
  const verbosity = request.text?.verbosity;
  if (typeof verbosity === 'string') (chat as Record<string, unknown>).verbosity = verbosity;
  const allowed = allowedToolsOf(request.tool_choice);
  const functions = functionTools(request).filter((t) => !allowed || allowed.functions.has(t.function!.name));
  if (functions.length > 0) chat.tools = functions;
  if (request.tool_choice !== undefined && request.tool_choice !== null) chat.tool_choice = toolChoiceOf(request.tool_choice);
  return chat;
}

/** `instructions` lead the conversation as a system message. */
export function instructionMessages(request: ResponsesRequest): ChatMessage[] {
  return typeof request.instructions === 'string' && request.instructions.length > 0 ? [{ role: 'system', content: request.instructions }] : [];
}

function responseFormatOf(format: { type: string; [extra: string]: unknown } | undefined): unknown {
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema') {
    // checked here, under the names this client sent (as OpenAI checks them): left to the chat translation,
    // the 400 named `response_format.json_schema`, a field a Responses client never sent
    for (const field of ['name', 'schema'] as const) {
      const value = Object.hasOwn(format, field) ? format[field] : undefined;
      const present = field === 'name' ? typeof value === 'string' && value.length > 0 : typeof value === 'object' && value !== null && !Array.isArray(value);
      if (!present) throw new InvalidRequestError(`Missing required parameter: 'text.format.${field}'.`, 'missing_required_parameter', { param: `text.format.${field}` });
    }
    const { type: _type, ...schema } = format;
    return { type: 'json_schema', json_schema: schema };
  }
  throw new InvalidRequestError(`text.format.type ${JSON.stringify(clientText(format.type))} is not supported; use text, json_object or json_schema.`, 'unsupported_value', { param: 'text.format.type' });
}

function functionTools(request: ResponsesRequest): ChatTool[] {
  const tools: ChatTool[] = [];
  (request.tools ?? []).forEach((tool, i) => {
    if (tool.type === 'mcp') return;
    if (tool.type !== 'function') {
      throw new InvalidRequestError(`tools[${i}]: tools of type "${tool.type}" are not supported by this gateway; use function or mcp tools.`, 'unsupported_value', { param: `tools[${i}].type` });
    }
    const fn = tool as FunctionToolEntry;
    if (typeof fn.name !== 'string' || fn.name.length === 0) throw new InvalidRequestError(`tools[${i}]: a function tool needs a 'name'.`, 'missing_required_parameter', { param: `tools[${i}].name` });
    tools.push({
      type: 'function',
      function: {
        name: fn.name,
        ...(fn.description ? { description: fn.description } : {}),
        parameters: fn.parameters ?? { type: 'object', properties: {} },
        ...(typeof fn.strict === 'boolean' ? { strict: fn.strict } : {}),
      },
    });
  });
  return tools;
}

/** The tools an `allowed_tools` choice lets the model call: function names, and MCP servers (or one tool of one). */
export interface AllowedTools {
  functions: Set<string>;
  mcp: { serverLabel: unknown; name?: unknown }[];
}

/**
 * An `allowed_tools` choice (`{type: "allowed_tools", mode, tools: [...]}`, the AI SDK's allowedTools)
 * restricts what the model may call while the request still lists every tool; chat models behind the
 * gateway mostly have no such choice, so the model is offered only the allowed tools.
 */
export function allowedToolsOf(choice: unknown): AllowedTools | undefined {
  const c = choice as { type?: unknown; tools?: unknown } | null | undefined;
  if (c?.type !== 'allowed_tools') return undefined;
  if (!Array.isArray(c.tools)) throw new InvalidRequestError('tool_choice.tools: an allowed_tools choice needs a list of tools.', 'invalid_type', { param: 'tool_choice.tools' });
  const allowed: AllowedTools = { functions: new Set(), mcp: [] };
  for (const t of c.tools as { type?: unknown; name?: unknown; server_label?: unknown }[]) {
    if (t?.type === 'function' && typeof t.name === 'string') allowed.functions.add(t.name);
    else if (t?.type === 'mcp') allowed.mcp.push({ serverLabel: t.server_label, name: t.name });
  }
  return allowed;
}

function toolChoiceOf(choice: unknown): unknown {
  if (typeof choice === 'string') return choice;
  const c = choice as { type?: string; name?: string; mode?: unknown };
  if (c.type === 'function' && typeof c.name === 'string') return { type: 'function', function: { name: c.name } };
  if (c.type === 'allowed_tools') return c.mode === 'required' ? 'required' : 'auto';
  // An mcp choice is settled once the MCP tools are known (mcpToolChoice); hosted-tool choices
  // (web search...) have no chat equivalent: let the model choose.
  return 'auto';
}
