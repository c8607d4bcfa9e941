/**
 * A chat-completions request -> a Gemini `generateContent` body. Pure; golden files in
 * test/fixtures/gemini pin every mapping. Vertex AI's Gemini models take the same body.
 *
 * Choices a client can observe:
 * - system and developer messages, wherever they sit, become `systemInstruction`;
 * - consecutive turns of one role are merged (Gemini wants user and model turns to alternate), so the
 *   answers to parallel tool calls travel in one user turn, as Gemini expects;
 * - a tool answer names its function: Gemini matches answers by name, the chat format by call id, so the
 *   name is looked up from the assistant turn that made the call;
 * - a tool call id made by this translation carries Gemini's thought signature (see tool-ids.ts), which
 *   goes back on the call part so thinking models keep their reasoning across turns;
 * - for Gemini 3 and later, a call and its answer carry the call's id, by which Gemini 3 pairs them;
 * - tool parameters and `json_schema` response formats are sent as JSON Schema (`parametersJsonSchema`,
 *   `responseJsonSchema`), not the older OpenAPI subset, so `additionalProperties` and friends are kept;
 * - `reasoning_effort` becomes a thinking budget (THINKING_BUDGETS);
 * - a `file` part holding a PDF (a base64 data:application/pdf URL) goes as inline data; other files are refused.
 */
import { InvalidRequestError, sniffImageType, type ChatMessage, type ChatRequest, type ChatTool, type ContentPart } from '../../core/plugins/sdk';
import { splitToolCallId } from './tool-ids';
import type { GeminiContent, GeminiGenerationConfig, GeminiPart, GeminiRequest } from './wire';

/**
 * reasoning_effort -> thinkingBudget (tokens); 0 turns thinking off where the model allows it. The efforts
 * above high (OpenAI's and a Messages client's `xhigh` and `max`) get the most every Gemini 2.5 model
 * takes (Flash's limit).
 */
export const THINKING_BUDGETS: ReadonlyMap<string, number> = new Map([
  ['none', 0],
  ['minimal', 0],
  ['low', 1024],
  ['medium', 8192],
  ['high', 24576],
  ['xhigh', 24576],
  ['max', 24576],
]);

export function geminiRequestFromChat(request: ChatRequest, upstreamModel?: string): GeminiRequest {
  if (!Array.isArray(request?.messages)) throw new InvalidRequestError('messages: field required', 'invalid_request', { param: 'messages' });

  const systemParts: GeminiPart[] = [];
  const contents: GeminiContent[] = [];
  const gemini3 = upstreamModel !== undefined && checksThoughtSignatures(upstreamModel);
  request.messages.forEach((message, i) => {
    const where = `messages[${i}]`;
    switch (message?.role) {
      case 'system':
      case 'developer':
        systemParts.push(...textParts(message.content, where));
        break;
      case 'user':
        push(contents, 'user', contentParts(message.content, where));
        break;
      case 'assistant':
        push(contents, 'model', modelParts(message, where, gemini3));
        break;
      case 'tool':
        push(contents, 'user', [functionResponsePart(message, request.messages, i, where, gemini3)]);
        break;
      default:
        throw new InvalidRequestError(`${where}.role: unsupported role "${String(message?.role)}"`, 'invalid_request', { param: `${where}.role` });
    }
  });

  if (gemini3) signForeignCalls(contents);
  // a request that is only instructions (OpenAI takes one) is a prompt: Gemini refuses a request without
  // contents (400 "contents is not specified"), so the instructions go as the user's turn
  if (contents.length === 0 && systemParts.length > 0) contents.push({ role: 'user', parts: systemParts.splice(0) });
  // Gemini refuses contents that start with the model (a chat UI's greeting): "Please ensure that
  // multiturn requests alternate between user and model"; the greeting stays the model's earlier turn
  if (contents[0]?.role === 'model') contents.unshift({ role: 'user', parts: [{ text: OPENING_TURN }] });
  const body: GeminiRequest = { contents };
  if (systemParts.length > 0) body.systemInstruction = { parts: systemParts };
  if (Array.isArray(request.tools) && request.tools.length > 0) body.tools = [{ functionDeclarations: request.tools.map(functionDeclaration) }];
  const toolConfig = functionCallingConfig(request.tool_choice);
  if (toolConfig) body.toolConfig = { functionCallingConfig: toolConfig };
  const generationConfig = generationConfigOf(request, upstreamModel);
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;
  return body;
}

/** The user turn before a model's opening: as little as can be said, as Gemini refuses an empty part. */
export const OPENING_TURN = '(conversation start)';

/**
 * Gemini 3 refuses a history whose model turns call functions without the thought signature it gave them
 * (400 "Function call is missing a thought_signature"); calls another model made (a fallback, a client
 * that switched models) have none. Google's documented placeholder for such calls stands in for it, on
 * the first call of each turn, where Gemini puts its own.
 */
