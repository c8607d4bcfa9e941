/**
 * The canonical chat format <-> the Anthropic Messages API, for chat-completions clients calling a
 * Claude model. Pure functions over data; golden files in test/fixtures/anthropic pin every mapping.
 *
 * Request choices a client can observe:
 * - system and developer messages, wherever they sit, are lifted into `system` (a string when there is
 *   one plain system message, text blocks otherwise, keeping any `cache_control` on a part);
 * - `max_tokens` is required upstream: max_completion_tokens, else max_tokens, else DEFAULT_MAX_TOKENS;
 * - `tool` messages become `tool_result` blocks in a user turn, consecutive ones in the same turn;
 * - `top_k` and `thinking` (Anthropic names with no chat meaning) are passed on when a client sends them;
 *   without `thinking`, `reasoning_effort` turns thinking on with a budget per effort (BUDGET_OF_EFFORT),
 *   and the default output cap grows by that budget; the sampling settings Anthropic refuses while
 *   thinking (temperature other than 1, top_k, top_p below 0.95) are then left out;
 * - `response_format` json_schema -> `output_config.format`; JSON mode without a schema is refused;
 * - an assistant message's `thinking_blocks` lead its content, signatures unchanged; in the answer,
 *   thinking blocks come back as `reasoning_content` (their text) and `thinking_blocks` (the blocks).
 */
import {
  BUDGET_OF_EFFORT,
  InvalidRequestError,
  isThinkingBlock,
  outputFormatOfResponseFormat,
  reasoningText,
  sniffImageType,
  thinkingBlockOf,
  thinkingBlocksOfContent,
  finishReasonFromStopReason,
  chatUsageFromMessagesUsage,
  type MessagesContentBlock,
  type MessagesImageBlock,
  type MessagesMessage,
  type MessagesRequest,
  type MessagesResponse,
  type MessagesTextBlock,
  type MessagesTool,
  type MessagesToolChoice,
  type MessagesToolUseBlock,
  type ChatMessage,
  type ChatRequest,
  type ChatResponse,
  type ChatTool,
  type ContentPart,
  type ToolCall,
} from '../../core/plugins/sdk';

export const DEFAULT_MAX_TOKENS = 4096;

/** Anthropic-only parameters a chat client may add; copied as they are. */
const NATIVE_PASSTHROUGH = ['top_k', 'thinking'] as const;

