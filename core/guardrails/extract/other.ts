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

/** Image responses: the prompt a model rewrote before drawing (dall-e-3's `revised_prompt`), its only text. */
export function imagesResponseSlots(body: any, c: SlotCollector): void {
  const data = Array.isArray(body?.data) ? body.data : [];
  data.forEach((_: unknown, i: number) => c.field(data[i], 'revised_prompt', `data[${i}].revised_prompt`));
}

/** MCP `tools/call` arguments: every string value, at any depth. */
export function mcpArgumentsSlots(args: Record<string, unknown> | undefined, c: SlotCollector): void {
  if (!args || typeof args !== 'object') return;
  for (const key of Object.keys(args)) c.strings(args, key, `arguments.${key}`);
}

/**
 * The answers a 2026-07-28 client sends back to an upstream's input requests (they go upstream like
 * arguments): an elicitation's field values, a sampling answer's text.
 */
export function mcpInputResponseSlots(responses: Record<string, unknown> | undefined, c: SlotCollector): void {
  if (!responses || typeof responses !== 'object') return;
  Object.keys(responses).forEach((key, i) => {
    const response = responses[key] as any;
    const content = response?.content;
    const path = `inputResponses[${i}].content`;
    if (Array.isArray(content) || typeof content?.type === 'string') {
      const blocks = Array.isArray(content) ? content : [content];
      blocks.forEach((block: any, k: number) => {
        if (block?.type === 'text') c.field(block, 'text', `${path}${Array.isArray(content) ? `[${k}]` : ''}.text`);
      });
    } else if (content && typeof content === 'object') {
      c.strings(response, 'content', path);
    }
  });
}

/**
 * MCP tool result: text content, embedded text resources, and every string in structuredContent, or the
 * string it is (which many clients read instead of the text).
 */
export function mcpResultSlots(result: any, c: SlotCollector): void {
  const content = Array.isArray(result?.content) ? result.content : [];
  // a tool's text is often its structured content as JSON: masked where its values are written, so
  // it stays JSON and reads as the structuredContent beside it does (plain text is one plain slot)
  content.forEach((item: any, i: number) => contentItemSlots(item, `content[${i}]`, c, true));
  // any JSON value under 2026-07-28 (a bare string included), an object under 2025-11-25
  c.strings(result, 'structuredContent', 'structuredContent');
  metaSlots(result, '', c);
  inputRequestSlots(result, c);
}

/**
 * One content item of a tool result or a prompt message: its text (`textAsJson`: masked where JSON values
 * are written), an embedded resource's contents, a resource link's title and description, and its `_meta`.
 */
function contentItemSlots(item: any, at: string, c: SlotCollector, textAsJson: boolean): void {
  if (item?.type === 'text') {
    if (textAsJson) c.jsonString(item, 'text', `${at}.text`);
    else c.field(item, 'text', `${at}.text`);
  } else if (item?.type === 'resource') resourceContentSlots(item.resource, `${at}.resource`, c);
  else if (item?.type === 'resource_link') resourceLinkSlots(item, at, c);
  metaSlots(item, at, c);
}

/**
 * An upstream's `_meta`: SDK clients hand it to the application with the rest of the result, so what a
 * guardrail masks in the text must not reach the client there. Its keys stay; its string values are text.
 */
function metaSlots(holder: any, at: string, c: SlotCollector): void {
  const meta = holder?._meta;
  if (meta && typeof meta === 'object') c.strings(holder, '_meta', at ? `${at}._meta` : '_meta');
}

/**
 * A resource's contents: its `text`, or its `blob` when that holds UTF-8 text (a server may send a text
 * file base64-encoded, and the client decodes and shows it); masked text is encoded back the same way.
 */
