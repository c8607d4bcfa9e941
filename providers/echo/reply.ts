import type { ChatMessage, ChatRequest } from '../../core/plugins/sdk';

/** The text of the last user message (text parts joined), or a hint when there is none. */
export function lastUserText(messages: ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content)) {
      return m.content
        .filter((p): p is { type: 'text'; text: string } => p.type === 'text' && typeof (p as { text?: unknown }).text === 'string')
        .map((p) => p.text)
        .join('\n');
    }
  }
  return '(no user message)';
}

/** A rough token count (about four characters a token), enough for a demo model's usage. */
export function approxTokens(text: string): number {
  return text.length === 0 ? 0 : Math.max(1, Math.ceil(text.length / 4));
}

export function promptText(request: ChatRequest): string {
  return request.messages.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? ''))).join('\n');
}

/** Split a reply into word-sized stream deltas, keeping the spaces. */
export function streamPieces(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}