export function messagesRequestFromChat(request: ChatRequest, upstreamModel: string): MessagesRequest {
  if (!Array.isArray(request?.messages)) throw new InvalidRequestError('messages: field required', 'invalid_request', { param: 'messages' });
  if (typeof request.n === 'number' && request.n > 1) {
    throw new InvalidRequestError('n: Anthropic models return a single choice', 'unsupported_parameter', { param: 'n' });
  }

  const systemBlocks: MessagesTextBlock[] = [];
  const messages: MessagesMessage[] = [];
  request.messages.forEach((message, i) => {
    const where = `messages[${i}]`;
    switch (message?.role) {
      case 'system':
      case 'developer':
        systemBlocks.push(...systemBlocksOf(message, where));
        break;
      case 'user': {
        // a blank turn (a chat UI's empty send, a framework's placeholder), which OpenAI answers, Anthropic
        // refuses ("all messages must have non-empty content"): left out, as an empty assistant turn is
        const content = userContent(message.content, where);
        if (content.length > 0) messages.push({ role: 'user', content });
        break;
      }
      case 'assistant': {
        // an answer without a word (Claude's, at times, after a tool result) comes back as an empty turn,
        // which Anthropic refuses in the middle of a conversation; left out, nothing is lost
        const content = assistantContent(message, where);
        if (content.length > 0) messages.push({ role: 'assistant', content });
        break;
      }
      case 'tool':
        appendToolResult(messages, message, where);
        break;
      default:
        throw new InvalidRequestError(`${where}.role: unsupported role "${String(message?.role)}"`, 'invalid_request', { param: `${where}.role` });
    }
  });
  trimFinalAssistantText(messages);

  const cap = request.max_completion_tokens ?? request.max_tokens ?? undefined;
  // Anthropic refuses thinking with a forced tool ("Thinking may not be enabled when tool_choice forces
  // tool use"): the effort, a hint, gives way to the client's explicit choice of tool
  const forcesTool = request.tool_choice === 'required' || (typeof request.tool_choice === 'object' && request.tool_choice !== null);
  const thinking = request.thinking == null && !forcesTool && !continuesUnthoughtToolRound(messages) ? thinkingOfEffort(request.reasoning_effort, cap, upstreamModel) : undefined;
  // the default cap leaves the answer its room beside the budget, the client's own thinking's too (Anthropic
  // refuses a budget not below max_tokens); adaptive thinking counts in max_tokens as well
  const budget = thinking?.room ?? ownBudget(request.thinking);
  const body: MessagesRequest = {
    model: upstreamModel,
    max_tokens: cap ?? DEFAULT_MAX_TOKENS + budget,
    messages,
  };
  // a request that is only instructions (OpenAI takes one) is a prompt: Claude refuses one without
  // messages ("at least one message is required"), so the instructions go as the user's turn
  if (messages.length === 0 && systemBlocks.length > 0) messages.push({ role: 'user', content: systemBlocks.splice(0) });
  const system = systemField(systemBlocks);
  if (system !== undefined) body.system = system;
  // Recent Claude models refuse both at once ("`temperature` and `top_p` cannot both be specified"), and
  // chat clients often send OpenAI's default of one beside the one they mean: a default changes nothing
  const temperature = request.temperature ?? undefined;
  const topP = typeof request.top_p === 'number' ? request.top_p : undefined;
  if (temperature !== undefined && !(temperature === 1 && topP !== undefined && topP !== 1)) body.temperature = temperature;
  if (topP !== undefined && !(topP === 1 && temperature !== undefined)) body.top_p = topP;
  if (request.stop != null) {
    const stops = Array.isArray(request.stop) ? request.stop : [request.stop];
    if (stops.length > 0) body.stop_sequences = stops;
  }
  if (Array.isArray(request.tools) && request.tools.length > 0) body.tools = request.tools.map(messagesTool);
  const toolChoice = messagesToolChoice(request.tool_choice, request.parallel_tool_calls, body.tools !== undefined);
  if (toolChoice !== undefined) body.tool_choice = toolChoice;
  if (typeof request.user === 'string' && request.user !== '') body.metadata = { user_id: request.user };
  // null is "not set", as for every chat field; Anthropic refuses a null top_k or thinking (400)
  for (const name of NATIVE_PASSTHROUGH) if (request[name] != null) (body as Record<string, unknown>)[name] = request[name];
  if (thinking) {
    body.thinking = thinking.thinking;
    // Anthropic refuses, while thinking, a temperature other than 1, any top_k and a top_p below 0.95 (400).
    // The thinking is the gateway's reading of reasoning_effort: the client asked to reason, and chat
    // clients send sampling settings by habit, so the settings give way rather than the request failing
    if (body.temperature !== undefined && body.temperature !== 1) delete body.temperature;
    delete body.top_k;
    if (body.top_p !== undefined && body.top_p < 0.95) delete body.top_p;
  }
  const format = outputFormatOfResponseFormat(request.response_format);
  if (format || thinking?.effort) body.output_config = { ...(thinking?.effort ? { effort: thinking.effort } : {}), ...(format ? { format } : {}) };
  if (request.stream === true) body.stream = true;
  return body;
}

// ---------------------------------------------------------------------------------------------------
// request helpers
// ---------------------------------------------------------------------------------------------------

function systemBlocksOf(message: ChatMessage, where: string): MessagesTextBlock[] {
  const content = message.content;
  if (content === null || content === undefined || isBlank(content)) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  const blocks: MessagesTextBlock[] = [];
  content.forEach((part, j) => {
    if (part.type !== 'text') throw new InvalidRequestError(`${where}.content[${j}]: system messages may hold text only`, 'invalid_request', { param: `${where}.content[${j}]` });
    if (!isEmptyText(part)) blocks.push(textBlock(part as ContentPart & { text: string }));
  });
  return blocks;
}