function resourceContentSlots(item: any, at: string, c: SlotCollector): void {
  if (typeof item?.text === 'string') c.field(item, 'text', `${at}.text`);
  else if (typeof item?.blob === 'string' && item.blob.length > 0 && !/^(image|audio|video)\//i.test(String(item.mimeType ?? ''))) {
    let text: string;
    try {
      text = UTF8.decode(Buffer.from(item.blob, 'base64'));
    } catch {
      return; // binary: no text to inspect
    }
    if (text.length > 0) c.slots.push({ path: `${at}.blob`, text, put: (masked) => void (item.blob = Buffer.from(masked, 'utf8').toString('base64')) });
  }
  metaSlots(item, at, c);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A link to a resource: its title and description are what a client shows in its place (name and URI address it). */
function resourceLinkSlots(item: any, at: string, c: SlotCollector): void {
  c.field(item, 'title', `${at}.title`);
  c.field(item, 'description', `${at}.description`);
}

/**
 * The input requests of an `input_required` result (MCP 2026-07-28), relayed to the client as they came:
 * what they show the user (an elicitation's message and the titles, descriptions and defaults of its
 * form's fields and of its fields' options, a sampling request's messages and system prompt). Enum values
 * and `const`s stay: they are the answers.
 */
function inputRequestSlots(result: any, c: SlotCollector): void {
  const requests = result?.inputRequests;
  if (!requests || typeof requests !== 'object' || Array.isArray(requests)) return;
  Object.keys(requests).forEach((key, i) => {
    const params = requests[key]?.params;
    if (!params || typeof params !== 'object') return;
    const path = `inputRequests[${i}].params`;
    c.field(params, 'message', `${path}.message`);
    c.field(params, 'systemPrompt', `${path}.systemPrompt`);
    const properties = params.requestedSchema?.properties;
    if (properties && typeof properties === 'object' && !Array.isArray(properties)) {
      Object.keys(properties).forEach((name, j) => {
        const field = properties[name];
        const at = `${path}.requestedSchema.properties[${j}]`;
        for (const key of ['title', 'description', 'default']) c.field(field, key, `${at}.${key}`);
        // a choice's option titles are shown in place of its values (single select: oneOf, multi select:
        // items.anyOf, legacy: enumNames), so they are text the user reads as much as the field's title
        optionTitleSlots(field, at, c);
        optionTitleSlots(field?.items, `${at}.items`, c);
        if (Array.isArray(field?.enumNames)) field.enumNames.forEach((_: unknown, k: number) => c.field(field.enumNames, k, `${at}.enumNames[${k}]`));
      });
    }
    const messages = Array.isArray(params.messages) ? params.messages : [];
    messages.forEach((message: any, j: number) => {
      const content = message?.content;
      const blocks = Array.isArray(content) ? content : [content];
      blocks.forEach((block: any, k: number) => {
        if (block?.type === 'text') c.field(block, 'text', `${path}.messages[${j}].content${Array.isArray(content) ? `[${k}]` : ''}.text`);
      });
    });
  });
}

/** The titles of a choice schema's options, `oneOf` or `anyOf` of `{ const, title }`. */
function optionTitleSlots(schema: any, at: string, c: SlotCollector): void {
  for (const list of ['oneOf', 'anyOf']) {
    const options = schema?.[list];
    if (Array.isArray(options)) options.forEach((option: any, k: number) => c.field(option, 'title', `${at}.${list}[${k}].title`));
  }
}

/** MCP `prompts/get` result: its description and the text of each message (text content and embedded resources). */
export function mcpPromptSlots(result: any, c: SlotCollector): void {
  const messages = Array.isArray(result?.messages) ? result.messages : [];
  c.field(result, 'description', 'description');
  messages.forEach((message: any, i: number) => contentItemSlots(message?.content, `messages[${i}].content`, c, false));
  metaSlots(result, '', c);
  inputRequestSlots(result, c);
}

/** MCP `resources/read` result: the text of each content item, a blob's when it is UTF-8 text. */
export function mcpResourceSlots(result: any, c: SlotCollector): void {
  const contents = Array.isArray(result?.contents) ? result.contents : [];
  contents.forEach((item: any, i: number) => resourceContentSlots(item, `contents[${i}]`, c));
  metaSlots(result, '', c);
  inputRequestSlots(result, c);
}
