/**
 * A chat-completions request -> a Bedrock Converse body. Pure; golden files in test/fixtures/bedrock.
 *
 * Choices a client can observe:
 * - system and developer messages become `system` text blocks;
 * - images must travel as bytes (Converse takes no URLs): a base64 data: URL is required;
 * - a `file` part holding a PDF becomes a `document` block, named after its file in the characters Converse
 *   takes, each name once in the request (Converse refuses duplicate document names);
 * - `cache_control` on a text part (Anthropic's prompt-caching marker, which chat clients of Claude use)
 *   becomes a Converse `cachePoint` right after that block;
 * - tool answers are `toolResult` blocks in a user turn, consecutive ones in one turn; a JSON object
 *   answer is sent as `json`, anything else as `text`;
 * - Converse has no "none" tool choice: with `tool_choice: "none"` the tools are left out, unless the
 *   conversation already holds tool calls (Bedrock then requires the tool list), where they stay;
 * - a conversation that starts with the assistant (a chat UI's greeting) gets a minimal user turn,
 *   OPENING_TURN, before it: Converse refuses one that does not start with the user, where Claude's own
 *   API takes it as it is;
 * - `top_k` has no Converse field: it goes in additionalModelRequestFields (the model's native name);
 * - Claude's thinking has none either: a chat client's `thinking` (Anthropic's own field), or the thinking
 *   `reasoning_effort` turns on as for the anthropic provider (what a Messages client's `thinking` arrives
 *   as), goes in additionalModelRequestFields; thinking blocks passed back become `reasoningContent`
 *   blocks leading their turn, as Claude requires them in a tool round. Other models refuse
 *   `reasoning_effort` rather than have it silently dropped.
 */
import { createHash } from 'node:crypto';
import { InvalidRequestError, sniffImageType, type ChatMessage, type ChatRequest, type ChatTool, type ContentPart, type ThinkingBlock } from '../../core/plugins/sdk';
import { DEFAULT_MAX_TOKENS, ownBudget, thinkingOfEffort } from '../anthropic/translate';
import type { ConverseBlock, ConverseImageFormat, ConverseMessage, ConverseRequest, ConverseToolChoice, ConverseToolSpec } from './wire';

export function converseRequestFromChat(request: ChatRequest, upstreamModel?: string): ConverseRequest {
  if (!Array.isArray(request?.messages)) throw new InvalidRequestError('messages: field required', 'invalid_request', { param: 'messages' });
  if (typeof request.n === 'number' && request.n > 1) throw new InvalidRequestError('n: Bedrock models return a single choice', 'unsupported_parameter', { param: 'n' });
  const claude = upstreamModel !== undefined && CLAUDE.test(upstreamModel);
  if (request.reasoning_effort != null && !claude) throw new InvalidRequestError('reasoning_effort: not supported for this Bedrock model', 'unsupported_parameter', { param: 'reasoning_effort' });

  const system: NonNullable<ConverseRequest['system']> = [];
  const messages: ConverseMessage[] = [];
  request.messages.forEach((message, i) => {
    const where = `messages[${i}]`;
    switch (message?.role) {
      case 'system':
      case 'developer':
        system.push(...(systemBlocks(message.content, where) as NonNullable<ConverseRequest['system']>));
        break;
      case 'user':
        push(messages, 'user', contentBlocks(message.content, where));
        break;
      case 'assistant':
        push(messages, 'assistant', assistantBlocks(message, where, claude));
        break;
      case 'tool':
        push(messages, 'user', [toolResult(message, where)]);
        break;
      default:
        throw new InvalidRequestError(`${where}.role: unsupported role "${String(message?.role)}"`, 'invalid_request', { param: `${where}.role` });
    }
  });

  nameDocumentsOnce(messages);
  // Claude refuses a conversation ending with the assistant's words (a prefill) that end in whitespace ("final
  // assistant content cannot end with trailing whitespace"), where OpenAI answers it
  if (claude) trimFinalAssistantText(messages);
  // "A conversation must start with a user message": the greeting stays the model's own earlier turn
  if (messages[0]?.role === 'assistant') messages.unshift({ role: 'user', content: [{ text: OPENING_TURN }] });
  // a request that is only instructions (OpenAI takes one) is a prompt: Converse refuses one without
  // messages, so the instructions go as the user's turn
  if (messages.length === 0 && system.length > 0) messages.push({ role: 'user', content: system.splice(0) as ConverseBlock[] });
  const body: ConverseRequest = { messages };
  if (system.length > 0) body.system = system;
  const inference: NonNullable<ConverseRequest['inferenceConfig']> = {};
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (typeof maxTokens === 'number') inference.maxTokens = maxTokens;
  if (typeof request.temperature === 'number') inference.temperature = request.temperature;
  if (typeof request.top_p === 'number') inference.topP = request.top_p;
  if (claude) leaveOutSamplingDefault(inference);
  if (request.stop != null) {
    const stops = Array.isArray(request.stop) ? request.stop : [request.stop];
    if (stops.length > 0) inference.stopSequences = stops;
  }
  // Converse says only that a stop sequence ended the answer; Claude names which when asked (usage.ts)
  if (claude && inference.stopSequences) body.additionalModelResponseFieldPaths = ['/stop_sequence'];
  const toolConfig = toolConfigOf(request, messages);
  if (toolConfig) body.toolConfig = toolConfig;
  if (request.response_format != null && (request.response_format as { type?: unknown }).type !== 'text') {
    throw new InvalidRequestError('response_format: Bedrock Converse has no JSON output mode; describe the JSON in the prompt or use a tool', 'unsupported_parameter', { param: 'response_format' });
  }
  const extra: Record<string, unknown> = {};
  if (typeof request.top_k === 'number') extra.top_k = request.top_k;
  if (claude) claudeThinking(request, body, inference, extra, upstreamModel!);
  if (Object.keys(inference).length > 0) body.inferenceConfig = inference;
  if (Object.keys(extra).length > 0) body.additionalModelRequestFields = extra;
  return body;
}