/** One plain block is sent as a string; several blocks, or one with cache_control, as blocks. */
function systemField(blocks: MessagesTextBlock[]): MessagesRequest['system'] {
  if (blocks.length === 0) return undefined;
  if (blocks.length === 1 && blocks[0].cache_control === undefined) return blocks[0].text;
  return blocks;
}

function textBlock(part: { text: string; cache_control?: unknown }): MessagesTextBlock {
  const block: MessagesTextBlock = { type: 'text', text: part.text };
  if (part.cache_control !== undefined) block.cache_control = part.cache_control as MessagesTextBlock['cache_control'];
  return block;
}

function userContent(content: ChatMessage['content'], where: string): string | MessagesContentBlock[] {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return isBlank(content) ? '' : content;
  return contentBlocks(content, where);
}

/**
 * Content parts as blocks, without empty text parts: Anthropic refuses an empty text block ("text content
 * blocks must be non-empty") where chat APIs take one, and chat clients send them (an image without a
 * caption, a tool that printed nothing). A block of only whitespace is refused too ("text content blocks
 * must contain non-whitespace text"): models answer "\n\n" before a tool call, and clients pass it back.
 */
function contentBlocks(parts: ContentPart[], where: string): MessagesContentBlock[] {
  const blocks: MessagesContentBlock[] = [];
  parts.forEach((part, j) => {
    if (!isEmptyText(part)) blocks.push(contentBlock(part, `${where}.content[${j}]`));
  });
  return blocks;
}

function isEmptyText(part: ContentPart): boolean {
  return part?.type === 'text' && isBlank((part as { text?: unknown }).text);
}

/** Text that says nothing to Anthropic, empty or only whitespace, which it refuses as a text block. */
function isBlank(text: unknown): boolean {
  return typeof text === 'string' && text.trim() === '';
}

function contentBlock(part: ContentPart, at: string): MessagesContentBlock {
  if (part.type === 'text') return textBlock(part as ContentPart & { text: string });
  if (part.type === 'image_url') return imageBlock(part as ContentPart & { image_url: { url: string } }, at);
  if (part.type === 'file') return documentBlock(part as ContentPart & { file?: { file_data?: unknown; filename?: unknown } }, at);
  throw new InvalidRequestError(`${at}: content parts of type "${part.type}" are not supported for Anthropic models`, 'unsupported_content', { param: at });
}

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

/**
 * A chat file part (what the openai SDK and the AI SDK send for a PDF) as the document block Claude reads
 * PDFs from; a file by id lives in OpenAI's file store, which Anthropic cannot read.
 */
function documentBlock(part: { file?: { file_data?: unknown; filename?: unknown }; cache_control?: unknown }, at: string): MessagesContentBlock {
  const data = typeof part.file?.file_data === 'string' ? DATA_URL.exec(part.file.file_data) : null;
  if (!data || data[1] !== 'application/pdf') {
    throw new InvalidRequestError(`${at}.file: Anthropic models take files as PDF data (file_data as a base64 data:application/pdf URL)`, 'unsupported_content', { param: `${at}.file` });
  }
  return {
    type: 'document',
    source: { type: 'base64', media_type: 'application/pdf', data: data[2] },
    ...(typeof part.file?.filename === 'string' && part.file.filename !== '' ? { title: part.file.filename } : {}),
    ...(part.cache_control !== undefined ? { cache_control: part.cache_control } : {}),
  };
}

