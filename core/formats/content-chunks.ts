/**
 * The text and reasoning of a chat answer whose content is a list of chunks, in order: Mistral's reasoning
 * models answer so (`{type: "thinking", thinking: [text parts]}`, then `{type: "text", text}`), where
 * other servers send a string. Chunks of other types carry nothing a Messages or Responses answer can hold.
 */
export function contentChunks(content: readonly unknown[]): { kind: 'text' | 'thinking'; text: string }[] {
  const out: { kind: 'text' | 'thinking'; text: string }[] = [];
  for (const chunk of content) {
    const part = chunk as { type?: unknown; text?: unknown; thinking?: unknown } | null;
    if (part?.type === 'text' && typeof part.text === 'string' && part.text !== '') out.push({ kind: 'text', text: part.text });
    else if (part?.type === 'thinking') {
      const inner = Array.isArray(part.thinking) ? part.thinking : [part.thinking];
      const text = inner.map((t) => (typeof t === 'string' ? t : typeof t?.text === 'string' ? t.text : '')).join('');
      if (text !== '') out.push({ kind: 'thinking', text });
    }
  }
  return out;
}