/**
 * Claude's thinking, in the fields Claude on Bedrock reads it from (additionalModelRequestFields, its own
 * Messages names). The effort gives way where Anthropic refuses thinking: a forced tool, a tool round
 * passed back without the thinking that began it. While thinking from an effort, the sampling settings
 * Claude refuses beside it (temperature other than 1, top_k, top_p below 0.95) are left out, as the
 * anthropic provider does.
 */
function claudeThinking(request: ChatRequest, body: ConverseRequest, inference: NonNullable<ConverseRequest['inferenceConfig']>, extra: Record<string, unknown>, model: string): void {
  if (request.thinking != null) {
    extra.thinking = request.thinking;
    // Claude refuses a budget not below max_tokens: the default cap leaves the answer its room
    const budget = ownBudget(request.thinking);
    if (inference.maxTokens === undefined && budget > 0) inference.maxTokens = DEFAULT_MAX_TOKENS + budget;
    return;
  }
  const forcesTool = body.toolConfig?.toolChoice !== undefined && !('auto' in body.toolConfig.toolChoice);
  if (forcesTool || continuesUnthoughtToolRound(body.messages)) return;
  const thinking = thinkingOfEffort(request.reasoning_effort, inference.maxTokens, model);
  if (!thinking) return;
  extra.thinking = thinking.thinking;
  if (thinking.effort) extra.output_config = { effort: thinking.effort };
  if (inference.maxTokens === undefined) inference.maxTokens = DEFAULT_MAX_TOKENS + thinking.room;
  if (inference.temperature !== undefined && inference.temperature !== 1) delete inference.temperature;
  if (inference.topP !== undefined && inference.topP < 0.95) delete inference.topP;
  delete extra.top_k;
}

/** Does the request continue a tool round whose assistant turn does not start with reasoning? */
function continuesUnthoughtToolRound(messages: ConverseMessage[]): boolean {
  let at = messages.length - 1;
  let toolResults = false;
  for (; at >= 0 && messages[at].role === 'user'; at--) if (messages[at].content.some((b) => 'toolResult' in b)) toolResults = true;
  const turn = messages[at]?.content;
  if (!toolResults || !turn?.some((b) => 'toolUse' in b)) return false;
  return !('reasoningContent' in turn[0]);
}

/** Claude's Bedrock ids, inference profiles (`us.anthropic.claude-...`) and ARNs naming one. */
const CLAUDE = /anthropic\.claude/i;