function imageBlock(part: { image_url: { url: string }; cache_control?: unknown }, at: string): MessagesImageBlock {
  const url = part.image_url?.url;
  if (typeof url !== 'string') throw new InvalidRequestError(`${at}.image_url.url: field required`, 'invalid_request', { param: `${at}.image_url.url` });
  const data = DATA_URL.exec(url);
  let block: MessagesImageBlock;
  if (data) block = { type: 'image', source: { type: 'base64', media_type: imageTypeOfBytes(data[2]) ?? data[1], data: data[2] } };
  else if (/^https?:\/\//i.test(url)) block = { type: 'image', source: { type: 'url', url } };
  else throw new InvalidRequestError(`${at}.image_url.url: must be an http(s) URL or a base64 data: URL`, 'invalid_request', { param: `${at}.image_url.url` });
  if (part.cache_control !== undefined) block.cache_control = part.cache_control as MessagesImageBlock['cache_control'];
  return block;
}

/**
 * The type an image's first bytes say it is. Anthropic refuses an image whose declared type is not its
 * bytes' ("specified using the image/png media type, but the image appears to be a image/jpeg image"), and
 * a name it does not know (image/jpg); OpenAI reads the bytes, so chat clients send data URLs named after
 * a file's extension.
 */
function imageTypeOfBytes(base64: string): string | undefined {
  return sniffImageType(Buffer.from(base64.slice(0, 16), 'base64'));
}

/**
 * Does the request continue a tool round whose assistant turn does not start with a thinking block? With
 * thinking on, Anthropic refuses it ("a final `assistant` message must start with a thinking block ... To
 * avoid this requirement, disable `thinking`"), and clients that keep only a message's standard fields
 * (LangChain's ChatOpenAI) pass tool calls back so; the effort, a hint, gives way for that round.
 */
function continuesUnthoughtToolRound(messages: MessagesMessage[]): boolean {
  let at = messages.length - 1;
  let toolResults = false;
  for (; at >= 0 && messages[at].role === 'user'; at--) {
    const content = messages[at].content;
    if (Array.isArray(content) && content.some((b) => b.type === 'tool_result')) toolResults = true;
  }
  const turn = messages[at]?.content;
  if (!toolResults || !Array.isArray(turn) || !turn.some((b) => b.type === 'tool_use')) return false;
  return !isThinkingBlock(turn[0]);
}

/** The budget of a `thinking` setting a client sends itself (0 when it sets none). */
export function ownBudget(thinking: unknown): number {
  const own = thinking as { type?: unknown; budget_tokens?: unknown } | null | undefined;
  const budget = own?.budget_tokens;
  return own?.type === 'enabled' && typeof budget === 'number' && Number.isFinite(budget) && budget > 0 ? budget : 0;
}

/** Anthropic's smallest thinking budget. */
const MIN_THINKING_BUDGET = 1024;

/** What a chat effort turns on upstream, and the room it needs beside the answer under the default cap. */
export interface EffortThinking {
  thinking: { type: 'enabled'; budget_tokens: number } | { type: 'adaptive'; display: 'summarized' };
  /** `output_config.effort`, for adaptive thinking */
  effort?: string;
  room: number;
}

/**
 * `reasoning_effort` -> thinking; `none` (or an effort Anthropic has no budget for) leaves thinking off.
 * A model that takes only adaptive thinking gets it with the effort (`minimal`, which Anthropic lacks, as
 * `low`) and `display: "summarized"`, since those models omit the thinking text by default and the client
 * asked to see it as `reasoning_content`. Otherwise a budget: a client's own cap counts the reasoning in
 * it (OpenAI's max_completion_tokens does), and Anthropic refuses a budget that is not below max_tokens:
 * the budget shrinks to fit, and a cap too small for the smallest budget leaves thinking off.
 */
export function thinkingOfEffort(effort: unknown, cap: number | undefined, upstreamModel: string): EffortThinking | undefined {
  const wanted = typeof effort === 'string' ? BUDGET_OF_EFFORT.get(effort) : undefined;
  if (wanted === undefined) return undefined;
  if (takesOnlyAdaptiveThinking(upstreamModel)) {
    return { thinking: { type: 'adaptive', display: 'summarized' }, effort: effort === 'minimal' ? 'low' : (effort as string), room: wanted };
  }
  const budget = cap === undefined ? wanted : Math.min(wanted, cap - 1);
  return budget < MIN_THINKING_BUDGET ? undefined : { thinking: { type: 'enabled', budget_tokens: budget }, room: budget };
}

/**
 * Does this Claude model refuse `thinking: {type: "enabled", budget_tokens}` ("thinking.type.enabled is not
 * supported for this model")? Those Anthropic documents so (Claude Opus 4.7, the Mythos and Fable
 * families) and the ones after them (later Opus 4 releases, every Claude 5 model and on), which all take
 * adaptive thinking, so it is the safe choice for them. The id may carry a cloud's decorations: Bedrock's
 * `us.anthropic.` prefix and `-v1:0` suffix, Vertex AI's `@date`.
 */
export function takesOnlyAdaptiveThinking(model: string): boolean {
  const id = /(?:^|\.)claude-([a-z]+)(?:-(\d+)(?:-(\d{1,2})(?!\d))?)?/.exec(model.toLowerCase());
  if (!id) return false;
  const [, family, major, minor] = id;
  if (family === 'mythos' || family === 'fable') return true;
  if (major === undefined) return false;
  return Number(major) >= 5 || (family === 'opus' && Number(major) === 4 && Number(minor ?? 0) >= 7);
}

function assistantContent(message: ChatMessage, where: string): string | MessagesContentBlock[] {
  const calls = message.tool_calls ?? [];
  // thinking blocks passed back lead the turn, as the model wrote them, signatures unchanged
  const thinking = Array.isArray(message.thinking_blocks) ? message.thinking_blocks.filter(isThinkingBlock).map(thinkingBlockOf) : [];
  if (calls.length === 0 && thinking.length === 0 && (typeof message.content === 'string' || message.content == null)) return isBlank(message.content) ? '' : (message.content ?? '');
  const blocks: MessagesContentBlock[] = [...thinking];
  if (typeof message.content === 'string') {
    if (!isBlank(message.content)) blocks.push({ type: 'text', text: message.content });
  } else if (Array.isArray(message.content)) {
    blocks.push(...contentBlocks(message.content, where));
  }
  calls.forEach((call, j) => blocks.push(toolUseBlock(call, `${where}.tool_calls[${j}]`)));
  return blocks;
}

function toolUseBlock(call: ToolCall, at: string): MessagesToolUseBlock {
  const args: unknown = call.function?.arguments;
  let input: unknown = {};
  if (typeof args === 'string' && args.trim() !== '') {
    try {
      input = JSON.parse(args);
    } catch {
      input = undefined;
    }
    // Anthropic takes only an object as a tool_use's input ("Input should be a valid dictionary"): JSON
    // text of an array, a number or null is refused here, as text that is not JSON is, before any upstream
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      throw new InvalidRequestError(`${at}.function.arguments: must be a JSON object`, 'invalid_request', { param: `${at}.function.arguments` });
    }
  } else if (typeof args === 'object' && args !== null && !Array.isArray(args)) {
    // arguments sent as the object itself, not its JSON text (the chat endpoint takes them, and the
    // guardrails read them, so): they are the input, where they had become an empty one
    input = args;
  }
  return { type: 'tool_use', id: anthropicToolId(call.id), name: call.function?.name, input };
}

