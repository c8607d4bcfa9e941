import { expect } from 'chai';
import { parseSse, SseDecoder } from '../../../core/streaming/sse-parser';
import type { SseFrame } from '../../../core/streaming/sse-frame';

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

describe('SSE decoder on bytes', () => {
  const decodeIn = (pieces: Uint8Array[]) => {
    const decoder = new SseDecoder();
    return pieces.flatMap((p) => decoder.push(p));
  };
  const wireOf = (frame: SseFrame) => (frame.wireBytes ? Buffer.from(frame.wireBytes).toString('utf8') : undefined);

  // a usage frame, an event-named frame, multi-byte UTF-8 (2, 3 and 4 bytes) and a comment, in one body
  const body = Buffer.from(
    'data: {"choices":[{"delta":{"content":"é€😀"}}]}\n\n' +
      ': keep-alive\n\n' +
      'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"text":"ß"}}\n\n' +
      'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}\n\n' +
      'data: [DONE]\n\n',
  );
  const expected = [
    { event: undefined, data: '{"choices":[{"delta":{"content":"é€😀"}}]}' },
    { event: 'content_block_delta', data: '{"type":"content_block_delta","delta":{"text":"ß"}}' },
    { event: undefined, data: '{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}' },
    { event: undefined, data: '[DONE]' },
  ];

  it('gives the same frames, with the upstream bytes of each, wherever one read ends and the next begins', () => {
    for (let cut = 0; cut <= body.length; cut++) {
      const frames = decodeIn([body.subarray(0, cut), body.subarray(cut)]);
      expect(frames.map((f) => ({ event: f.event, data: f.data })), `split at byte ${cut}`).to.deep.equal(expected);
      expect(frames.map(wireOf), `split at byte ${cut}`).to.deep.equal(frames.map((f) => f.toWire()));
    }
  });

  it('gives the same frames wherever three reads end (reads that end no line wait, to be joined once)', () => {
    for (let a = 0; a <= body.length; a++) {
      for (let b = a; b <= body.length; b += 3) {
        const frames = decodeIn([body.subarray(0, a), body.subarray(a, b), body.subarray(b)]);
        expect(frames.map((f) => ({ event: f.event, data: f.data })), `split at bytes ${a} and ${b}`).to.deep.equal(expected);
        expect(frames.map(wireOf), `split at bytes ${a} and ${b}`).to.deep.equal(frames.map((f) => f.toWire()));
      }
    }
  });

  it('takes a long line in many reads that end no line, and the frames after it', () => {
    const image = 'A'.repeat(64 * 1024);
    const stream = Buffer.from(`data: {"b64":"${image}"}\n\ndata: [DONE]\n\n`);
    const pieces: Uint8Array[] = [];
    for (let at = 0; at < stream.length; at += 1000) pieces.push(stream.subarray(at, at + 1000));
    const frames = decodeIn(pieces);
    expect(frames.map((f) => f.data)).to.deep.equal([`{"b64":"${image}"}`, '[DONE]']);
    expect(wireOf(frames[0])).to.equal(`data: {"b64":"${image}"}\n\n`);
  });

  it('tells whether the stream numbered an event (an id field, any value), wherever the field is split', () => {
    for (const stream of ['id: 7\ndata: {"a":1}\n\n', 'data: {"a":1}\nid\n\n', 'event: message\r\nid:\r\ndata: x\r\n\r\n']) {
      for (let cut = 0; cut <= stream.length; cut++) {
        const decoder = new SseDecoder();
        decoder.push(stream.slice(0, cut));
        decoder.push(stream.slice(cut));
        expect(decoder.numbersEvents, JSON.stringify([stream, cut])).to.equal(true);
      }
    }
    const plain = new SseDecoder();
    plain.push('data: {"id":1}\n\n: id\ndata: idle\n\nidx: 1\n\n');
    expect(plain.numbersEvents, 'an id in the data, a comment or a longer field name is not one').to.equal(false);
  });

  it('answers what the meters ask (a token in the data, the end frame) from the bytes, the same as from the text', () => {
    const tokens = ['"usage"', '"é€', '[DONE]'];
    const asked = (f: SseFrame) => [...tokens.map((t) => f.mentions(t)), ...tokens.map((t) => f.mentionsInFrame(t)), f.isDone];
    const fromText = expected.map((e) => [...tokens.map((t) => e.data.includes(t)), ...tokens.map((t) => e.data.includes(t)), e.data === '[DONE]']);
    for (let cut = 0; cut <= body.length; cut++) {
      const frames = decodeIn([body.subarray(0, cut), body.subarray(cut)]);
      // asked before anything reads the text (a passed-through frame is decoded on first read), then after
      expect(frames.map(asked), `split at byte ${cut}`).to.deep.equal(fromText);
      expect(frames.map((f) => f.data)).to.deep.equal(expected.map((e) => e.data));
      expect(frames.map(asked), `split at byte ${cut}`).to.deep.equal(fromText);
    }
    // a data value that only starts like the end frame is not the end
    expect(decodeIn([Buffer.from('data: [DONE]x\n\ndata: [DON\n\n')]).map((f) => f.isDone)).to.deep.equal([false, false]);
  });

  it('tells a key with a value from one that is null, absent or only text, from the bytes or the text alike', () => {
    const cases: [string, boolean][] = [
      ['{"choices":[],"usage":{"prompt_tokens":3}}', true],
      ['{"choices":[{"delta":{"content":"x"}}],"usage":null}', false],
      ['{"choices":[{"delta":{"content":"x"}}],"usage" :  null, "x": 1}', false],
      ['{"usage":null,"nested":{"usage": {"prompt_tokens":1}}}', true],
      ['{"choices":[{"delta":{"content":"the usage\\": is text"}}]}', false],
      ['{"choices":[{"delta":{"content":"usage"}}]}', false],
      ['{"input_usage":{"a":1}}', false],
      ['{"usage":0}', true],
    ];
    for (const [data, expected] of cases) {
      const [fromBytes] = decodeIn([Buffer.from(`data: ${data}\n\n`)]);
      expect(fromBytes.wireBytes, data).to.not.equal(undefined);
      expect(fromBytes.hasKey('usage'), data).to.equal(expected);
      expect(fromBytes.data, data).to.equal(data);
      expect(fromBytes.hasKey('usage'), data).to.equal(expected);
    }
  });

  it('answers for each frame of one read alone, in order or not, though the frames share the read\'s bytes', () => {
    const read = Buffer.from(
      'data: {"choices":[{"delta":{"content":"a"}}],"usage":null}\n\n' +
        'data: {"choices":[{"delta":{"content":"b"}}],"usage":null}\n\n' +
        'data: {"choices":[],"usage":{"prompt_tokens":1}}\n\n' +
        'data: {"choices":[{"delta":{"content":"c"}}]}\n\n',
    );
    const frames = decodeIn([read]);
    const expected = [false, false, true, false];
    expect(frames.map((f) => f.hasKey('usage'))).to.deep.equal(expected);
    // a second reader asks again from the first frame, and backwards
    expect(frames.map((f) => f.hasKey('usage'))).to.deep.equal(expected);
    expect([...frames].reverse().map((f) => f.hasKey('usage'))).to.deep.equal([...expected].reverse());
    expect(frames.map((f) => f.mentions('"content"'))).to.deep.equal([true, true, false, true]);
    expect(frames.map((f) => f.mentions('"b"'))).to.deep.equal([false, true, false, false]);
    // one frame asked alone searches that frame only: the next frame's "b" is not this one's
    expect(frames[0].mentionsInFrame('"b"')).to.equal(false);
    expect(frames.map((f) => f.mentionsInFrame('"content"'))).to.deep.equal([true, true, false, true]);
  });

  it('takes a whole `data: ` frame at once as the line-by-line decoding would, and leaves the near misses to that', () => {
    const read = Buffer.from('data: a\r\n\ndata:b\n\ndata: \n\ndata: c\ndata: d\n\ndatum: f\n\nData: g\n\ndata: e\n\n');
    const whole = decodeIn([read]);
    // one byte a read never completes a frame in one read: every line goes through the line-by-line path
    const byByte = decodeIn([...read].map((b) => Uint8Array.of(b)));
    const seen = (frames: SseFrame[]) => frames.map((f) => ({ event: f.event, data: f.data, wire: wireOf(f) }));
    expect(seen(whole)).to.deep.equal(seen(byByte));
    expect(seen(whole)).to.deep.equal([
      { event: undefined, data: 'a', wire: undefined },
      { event: undefined, data: 'b', wire: undefined },
      { event: undefined, data: '', wire: 'data: \n\n' },
      { event: undefined, data: 'c\nd', wire: undefined },
      { event: undefined, data: 'e', wire: 'data: e\n\n' },
    ]);
  });

  it('survives a body that arrives one byte at a time', () => {
    const frames = decodeIn([...body].map((b) => Uint8Array.of(b)));
    expect(frames.map((f) => ({ event: f.event, data: f.data }))).to.deep.equal(expected);
    expect(Buffer.concat(frames.map((f) => f.wireBytes!)).toString('utf8')).to.equal(frames.map((f) => f.toWire()).join(''));
  });

  it('reads CRLF line endings at every split, and does not pass their bytes through as they came', () => {
    const crlf = Buffer.from(body.toString('utf8').replace(/\n/g, '\r\n'));
    for (let cut = 0; cut <= crlf.length; cut++) {
      const frames = decodeIn([crlf.subarray(0, cut), crlf.subarray(cut)]);
      expect(frames.map((f) => ({ event: f.event, data: f.data })), `split at byte ${cut}`).to.deep.equal(expected);
      expect(frames.every((f) => f.wireBytes === undefined)).to.equal(true);
    }
  });

  it('keeps the upstream bytes only for a frame written the way the gateway writes it', () => {
    const frames = decodeIn([
      Buffer.from('data:{"a":1}\n\nid: 7\ndata: {"b":2}\n\ndata: x\ndata: y\n\ndata: {"c":3}\nevent: late\n\n: note\ndata: {"d":4}\n\nevent: e\ndata: {"f":5}\n\n'),
    ]);
    expect(frames.map((f) => f.data)).to.deep.equal(['{"a":1}', '{"b":2}', 'x\ny', '{"c":3}', '{"d":4}', '{"f":5}']);
    expect(frames.map(wireOf)).to.deep.equal([undefined, undefined, undefined, undefined, undefined, 'event: e\ndata: {"f":5}\n\n']);
    // what is written is the same either way
    expect(frames.map((f) => f.toWire())).to.deep.equal(['data: {"a":1}\n\n', 'data: {"b":2}\n\n', 'data: x\ny\n\n', 'event: late\ndata: {"c":3}\n\n', 'data: {"d":4}\n\n', 'event: e\ndata: {"f":5}\n\n']);
  });

  it('drops the upstream bytes of a frame once its payload changes', () => {
    const [edited, replaced] = decodeIn([Buffer.from('data: {"a":1}\n\ndata: {"b":2}\n\n')]);
    expect(edited.wireBytes).to.not.equal(undefined);
    edited.json.a = 2;
    edited.markChanged();
    replaced.json = { b: 3 };
    expect([edited.wireBytes, replaced.wireBytes]).to.deep.equal([undefined, undefined]);
    expect([edited.toWire(), replaced.toWire()]).to.deep.equal(['data: {"a":2}\n\n', 'data: {"b":3}\n\n']);
  });

  it('skips a byte order mark before the first line, even one split across reads', () => {
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('data: {"a":1}\n\n')]);
    expect(decodeIn([withBom]).map((f) => f.data)).to.deep.equal(['{"a":1}']);
    expect(decodeIn([withBom.subarray(0, 1), withBom.subarray(1)]).map((f) => f.data)).to.deep.equal(['{"a":1}']);
    expect(decodeIn([withBom.subarray(0, 2), withBom.subarray(2, 5), withBom.subarray(5)]).map((f) => f.data)).to.deep.equal(['{"a":1}']);
  });

  it('takes string chunks too (the plugin SDK decoder)', () => {
    const decoder = new SseDecoder();
    expect([...decoder.push('data: {"a"'), ...decoder.push(':"é"}\n\n')].map((f) => f.json)).to.deep.equal([{ a: 'é' }]);
  });
});