/**
 * Recent Claude models refuse `temperature` and `top_p` together ("cannot both be specified for this
 * model"), and chat clients often send OpenAI's default of one beside the one they mean: for Claude that
 * default (1) changes nothing, so it is left out, as the anthropic provider does. Other Bedrock models
 * keep both, as their own defaults are not 1 (Llama's top_p is 0.9).
 */
function leaveOutSamplingDefault(inference: NonNullable<ConverseRequest['inferenceConfig']>): void {
  const { temperature, topP } = inference;
  if (temperature === undefined || topP === undefined) return;
  if (topP === 1) delete inference.topP;
  else if (temperature === 1) delete inference.temperature;
}

/** The user turn before an assistant's opening: Converse refuses blank text, so it says as little as it can. */
export const OPENING_TURN = '(conversation start)';

/** The trailing whitespace of the last text of a last assistant turn (past its cache point, if it has one). */
function trimFinalAssistantText(messages: ConverseMessage[]): void {
  const last = messages[messages.length - 1];
  if (last?.role !== 'assistant') return;
  const block = last.content.findLast((b) => !('cachePoint' in b));
  if (block && 'text' in block) block.text = block.text.trimEnd();
}

function push(messages: ConverseMessage[], role: ConverseMessage['role'], content: ConverseBlock[]): void {
  if (content.length === 0) return;
  const last = messages[messages.length - 1];
  if (last?.role === role) last.content.push(...content);
  else messages.push({ role, content });
}

/**
 * Converse refuses a text block that is empty or only whitespace ("The text field in the ContentBlock
 * object at messages.N.content.M is blank"), where OpenAI takes one: it says nothing, so it is left out.
 */
function isBlank(text: unknown): boolean {
  return typeof text === 'string' && text.trim() === '';
}

function systemBlocks(content: ChatMessage['content'], where: string): ConverseBlock[] {
  if (content == null || isBlank(content)) return [];
  if (typeof content === 'string') return [{ text: content }];
  return content.flatMap((part, j) => {
    if (part.type !== 'text') throw new InvalidRequestError(`${where}.content[${j}]: system messages may hold text only`, 'invalid_request', { param: `${where}.content[${j}]` });
    if (isBlank((part as { text: string }).text)) return [];
    return withCachePoint({ text: (part as { text: string }).text }, part);
  });
}

function contentBlocks(content: ChatMessage['content'], where: string): ConverseBlock[] {
  if (content == null || isBlank(content)) return [];
  if (typeof content === 'string') return [{ text: content }];
  return content.flatMap((part, j) => {
    if (part.type === 'text' && isBlank((part as { text: string }).text)) return [];
    return withCachePoint(contentBlock(part, `${where}.content[${j}]`), part);
  });
}

function withCachePoint(block: ConverseBlock, part: ContentPart): ConverseBlock[] {
  return part.cache_control !== undefined ? [block, { cachePoint: { type: 'default' } }] : [block];
}

const DATA_URL = /^data:image\/([a-z]+);base64,(.*)$/s;
const FORMATS: ReadonlyMap<string, ConverseImageFormat> = new Map([
  ['png', 'png'],
  ['jpeg', 'jpeg'],
  ['jpg', 'jpeg'],
  ['gif', 'gif'],
  ['webp', 'webp'],
]);

/**
 * The format an image's bytes have, else the one its data: URL names. Claude on Bedrock refuses an image
 * whose format is not its bytes' ("Image does not match the provided media type image/png"), where OpenAI
 * reads the bytes: chat clients name a data: URL after the file's extension, or always image/png.
 */
function formatOf(declared: string, base64: string): ConverseImageFormat | undefined {
  const sniffed = sniffImageType(Buffer.from(base64.slice(0, 16), 'base64'));
  return FORMATS.get((sniffed?.slice('image/'.length) ?? declared).toLowerCase());
}

function contentBlock(part: ContentPart, at: string): ConverseBlock {
  if (part.type === 'text') return { text: (part as { text: string }).text };
  if (part.type === 'image_url') {
    const url = (part as { image_url?: { url?: unknown } }).image_url?.url;
    const data = typeof url === 'string' ? DATA_URL.exec(url) : null;
    const format = data ? formatOf(data[1], data[2]) : undefined;
    if (!data || !format) {
      throw new InvalidRequestError(`${at}.image_url.url: Bedrock takes images as base64 data: URLs (png, jpeg, gif or webp), not links`, 'invalid_request', { param: `${at}.image_url.url` });
    }
    return { image: { format, source: { bytes: data[2] } } };
  }
  if (part.type === 'file') return documentBlock(part as ContentPart & { file?: { file_data?: unknown; filename?: unknown } }, at);
  throw new InvalidRequestError(`${at}: content parts of type "${part.type}" are not supported for Bedrock models`, 'unsupported_content', { param: at });
}