/**
 * Anthropic takes tool ids of `[a-zA-Z0-9_-]` only; a conversation may hold ids other models made (Kimi's
 * `functions.name:0`, a Gemini id carrying a base64 thought signature). The same id always maps to the
 * same replacement, so a call and its result still match.
 */
function anthropicToolId(id: string): string {
  return typeof id === 'string' ? id.replace(/[^a-zA-Z0-9_-]/g, '_') : id;
}

/**
 * A conversation that ends with the assistant's words (a prefill, which Claude continues) is refused when
 * they end in whitespace ("final assistant content cannot end with trailing whitespace"), where OpenAI
 * answers it: the trailing whitespace of that last text is left out.
 */
function trimFinalAssistantText(messages: MessagesMessage[]): void {
  const last = messages[messages.length - 1];
  if (last?.role !== 'assistant') return;
  if (typeof last.content === 'string') {
    last.content = last.content.trimEnd();
    return;
  }
  const block = last.content[last.content.length - 1];
  if (block?.type === 'text') (block as MessagesTextBlock).text = (block as MessagesTextBlock).text.trimEnd();
}

/** A tool answer joins the user turn of tool results just before it, or starts one. */
function appendToolResult(messages: MessagesMessage[], message: ChatMessage, where: string): void {
  if (typeof message.tool_call_id !== 'string') {
    throw new InvalidRequestError(`${where}.tool_call_id: field required`, 'invalid_request', { param: `${where}.tool_call_id` });
  }
  const content = message.content;
  const result: MessagesContentBlock = {
    type: 'tool_result',
    tool_use_id: anthropicToolId(message.tool_call_id),
    content: content == null ? '' : typeof content === 'string' ? content : contentBlocks(content, where),
  };
  const last = messages[messages.length - 1];
  if (last?.role === 'user' && Array.isArray(last.content) && last.content.length > 0 && last.content.every((b) => b.type === 'tool_result')) {
    last.content.push(result);
  } else {
    messages.push({ role: 'user', content: [result] });
  }
}

