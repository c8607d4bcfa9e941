import { SseFrame } from './sse-frame';

/**
 * Incremental SSE parser (the WHATWG event-stream rules that matter for model APIs): frames end at a
 * blank line, `data:` lines of one frame are joined with "\n", comments (`:`) are skipped, and CRLF or
 * LF line endings both work. Bytes are decoded as a stream so a UTF-8 character split across chunks
 * survives.
 */
export async function* parseSse(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseFrame> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event: string | undefined;
  let data: string[] = [];

  for await (const chunk of body) {
    buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf('\n')) !== -1) {
      let line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        if (data.length > 0) yield SseFrame.fromRaw(data.join('\n'), event);
        event = undefined;
        data = [];
        continue;
      }
      if (line.charCodeAt(0) === 58 /* ':' */) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
      if (field === 'data') data.push(value);
      else if (field === 'event') event = value;
    }
  }
  // An event not closed by a blank line when the body ends is incomplete and is discarded (as the
  // WHATWG spec says): a cut stream must never hand a half-written JSON document downstream.
}