const FOREIGN_CALL_SIGNATURE = 'skip_thought_signature_validator';

/** `gemini-3-pro-preview`, `models/gemini-3-flash`: Gemini 3 and later check the signatures. */
function checksThoughtSignatures(model: string): boolean {
  const major = /^gemini-(\d+)/.exec(model.slice(model.lastIndexOf('/') + 1))?.[1];
  return major !== undefined && Number(major) >= 3;
}

function signForeignCalls(contents: GeminiContent[]): void {
  for (const content of contents) {
    if (content.role !== 'model') continue;
    const calls = content.parts.filter((part) => part.functionCall);
    if (calls.length > 0 && !calls.some((part) => part.thoughtSignature !== undefined)) calls[0].thoughtSignature = FOREIGN_CALL_SIGNATURE;
  }
}

/** Consecutive turns of one role become one turn. */
function push(contents: GeminiContent[], role: GeminiContent['role'], parts: GeminiPart[]): void {
  if (parts.length === 0) return;
  const last = contents[contents.length - 1];
  if (last?.role === role) last.parts.push(...parts);
  else contents.push({ role, parts });
}

function textParts(content: ChatMessage['content'], where: string): GeminiPart[] {
  if (content == null || content === '') return [];
  if (typeof content === 'string') return [{ text: content }];
  const parts: GeminiPart[] = [];
  content.forEach((part, j) => {
    if (part.type !== 'text') throw new InvalidRequestError(`${where}.content[${j}]: system messages may hold text only`, 'invalid_request', { param: `${where}.content[${j}]` });
    if (!isEmptyText(part)) parts.push({ text: (part as { text: string }).text });
  });
  return parts;
}

/** A user or assistant message's content as parts: text and images, empty text left out. */
function contentParts(content: ChatMessage['content'], where: string): GeminiPart[] {
  if (content == null) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  const parts: GeminiPart[] = [];
  content.forEach((part, j) => {
    if (!isEmptyText(part)) parts.push(contentPart(part, `${where}.content[${j}]`));
  });
  return parts;
}

/**
 * Gemini refuses a part whose text is empty (400, "required oneof field 'data' must have one
 * initialized field"); clients send them beside an image or as a placeholder. It holds no content, so it
 * is left out, as in assistant turns.
 */
function isEmptyText(part: ContentPart): boolean {
  return part.type === 'text' && (part as { text: string }).text === '';
}

function contentPart(part: ContentPart, at: string): GeminiPart {
  if (part.type === 'text') return { text: (part as { text: string }).text };
  if (part.type === 'image_url') return imagePart((part as { image_url?: { url?: unknown } }).image_url?.url, at);
  if (part.type === 'file') return pdfPart(part as ContentPart & { file?: { file_data?: unknown } }, at);
  throw new InvalidRequestError(`${at}: content parts of type "${part.type}" are not supported for Gemini models`, 'unsupported_content', { param: at });
}

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

/**
 * A chat file part (what the openai SDK and the AI SDK send for a PDF, and what a Messages client's PDF
 * document block arrives as) as the inline data Gemini reads PDFs from; a file by id lives in OpenAI's file
 * store, which Google cannot read.
 */
function pdfPart(part: { file?: { file_data?: unknown } }, at: string): GeminiPart {
  const data = typeof part.file?.file_data === 'string' ? DATA_URL.exec(part.file.file_data) : null;
  if (!data || data[1].toLowerCase() !== 'application/pdf') {
    throw new InvalidRequestError(`${at}.file: Gemini models take files as PDF data (file_data as a base64 data:application/pdf URL)`, 'unsupported_content', { param: `${at}.file` });
  }
  return { inlineData: { mimeType: 'application/pdf', data: data[2] } };
}

/** Extension -> MIME type, for an image given by URL (Gemini wants a MIME type with every file). */
const IMAGE_TYPES: ReadonlyMap<string, string> = new Map([
  ['png', 'image/png'],
  ['jpg', 'image/jpeg'],
  ['jpeg', 'image/jpeg'],
  ['webp', 'image/webp'],
  ['gif', 'image/gif'],
  ['heic', 'image/heic'],
  ['heif', 'image/heif'],
]);

