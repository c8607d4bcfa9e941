import type { SlotCollector } from '../../guardrails/text-slots';

/** Anthropic content: a string, or blocks (text, tool_use input, tool_result and search_result content, text documents, nested; the server and MCP connector tools' alike). */
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
        // a citation quotes the document it cites: text the client shows beside the answer's
        if (Array.isArray(block.citations)) block.citations.forEach((cite: any, n: number) => c.field(cite, 'cited_text', `${path}.citations[${n}].cited_text`));
        break;
      // the tools Anthropic runs itself (web fetch, the MCP connector) come back in a turn's history too
      case 'tool_use':
      case 'server_tool_use':
      case 'mcp_tool_use':
        c.strings(block, 'input', `${path}.input`);
        break;
      case 'tool_result':
      case 'mcp_tool_result':
      case 'search_result':
        blockSlots(block, 'content', path, c);
        break;
      case 'web_fetch_tool_result': {
        // the fetched page, a document the model reads
        const page = block.content?.type === 'web_fetch_result' ? block.content.content : undefined;
        if (page?.source?.type === 'text') c.field(page.source, 'data', `${path}.content.content.source.data`);
        break;
      }
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
