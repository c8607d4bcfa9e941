import { SseFrame } from './sse-frame';

/**
 * Incremental SSE decoder (the WHATWG event-stream rules that matter for model APIs): frames end at a
 * blank line, `data:` lines of one frame are joined with "\n", comments (`:`) are skipped, and CRLF or
 * LF line endings both work. Bytes are decoded as a stream so a UTF-8 character split across chunks
 * survives. Synchronous: one upstream read in, the frames it completes out, so a caller can handle them
 * without an async hop per frame.
 */
export class SseDecoder {
  private readonly decoder = new TextDecoder();
  private buffer = '';
  private event: string | undefined;
  private data: string[] = [];

  push(chunk: Uint8Array | string): SseFrame[] {
    const text = this.buffer + (typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true }));
    const frames: SseFrame[] = [];
    let start = 0;
    let newline: number;
    while ((newline = text.indexOf('\n', start)) !== -1) {
      const end = newline > start && text.charCodeAt(newline - 1) === 13 /* \r */ ? newline - 1 : newline;
      this.line(text, start, end, frames);
      start = newline + 1;
    }
    this.buffer = start === 0 ? text : text.slice(start);
    return frames;
  }

  private line(text: string, start: number, end: number, frames: SseFrame[]): void {
    if (start === end) {
      if (this.data.length > 0) frames.push(SseFrame.fromRaw(this.data.length === 1 ? this.data[0] : this.data.join('\n'), this.event));
      this.event = undefined;
      this.data = [];
      return;
    }
    if (text.charCodeAt(start) === 58 /* ':' comment */) return;
    const colon = text.indexOf(':', start);
    const fieldEnd = colon === -1 || colon > end ? end : colon;
    let valueStart = fieldEnd === end ? end : fieldEnd + 1;
    if (text.charCodeAt(valueStart) === 32 && valueStart < end) valueStart++;
    const field = text.slice(start, fieldEnd);
    if (field === 'data') this.data.push(text.slice(valueStart, end));
    else if (field === 'event') this.event = text.slice(valueStart, end);
  }
}

/**
 * The frames of an SSE body. An event not closed by a blank line when the body ends is incomplete and is
 * discarded (as the WHATWG spec says): a cut stream must never hand a half-written JSON document on.
 */
export async function* parseSse(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseFrame> {
  const decoder = new SseDecoder();
  for await (const chunk of body) yield* decoder.push(chunk);
}