const PDF_DATA_URL = /^data:application\/pdf;base64,(.*)$/is;

/**
 * A chat file part (what the openai SDK and the AI SDK send for a PDF, and what a Messages client's PDF
 * document block arrives as) as the document block Converse reads PDFs from; a file by id lives in
 * OpenAI's file store, which Bedrock cannot read.
 */
function documentBlock(part: { file?: { file_data?: unknown; filename?: unknown } }, at: string): ConverseBlock {
  const data = typeof part.file?.file_data === 'string' ? PDF_DATA_URL.exec(part.file.file_data) : null;
  if (!data) {
    throw new InvalidRequestError(`${at}.file: Bedrock models take files as PDF data (file_data as a base64 data:application/pdf URL)`, 'unsupported_content', { param: `${at}.file` });
  }
  return { document: { format: 'pdf', name: documentName(part.file?.filename), source: { bytes: data[1] } } };
}

/**
 * A document's name as Converse takes it (400 ValidationException otherwise): 1 to 200 ASCII letters,
 * digits, hyphens, parentheses, square brackets and single spaces. A file's name has a dot before its extension
 * (the format says it) and often underscores: `q3_report.pdf` goes as `q3-report`.
 */
function documentName(filename: unknown): string {
  const base = typeof filename === 'string' ? filename.replace(/\.pdf$/i, '') : '';
  const name = base.replace(/[^A-Za-z0-9\s()[\]-]/g, '-').replace(/\s+/g, ' ').trim().slice(0, MAX_DOCUMENT_NAME - DUPLICATE_SUFFIX_ROOM).trim();
  return name === '' ? 'document' : name;
}

const MAX_DOCUMENT_NAME = 200;
/** room kept for ` (N)` after a name met twice */
const DUPLICATE_SUFFIX_ROOM = 8;

/**
 * Converse refuses a request in which two documents share a name ("Messages can't contain duplicate
 * document names"), and the whole conversation goes with every turn: the same file attached twice, or two
 * files without names, would end the conversation. A name met again gets ` (2)`, ` (3)`, ...
 */
function nameDocumentsOnce(messages: ConverseMessage[]): void {
  const taken = new Set<string>();
  for (const message of messages) {
    for (const block of message.content) {
      if (!('document' in block)) continue;
      let name = block.document.name;
      for (let n = 2; taken.has(name.toLowerCase()); n++) name = `${block.document.name} (${n})`;
      taken.add(name.toLowerCase());
      block.document.name = name;
    }
  }
}

function assistantBlocks(message: ChatMessage, where: string, claude: boolean): ConverseBlock[] {
  // Claude's reasoning passed back leads the turn, signatures unchanged; reasoning without a signature
  // (another model's) cannot be checked by Claude and is left out, as are blocks for other models
  const reasoning = claude && Array.isArray(message.thinking_blocks) ? message.thinking_blocks.flatMap(reasoningBlock) : [];
  const blocks = [...reasoning, ...contentBlocks(message.content, where)];
  (message.tool_calls ?? []).forEach((call, j) => {
    const at = `${where}.tool_calls[${j}].function.arguments`;
    blocks.push({ toolUse: { toolUseId: converseToolId(call.id), name: call.function?.name, input: objectArgs(call.function?.arguments, at) } });
  });
  return blocks;
}

function reasoningBlock(block: ThinkingBlock): ConverseBlock[] {
  if (block?.type === 'redacted_thinking' && typeof block.data === 'string') return [{ reasoningContent: { redactedContent: block.data } }];
  if (block?.type === 'thinking' && typeof block.signature === 'string' && block.signature !== '') {
    return [{ reasoningContent: { reasoningText: { text: String(block.thinking ?? ''), signature: block.signature } } }];
  }
  return [];
}

function objectArgs(args: unknown, at: string): unknown {
  if (typeof args !== 'string' || args.trim() === '') return {};
  try {
    return JSON.parse(args);
  } catch {
    throw new InvalidRequestError(`${at}: must be a JSON object`, 'invalid_request', { param: at });
  }
}

