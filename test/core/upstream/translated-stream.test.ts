import { expect } from 'chai';
import type { HttpOperation } from '../../../core/plugins/contracts';
import { ClientSignal } from '../../../core/pipeline/client-signal';
import { SseFrame } from '../../../core/streaming/sse-frame';
import { SseDecoder } from '../../../core/streaming/sse-parser';
import { TranslatedStream } from '../../../core/upstream/translated-stream';
import { rejection } from '../../support/rejection';

/**
 * TranslatedStream: an upstream body's reads -> batches of client frames, through a provider's event
 * translator. The body is a plain source of byte chunks (what undici hands over); the translators are
 * small provider operations written for each case.
 */

/** A body of the given reads; records whether the reader closed it early. */
function body(reads: string[]) {
  const source = { closed: false, reads: 0 };
  const iterable: AsyncIterable<Uint8Array> = {
    [Symbol.asyncIterator]: () => ({
      next: async () => (source.reads < reads.length ? { done: false, value: Buffer.from(reads[source.reads++]) } : { done: true, value: undefined }),
      return: async () => {
        source.closed = true;
        return { done: true, value: undefined };
      },
    }),
  };
  return { iterable, source };
}

/** A pass-through chat operation, or one with the given event translator and closing frames. */
function operation(parts: Partial<Pick<HttpOperation, 'fromUpstreamEvent' | 'endOfStream'>> = {}): HttpOperation {
  return { toUpstream: () => ({ path: '/', headers: {}, body: '' }), fromUpstream: (x: unknown) => x, ...parts };
}

async function drain(stream: TranslatedStream): Promise<{ batches: string[][]; error?: unknown }> {
  const batches: string[][] = [];
  try {
    for (let r = await stream.next(); !r.done; r = await stream.next()) batches.push(r.value.map((f) => f.data));
  } catch (error) {
    return { batches, error };
  }
  return { batches };
}

const translated = (reads: string[], op = operation(), format: 'chat' | 'messages' = 'chat') => {
  const b = body(reads);
  return { stream: new TranslatedStream(b.iterable, new SseDecoder(), op, {} as never, format, ClientSignal.create()), source: b.source };
};

describe('translated stream (upstream events -> client frames, a batch per read)', () => {
  it('gives a batch per read that completed frames, and skips reads that completed none', async () => {
    const { stream } = translated(['data: {"a":1}\n\ndata: {"b"', ':2}\n\n', 'data: [DONE]\n\n']);
    expect(await drain(stream)).to.deep.equal({ batches: [['{"a":1}'], ['{"b":2}'], ['[DONE]']] });
  });

  it('reads on through reads that complete no frame: a long frame a byte at a time is one batch', async () => {
    const frame = `data: {"text":"${'x'.repeat(5000)}"}\n\n`;
    const { stream } = translated([...frame.split(''), 'data: [DONE]\n\n']);
    const { batches, error } = await drain(stream);
    expect(error).to.equal(undefined);
    expect(batches.map((b) => b.map((d) => d.length))).to.deep.equal([[frame.length - 8], [6]]);
  });

  it('fails a stream that ends without its terminal frame as cut', async () => {
    const { stream } = translated(['data: {"a":1}\n\n']);
    const { batches, error } = await drain(stream);
    expect(batches).to.deep.equal([['{"a":1}']]);
    expect(error).to.include({ code: 'upstream_stream_cut' });
  });

  it('sends the frames a translator made before it threw, then fails as an unreadable answer (not a cut stream), and closes the upstream', async () => {
    const op = operation({
      fromUpstreamEvent: (frame: SseFrame) => {
        if (frame.json.boom) throw new Error('translator bug');
        return SseFrame.fromJson({ seen: frame.json.n });
      },
    });
    const { stream, source } = translated(['data: {"n":1}\n\ndata: {"boom":true}\n\ndata: {"n":3}\n\n', 'data: [DONE]\n\n'], op);
    const { batches, error } = await drain(stream);
    expect(batches).to.deep.equal([['{"seen":1}']]);
    expect(error).to.include({ status: 502, code: 'upstream_bad_response', message: 'The upstream sent a response the gateway could not read.' });
    expect(source.closed).to.equal(true);
  });

  it('adds the closing frames a translator makes at the end, which may be the terminal one', async () => {
    const op = operation({
      fromUpstreamEvent: (frame: SseFrame) => (frame.isDone ? null : frame),
      endOfStream: () => [SseFrame.fromJson({ type: 'message_stop' }, 'message_stop')],
    });
    const { stream } = translated(['event: message_start\ndata: {"type":"message_start"}\n\n', 'data: [DONE]\n\n'], op, 'messages');
    expect(await drain(stream)).to.deep.equal({ batches: [['{"type":"message_start"}'], ['{"type":"message_stop"}']] });
  });

  it('closes the upstream when the reader stops early, and ends', async () => {
    const { stream, source } = translated(['data: {"a":1}\n\n', 'data: {"b":2}\n\n', 'data: [DONE]\n\n']);
    expect((await stream.next()).value.map((f: SseFrame) => f.data)).to.deep.equal(['{"a":1}']);
    await stream.return();
    expect(source.closed).to.equal(true);
    expect(await stream.next()).to.deep.equal({ done: true, value: undefined });
  });

  it('names a transport failure of a read as a cut stream', async () => {
    const failing: AsyncIterable<Uint8Array> = {
      [Symbol.asyncIterator]: () => ({ next: async () => Promise.reject(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })) }),
    };
    const stream = new TranslatedStream(failing, new SseDecoder(), operation(), {} as never, 'chat', ClientSignal.create());
    expect(await rejection(stream.next())).to.include({ code: 'upstream_stream_cut' });
  });
});