function imagePart(url: unknown, at: string): GeminiPart {
  if (typeof url !== 'string') throw new InvalidRequestError(`${at}.image_url.url: field required`, 'invalid_request', { param: `${at}.image_url.url` });
  const data = DATA_URL.exec(url);
  if (data) return { inlineData: { mimeType: inlineType(data[1], data[2]), data: data[2] } };
  if (/^https?:\/\//i.test(url)) {
    return { fileData: { mimeType: IMAGE_TYPES.get(extensionOf(url)) ?? 'image/jpeg', fileUri: url } };
  }
  // Vertex reads a gs:// link with the gateway's own service account: a client of one organisation could
  // have it read the operator's (or another organisation's) buckets and the model describe what is there
  if (/^gs:\/\//i.test(url)) {
    throw new InvalidRequestError(`${at}.image_url.url: gs:// links are not taken from clients (Google would read them with the gateway's credentials); send the image as a base64 data: URL or an http(s) link`, 'invalid_request', { param: `${at}.image_url.url` });
  }
  throw new InvalidRequestError(`${at}.image_url.url: must be an http(s) URL or a base64 data: URL`, 'invalid_request', { param: `${at}.image_url.url` });
}

/**
 * The type of inline bytes as Gemini takes it: an image's from its bytes (PNG, JPEG or WebP: GIF is not
 * one Gemini names), else the data: URL's, with `image/jpg` as `image/jpeg`. Gemini refuses a type it
 * does not know (400 "Unsupported MIME type: image/jpg") where OpenAI reads the bytes, and chat clients
 * name a data: URL after the file's extension.
 */
function inlineType(declared: string, base64: string): string {
  const sniffed = sniffImageType(Buffer.from(base64.slice(0, 16), 'base64'));
  if (sniffed !== undefined && sniffed !== 'image/gif') return sniffed;
  return declared.toLowerCase() === 'image/jpg' ? 'image/jpeg' : declared;
}

/**
 * The extension of a URL's path, lower-cased ('' when it has none): the text after the last dot of the
 * path, before any query or fragment. String searches, not a regular expression: the URL is the
 * client's, and the pattern this replaced (`/\.([a-z0-9]+)(?:[?#].*)?$/`) backtracked quadratically on
 * one like `".a?".repeat(30000) + "\n"`: 2.6 s of a held event loop for those 90 KB, hours for a URL at
 * the 10 MB body limit.
 */
function extensionOf(url: string): string {
  let end = url.length;
  const query = url.indexOf('?');
  if (query !== -1) end = query;
  const fragment = url.indexOf('#');
  if (fragment !== -1 && fragment < end) end = fragment;
  const dot = url.lastIndexOf('.', end - 1);
  if (dot === -1 || url.lastIndexOf('/', end - 1) > dot) return '';
  return url.slice(dot + 1, end).toLowerCase();
}

/**
 * Gemini 3 gives each function call an `id` and matches the answers to parallel calls by it: the call
 * and its answer go back with the chat id (its signature split off), the call's `id` Gemini sent or
 * another model's, so the two still pair. Earlier models match by name and order.
 */
function modelParts(message: ChatMessage, where: string, withIds: boolean): GeminiPart[] {
  const parts = contentParts(message.content, where);
  (message.tool_calls ?? []).forEach((call, j) => {
    const at = `${where}.tool_calls[${j}]`;
    const part: GeminiPart = { functionCall: { name: call.function?.name, args: argsOf(call.function?.arguments, `${at}.function.arguments`) } };
    const { base, thoughtSignature: signature } = splitToolCallId(call.id);
    if (withIds && base !== '') part.functionCall!.id = base;
    if (signature !== undefined) part.thoughtSignature = signature;
    parts.push(part);
  });
  return parts;
}

function argsOf(args: unknown, at: string): Record<string, unknown> {
  if (typeof args !== 'string' || args.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    throw new InvalidRequestError(`${at}: must be a JSON object`, 'invalid_request', { param: at });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new InvalidRequestError(`${at}: must be a JSON object`, 'invalid_request', { param: at });
  return parsed as Record<string, unknown>;
}

/** A tool message -> a functionResponse part, named after the call it answers. */
function functionResponsePart(message: ChatMessage, messages: ChatMessage[], index: number, where: string, withId: boolean): GeminiPart {
  const id = message.tool_call_id;
  if (typeof id !== 'string') throw new InvalidRequestError(`${where}.tool_call_id: field required`, 'invalid_request', { param: `${where}.tool_call_id` });
  const name = callName(messages, index, id);
  if (name === undefined) {
    throw new InvalidRequestError(`${where}.tool_call_id: no earlier assistant message has a tool call with id "${id}"`, 'invalid_request', { param: `${where}.tool_call_id` });
  }
  const part: GeminiPart = { functionResponse: { name, response: responseObject(message.content) } };
  const base = splitToolCallId(id).base;
  if (withId && base !== '') part.functionResponse!.id = base;
  return part;
}

/** The nearest earlier assistant tool call with this id (ids may repeat across turns). */
function callName(messages: ChatMessage[], before: number, id: string): string | undefined {
  for (let i = before - 1; i >= 0; i--) {
    const call = messages[i]?.role === 'assistant' ? messages[i].tool_calls?.find((c) => c.id === id) : undefined;
    if (call) return call.function?.name;
  }
  return undefined;
}

/** Gemini wants an object: a JSON object answer is sent as it is, anything else as `{ result }`. */
function responseObject(content: ChatMessage['content']): Record<string, unknown> {
  const text = typeof content === 'string' ? content : Array.isArray(content) ? content.map((p) => (p.type === 'text' ? (p as { text: string }).text : '')).join('') : '';
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    return { result: parsed };
  } catch {
    return { result: text };
  }
}