function toolResult(message: ChatMessage, where: string): ConverseBlock {
  if (typeof message.tool_call_id !== 'string') throw new InvalidRequestError(`${where}.tool_call_id: field required`, 'invalid_request', { param: `${where}.tool_call_id` });
  const content = message.content;
  const text = typeof content === 'string' ? content : Array.isArray(content) ? content.map((p) => (p.type === 'text' ? (p as { text: string }).text : '')).join('') : '';
  // a tool that printed nothing: no content block rather than a blank one
  const blocks = isBlank(text) ? [] : [jsonObject(text) ?? { text }];
  return { toolResult: { toolUseId: converseToolId(message.tool_call_id), content: blocks } };
}

/**
 * Converse takes tool ids of 1 to 64 `[a-zA-Z0-9_-]` only (else a 400 ValidationException); a conversation
 * may hold ids other models made (Kimi's `functions.name:0`, a Gemini id carrying its base64 thought
 * signature, hundreds of characters). Such an id goes as one made from its hash: the same id always gives
 * the same one, so a call and its result still match, and two different ids do not meet.
 */
function converseToolId(id: string): string {
  if (typeof id !== 'string' || /^[a-zA-Z0-9_-]{1,64}$/.test(id)) return id;
  return `tooluse_${createHash('sha256').update(id).digest('hex').slice(0, 40)}`;
}

function jsonObject(text: string): { json: unknown } | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? { json: parsed } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Converse refuses messages holding tool calls or results without a `toolConfig` (400, "The toolConfig
 * field must be defined when using toolUse and toolResult content blocks"), where OpenAI accepts them:
 * clients send the conversation so far without tools to ask for a summary or a final answer. Then the
 * tools the history calls are declared (names only, any object as input), and, as for `tool_choice:
 * "none"`, no tool choice is sent (Converse has no "none").
 */
function toolConfigOf(request: ChatRequest, messages: ConverseMessage[]): ConverseRequest['toolConfig'] {
  const usesTools = () => messages.some((m) => m.content.some((b) => 'toolUse' in b || 'toolResult' in b));
  if (!Array.isArray(request.tools) || request.tools.length === 0) return usesTools() ? { tools: toolsCalledIn(messages) } : undefined;
  const tools = request.tools.map(toolSpec);
  const choice = request.tool_choice;
  if (choice === 'none') return usesTools() ? { tools } : undefined;
  const toolChoice = toolChoiceOf(choice);
  return toolChoice ? { tools, toolChoice } : { tools };
}

/** One declaration for each tool name the history calls, in order of first call. */
function toolsCalledIn(messages: ConverseMessage[]): ConverseToolSpec[] {
  const names = new Set<string>();
  for (const m of messages) for (const b of m.content) if ('toolUse' in b) names.add(b.toolUse.name);
  // results alone (their calls left out of the history) still need a config: one tool stands for them
  if (names.size === 0) names.add('tool');
  return [...names].map((name) => ({ toolSpec: { name, description: 'A tool called earlier in this conversation; none is offered for this turn.', inputSchema: { json: { type: 'object' } } } }));
}

function toolSpec(tool: ChatTool, i: number): ConverseToolSpec {
  if (tool?.type !== 'function' || !tool.function?.name) {
    throw new InvalidRequestError(`tools[${i}]: only function tools are supported for Bedrock models`, 'unsupported_tool', { param: `tools[${i}]` });
  }
  const spec: ConverseToolSpec['toolSpec'] = { name: tool.function.name, inputSchema: { json: tool.function.parameters ?? { type: 'object', properties: {} } } };
  if (tool.function.description !== undefined) spec.description = tool.function.description;
  return { toolSpec: spec };
}

function toolChoiceOf(choice: unknown): ConverseToolChoice | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === 'auto') return { auto: {} };
  if (choice === 'required') return { any: {} };
  const name = (choice as { function?: { name?: unknown } })?.function?.name;
  if (typeof choice === 'object' && (choice as { type?: unknown }).type === 'function' && typeof name === 'string') return { tool: { name } };
  throw new InvalidRequestError('tool_choice: must be "auto", "none", "required" or a named function', 'invalid_request', { param: 'tool_choice' });
}
