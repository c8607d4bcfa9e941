import type { SlotCollector } from '../../guardrails/text-slots';

/** Anthropic content: a string, or blocks (text, tool_use input, tool_result and search_result content, text documents, nested). */
function blockSlots(holder: any, key: string, at: string, c: SlotCollector): void {
  const content = holder?.[key];
  const base = at ? `${at}.${key}` : key;
  if (typeof content === 'string') return c.field(holder, key, base);
  if (!Array.isArray(content)) return;
  content.forEach((block: any, k: number) => {
    const path = `${base}[${k}]`;
    switch (block?.type) {
      case 'text':
        c.field(block, 'text', `${path}.text`);
        break;
      case 'tool_use':
        c.strings(block, 'input', `${path}.input`);
        break;
      case 'tool_result':
      case 'search_result':
        blockSlots(block, 'content', path, c);
        break;
      case 'document':
        // a plain-text document is text the model reads like any other (images and PDFs carry none we read)
        if (block.source?.type === 'text') c.field(block.source, 'data', `${path}.source.data`);
        else if (block.source?.type === 'content') blockSlots(block.source, 'content', `${path}.source`, c);
        break;
      default:
        break;
    }
  });
}

/** Messages request: the system prompt and every message's text, tool inputs and tool results. */
export function messagesRequestSlots(body: any, c: SlotCollector): void {
  blockSlots(body, 'system', '', c);
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  messages.forEach((m: any, i: number) => blockSlots(m, 'content', `messages[${i}]`, c));
}

/** Messages response: text blocks and tool_use inputs. */
export function messagesResponseSlots(body: any, c: SlotCollector): void {
  blockSlots(body, 'content', '', c);
}