function functionDeclaration(tool: ChatTool, i: number) {
  if (tool?.type !== 'function' || !tool.function?.name) {
    throw new InvalidRequestError(`tools[${i}]: only function tools are supported for Gemini models`, 'unsupported_tool', { param: `tools[${i}]` });
  }
  const declaration: { name: string; description?: string; parametersJsonSchema?: Record<string, unknown> } = { name: tool.function.name };
  if (tool.function.description !== undefined) declaration.description = tool.function.description;
  if (tool.function.parameters !== undefined) declaration.parametersJsonSchema = tool.function.parameters;
  return declaration;
}

const TOOL_CHOICE_ERROR = 'tool_choice: must be "auto", "none", "required" or a named function';

function functionCallingConfig(choice: unknown): NonNullable<GeminiRequest['toolConfig']>['functionCallingConfig'] | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === 'auto') return { mode: 'AUTO' };
  if (choice === 'none') return { mode: 'NONE' };
  if (choice === 'required') return { mode: 'ANY' };
  const name = (choice as { function?: { name?: unknown } })?.function?.name;
  if (typeof choice === 'object' && (choice as { type?: unknown }).type === 'function' && typeof name === 'string') return { mode: 'ANY', allowedFunctionNames: [name] };
  throw new InvalidRequestError(TOOL_CHOICE_ERROR, 'invalid_request', { param: 'tool_choice' });
}

function generationConfigOf(request: ChatRequest, upstreamModel: string | undefined): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {};
  if (typeof request.temperature === 'number') config.temperature = request.temperature;
  if (typeof request.top_p === 'number') config.topP = request.top_p;
  if (typeof request.top_k === 'number') config.topK = request.top_k;
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (typeof maxTokens === 'number') config.maxOutputTokens = maxTokens;
  if (request.stop != null) {
    const stops = Array.isArray(request.stop) ? request.stop : [request.stop];
    if (stops.length > 0) config.stopSequences = stops;
  }
  if (typeof request.n === 'number' && request.n !== 1) config.candidateCount = request.n;
  if (typeof request.seed === 'number') config.seed = request.seed;
  if (typeof request.presence_penalty === 'number') config.presencePenalty = request.presence_penalty;
  if (typeof request.frequency_penalty === 'number') config.frequencyPenalty = request.frequency_penalty;
  Object.assign(config, responseFormat(request.response_format));
  if (typeof request.reasoning_effort === 'string') {
    const budget = THINKING_BUDGETS.get(request.reasoning_effort);
    if (budget === undefined) throw new InvalidRequestError(`reasoning_effort: must be one of ${[...THINKING_BUDGETS.keys()].join(', ')}`, 'invalid_request', { param: 'reasoning_effort' });
    config.thinkingConfig = { thinkingBudget: budget === 0 && upstreamModel !== undefined && alwaysThinks(upstreamModel) ? LEAST_PRO_BUDGET : budget };
  }
  return config;
}

/**
 * Gemini 2.5 Pro cannot stop thinking: it refuses a budget of 0 (400 "Budget 0 is invalid. This model only
 * works in thinking mode") and any under 128, so a client asking it for minimal or no thinking gets the
 * least it takes. Neither can the Gemini 3 Pro models (`gemini-3-pro-preview`, `gemini-3.1-pro-preview`),
 * which refuse a budget of 0 in the same words and take 128.
 */
const LEAST_PRO_BUDGET = 128;

function alwaysThinks(model: string): boolean {
  return /^gemini-(2\.5|3(\.\d+)?)-pro/.test(model.slice(model.lastIndexOf('/') + 1));
}

function responseFormat(format: unknown): Pick<GeminiGenerationConfig, 'responseMimeType' | 'responseJsonSchema'> {
  const type = (format as { type?: unknown } | null | undefined)?.type;
  if (format == null || type === 'text') return {};
  if (type === 'json_object') return { responseMimeType: 'application/json' };
  if (type === 'json_schema') {
    const schema = (format as { json_schema?: { schema?: unknown } }).json_schema?.schema;
    if (schema === undefined) throw new InvalidRequestError('response_format.json_schema.schema: field required', 'invalid_request', { param: 'response_format.json_schema.schema' });
    return { responseMimeType: 'application/json', responseJsonSchema: schema };
  }
  throw new InvalidRequestError('response_format.type: must be "text", "json_object" or "json_schema"', 'invalid_request', { param: 'response_format.type' });
}
