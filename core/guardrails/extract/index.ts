import type { ApiFormat } from '../../plugins/contracts';
import { SlotCollector, type TextSlot } from '../text-slots';
import { chatRequestSlots, chatResponseSlots } from '../../apis/chat/guardrail-text';
import { messagesRequestSlots, messagesResponseSlots } from '../../apis/messages/guardrail-text';
import { embeddingsRequestSlots, imagesRequestSlots, imagesResponseSlots, mcpArgumentsSlots, mcpInputResponseSlots, mcpPromptSlots, mcpResourceSlots, mcpResultSlots } from './other';

type Extractor = (body: any, c: SlotCollector, request?: unknown) => void;

const REQUEST: Partial<Record<ApiFormat, Extractor>> = {
  chat: chatRequestSlots,
  messages: messagesRequestSlots,
  'messages.count_tokens': messagesRequestSlots,
  embeddings: embeddingsRequestSlots,
  'images.generations': imagesRequestSlots,
  'images.edits': imagesRequestSlots,
};

const RESPONSE: Partial<Record<ApiFormat, Extractor>> = {
  chat: chatResponseSlots,
  messages: messagesResponseSlots,
  'images.generations': imagesResponseSlots,
  'images.edits': imagesResponseSlots,
};

function collect(extract: Extractor | undefined, body: unknown, request?: unknown): TextSlot[] {
  if (!extract) return [];
  const c = new SlotCollector();
  extract(body, c, request);
  return c.slots;
}

/** The text of a model request in `format`'s shape; masked text is written back into `body`. */
export const modelRequestSlots = (format: ApiFormat, body: unknown) => collect(REQUEST[format], body);
/** The text of a JSON model response (embeddings responses carry none, images responses only a revised prompt). */
export const modelResponseSlots = (format: ApiFormat, body: unknown, request?: unknown) => collect(RESPONSE[format], body, request);
export const mcpRequestSlots = (args: Record<string, unknown> | undefined) => collect(mcpArgumentsSlots as Extractor, args);
/** The answers a client sends back to an upstream's input requests; masked text is written back into them. */
export const mcpInputResponsesSlots = (responses: Record<string, unknown> | undefined) => collect(mcpInputResponseSlots as Extractor, responses);
const MCP_RESULT = new Map<string, Extractor>([
  ['tools/call', mcpResultSlots],
  ['prompts/get', mcpPromptSlots],
  ['resources/read', mcpResourceSlots],
]);
/** The text of an MCP result: a tool result, a prompt's messages, a resource's text contents. */
export const mcpResponseSlots = (result: unknown, method = 'tools/call') => collect(MCP_RESULT.get(method), result);
