import type { SlotCollector } from '../text-slots';

/** Embeddings input: a string or an array of strings (token arrays carry no text to inspect). */
export function embeddingsRequestSlots(body: any, c: SlotCollector): void {
  if (typeof body?.input === 'string') return c.field(body, 'input', 'input');
  if (Array.isArray(body?.input)) body.input.forEach((_: unknown, i: number) => c.field(body.input, i, `input[${i}]`));
}

/** Image generation and edit requests: the prompt. */
export function imagesRequestSlots(body: any, c: SlotCollector): void {
  c.field(body, 'prompt', 'prompt');
}

/** MCP `tools/call` arguments: every string value, at any depth. */
export function mcpArgumentsSlots(args: Record<string, unknown> | undefined, c: SlotCollector): void {
  if (!args || typeof args !== 'object') return;
  for (const key of Object.keys(args)) c.strings(args, key, `arguments.${key}`);
}

/**
 * MCP tool result: text content, embedded text resources, and every string in structuredContent
 * (which many clients read instead of the text).
 */
export function mcpResultSlots(result: any, c: SlotCollector): void {
  const content = Array.isArray(result?.content) ? result.content : [];
  content.forEach((item: any, i: number) => {
    if (item?.type === 'text') c.field(item, 'text', `content[${i}].text`);
    else if (item?.type === 'resource') c.field(item.resource, 'text', `content[${i}].resource.text`);
  });
  if (result?.structuredContent && typeof result.structuredContent === 'object') c.strings(result, 'structuredContent', 'structuredContent');
}

/** MCP `prompts/get` result: the text of each message (text content and embedded text resources). */
export function mcpPromptSlots(result: any, c: SlotCollector): void {
  const messages = Array.isArray(result?.messages) ? result.messages : [];
  messages.forEach((message: any, i: number) => {
    const item = message?.content;
    if (item?.type === 'text') c.field(item, 'text', `messages[${i}].content.text`);
    else if (item?.type === 'resource') c.field(item.resource, 'text', `messages[${i}].content.resource.text`);
  });
}

/** MCP `resources/read` result: the text of each content item (binary `blob`s carry none). */
export function mcpResourceSlots(result: any, c: SlotCollector): void {
  const contents = Array.isArray(result?.contents) ? result.contents : [];
  contents.forEach((item: any, i: number) => {
    if (typeof item?.text === 'string') c.field(item, 'text', `contents[${i}].text`);
  });
}