function messagesTool(tool: ChatTool, i: number): MessagesTool {
  if (tool?.type !== 'function' || !tool.function?.name) {
    throw new InvalidRequestError(`tools[${i}]: only function tools are supported for Anthropic models`, 'unsupported_tool', { param: `tools[${i}]` });
  }
  const out: MessagesTool = { name: tool.function.name };
  if (tool.function.description !== undefined) out.description = tool.function.description;
  out.input_schema = tool.function.parameters ?? { type: 'object', properties: {} };
  return out;
}

function messagesToolChoice(choice: unknown, parallel: unknown, hasTools: boolean): MessagesToolChoice | undefined {
  let out: MessagesToolChoice | undefined;
  if (choice === 'auto') out = { type: 'auto' };
  else if (choice === 'none') out = { type: 'none' };
  else if (choice === 'required') out = { type: 'any' };
  else if (choice && typeof choice === 'object') {
    const name = (choice as { function?: { name?: unknown } }).function?.name;
    if ((choice as { type?: unknown }).type !== 'function' || typeof name !== 'string') {
      throw new InvalidRequestError('tool_choice: must be "auto", "none", "required" or a named function', 'invalid_request', { param: 'tool_choice' });
    }
    out = { type: 'tool', name };
  } else if (choice !== undefined && choice !== null) {
    throw new InvalidRequestError('tool_choice: must be "auto", "none", "required" or a named function', 'invalid_request', { param: 'tool_choice' });
  }
  if (parallel === false && hasTools && out?.type !== 'none') {
    out = { ...(out ?? { type: 'auto' }), disable_parallel_tool_use: true } as MessagesToolChoice;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// response
// ---------------------------------------------------------------------------------------------------

/** An Anthropic Message -> `chat.completion`. `created` is injected (seconds since the epoch). */
export function chatResponseFromMessages(body: MessagesResponse, created: number): ChatResponse {
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const block of body.content ?? []) {
    if (block.type === 'text') texts.push((block as MessagesTextBlock).text);
    else if (block.type === 'tool_use') {
      const use = block as MessagesToolUseBlock;
      toolCalls.push({ id: use.id, type: 'function', function: { name: use.name, arguments: JSON.stringify(use.input ?? {}) } });
    }
    // server-tool blocks have no place in a chat message
  }
  const message: ChatResponse['choices'][number]['message'] = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('') : toolCalls.length > 0 ? null : '',
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const thinking = thinkingBlocksOfContent(body.content ?? []);
  if (thinking.length > 0) {
    message.reasoning_content = reasoningText(thinking) ?? '';
    message.thinking_blocks = thinking;
  }
  return {
    id: body.id,
    object: 'chat.completion',
    created,
    model: body.model,
    choices: [{ index: 0, message, finish_reason: finishReasonFromStopReason(body.stop_reason) ?? 'stop', logprobs: null, ...matchedStopSequence(body.stop_reason, body.stop_sequence) }],
    usage: chatUsageFromMessagesUsage(body.usage),
  };
}

/**
 * The stop sequence that ended Claude's answer, as the choice's `stop_reason` (vLLM's field for the string
 * it matched, which the Messages translation reads): a Messages client served through this translation
 * (Claude on Vertex AI) gets `stop_reason: "stop_sequence"` and the sequence back, not `end_turn`.
 */
export function matchedStopSequence(stopReason: unknown, stopSequence: unknown): { stop_reason?: string } {
  return stopReason === 'stop_sequence' && typeof stopSequence === 'string' ? { stop_reason: stopSequence } : {};
}
