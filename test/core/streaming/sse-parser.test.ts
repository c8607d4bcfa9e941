import { expect } from 'chai';
import { parseSse } from '../../../core/streaming/sse-parser';

async function collect(chunks: string[]) {
  const out: { event?: string; data: string }[] = [];
  async function* source() {
    for (const c of chunks) yield new TextEncoder().encode(c);
  }
  for await (const f of parseSse(source())) out.push({ event: f.event, data: f.data });
  return out;
}

describe('SSE parser', () => {
  it('joins a frame split across chunks and handles CRLF', async () => {
    const frames = await collect(['data: {"a"', ':1}\r\n\r\nevent: ping\r\ndata: {}\r\n\r\n']);
    expect(frames).to.deep.equal([{ event: undefined, data: '{"a":1}' }, { event: 'ping', data: '{}' }]);
  });

  it('skips comments and joins multi-line data', async () => {
    expect(await collect([': keep-alive\n\ndata: a\ndata: b\n\n'])).to.deep.equal([{ event: undefined, data: 'a\nb' }]);
  });

  it('keeps a UTF-8 character split between chunks', async () => {
    const bytes = new TextEncoder().encode('data: é\n\n');
    async function* source() {
      yield bytes.slice(0, 7);
      yield bytes.slice(7);
    }
    const out: string[] = [];
    for await (const f of parseSse(source())) out.push(f.data);
    expect(out).to.deep.equal(['é']);
  });

  it('drops an unfinished frame at the end of a cut stream', async () => {
    expect(await collect(['data: {"ok":1}\n\ndata: {"cut'])).to.deep.equal([{ event: undefined, data: '{"ok":1}' }]);
  });
});
