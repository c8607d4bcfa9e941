import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayError } from '../../../core/errors/gateway-error';
import type { StreamedBody } from '../../../core/upstream/streamed-answer';
import { ClientAbortError, UpstreamClient, translateTransportError } from '../../../core/upstream/upstream-client';
import { ClientSignal } from '../../../core/pipeline/client-signal';
import { rejection } from '../../support/rejection';
import { getEventListeners } from 'node:events';
import { PacedWriter, untilHeldBack } from '../../support/paced-writer';

/**
 * UpstreamClient.send, the streamed exchange: undici's dispatch with a handler whose body is fed by
 * undici's chunks (core/upstream/streamed-answer.ts), held back when its reader falls behind. Real sockets
 * on loopback, upstreams that write long streams or misbehave on purpose.
 */
const DEFAULTS = { connectMs: 5_000, firstByteMs: 5_000, idleMs: 5_000, totalMs: 30_000 };
const POST = { path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: '{"model":"m","stream":true}' };
const MiB = 1024 * 1024;

/** A long stream's bytes: byte i is i % 251, a pattern that shows a lost, doubled or reordered chunk. */
const CHUNK = 16 * 1024;
const PATTERN = Buffer.from(Array.from({ length: CHUNK * 4 + 251 }, (_, i) => i % 251));
const patternAt = (offset: number, length: number) => PATTERN.subarray(offset % 251, (offset % 251) + length);

interface LongStream {
  url: string;
  /** how far the upstream's answer has got */
  writer: PacedWriter;
  /** resolves when the upstream sees the connection close before it finished */
  closed: Promise<void>;
  stop(): Promise<void>;
}

/** An upstream that writes `total` bytes of the pattern as fast as its socket takes them. */
async function longStream(total: number): Promise<LongStream> {
  const writer = new PacedWriter();
  let sawClose!: () => void;
  const closed = new Promise<void>((resolve) => (sawClose = resolve));
  const server = http.createServer((req, res) => {
    req.resume();
    res.on('close', () => {
      if (!res.writableFinished) sawClose();
    });
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    writer.pump(res, () => (writer.written < total ? patternAt(writer.written, Math.min(CHUNK, total - writer.written)) : undefined));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    writer,
    closed,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Read `body` to its end, checking every byte against the pattern from `offset`; the bytes read. */
async function readPattern(body: AsyncIterable<Uint8Array>, offset = 0): Promise<number> {
  let at = offset;
  for await (const chunk of body) {
    // in pieces no longer than PATTERN covers from any offset
    for (let i = 0; i < chunk.length; i += CHUNK * 4) {
      const piece = chunk.subarray(i, i + CHUNK * 4);
      if (!patternAt(at + i, piece.length).equals(piece)) throw new Error(`the bytes from ${at + i} are wrong`);
    }
    at += chunk.length;
  }
  return at - offset;
}

describe('core/upstream/upstream-client send (a streamed answer through undici dispatch)', () => {
  let client: UpstreamClient;
  let up: LongStream | undefined;
  let server: http.Server | undefined;

  beforeEach(() => {
    client = new UpstreamClient(DEFAULTS);
  });
  afterEach(async () => {
    await client.close();
    await up?.stop();
    up = undefined;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
      server = undefined;
    }
  });

  /** an upstream on loopback answering with `handle` */
  async function upstream(handle: http.RequestListener): Promise<string> {
    server = http.createServer(handle);
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('holds the upstream back while the reader does not read, instead of gathering the whole answer, and hands over every byte in order once it reads on', async () => {
    const total = 256 * MiB;
    up = await longStream(total);
    const res = await client.send(up.url, POST, ClientSignal.create());
    const iterator = res.body[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.done).to.equal(false);
    const firstLength = first.value!.length;
    await untilHeldBack(up.writer);
    // what is written and not read sits in the two sockets' kernel buffers and the 64 KiB the body may hold
    expect(up.writer.finished).to.equal(false);
    expect(up.writer.written).to.be.below(total / 4);
    const rest = await readPattern({ [Symbol.asyncIterator]: () => iterator }, firstLength);
    expect(firstLength + rest).to.equal(total);
    expect(up.writer.finished).to.equal(true);
  });

  it('hands the events an upstream wrote as separate HTTP chunks in one go to the reader together, in order', async () => {
    const events = Array.from({ length: 40 }, (_, i) => `data: {"n":${i}}\n\n`);
    const url = await upstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // one socket write of 40 chunked-encoding chunks: undici parses them in one pass
      res.socket!.cork();
      for (const e of events) res.write(e);
      res.end();
      process.nextTick(() => res.socket?.uncork());
    });
    const res = await client.send(url, POST, ClientSignal.create());
    const reads: string[] = [];
    for await (const chunk of res.body) reads.push(Buffer.from(chunk).toString('utf8'));
    expect(reads.join('')).to.equal(events.join(''));
    // one read per socket read, not one per chunk (loopback may still split the socket write)
    expect(reads.length).to.be.at.most(3);
  });

  it('reads the whole answer as text with text(), a leading BOM dropped, multi-byte characters split across chunks', async () => {
    const text = 'data: ' + 'é日本'.repeat(3_000) + '\n\n';
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
    const url = await upstream(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < bytes.length; i += 7) {
        res.write(bytes.subarray(i, i + 7));
        if (i % 700 === 0) await wait(1);
      }
      res.end();
    });
    const res = await client.send(url, POST, ClientSignal.create());
    expect([res.status, res.headers['content-type']]).to.deep.equal([200, 'text/event-stream']);
    expect(await res.body.text()).to.equal(text);
  });

  it('closes the upstream connection when the reader stops part way (the iterator returned), and the body then reads as ended', async () => {
    up = await longStream(256 * MiB);
    const res = await client.send(up.url, POST, ClientSignal.create());
    for await (const _chunk of res.body) break;
    await up.closed;
    expect(up.writer.finished).to.equal(false);
    expect(await res.body[Symbol.asyncIterator]().next()).to.deep.equal({ done: true, value: undefined });
  });

  it('closes the upstream connection on destroy(err), and the waiting read fails with err', async () => {
    let arrived!: () => void;
    const started = new Promise<void>((resolve) => (arrived = resolve));
    let sawClose!: () => void;
    const closed = new Promise<void>((resolve) => (sawClose = resolve));
    const url = await upstream((_req, res) => {
      res.on('close', () => sawClose());
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {}\n\n');
      arrived();
    });
    const res = await client.send(url, POST, ClientSignal.create());
    await started;
    const iterator = res.body[Symbol.asyncIterator]();
    await iterator.next();
    const waiting = iterator.next();
    const reason = new Error('the consumer gave up');
    res.body.destroy(reason);
    expect(await rejection(waiting)).to.equal(reason);
    await closed;
  });

  it('fails the waiting read as a client abort when the client goes away mid-stream, and closes the upstream connection', async () => {
    up = await longStream(256 * MiB);
    const gone = new AbortController();
    const res = await client.send(up.url, POST, ClientSignal.of(gone.signal));
    const iterator = res.body[Symbol.asyncIterator]();
    await iterator.next();
    await untilHeldBack(up.writer);
    // the chunks that wait unread are dropped: the read after the client left fails
    gone.abort(new Error('whatever the request was aborted with'));
    const err = await rejection(iterator.next());
    expect(err).to.be.instanceOf(ClientAbortError);
    await up.closed;
  });

  it('fails the waiting read with the transport error when the upstream connection breaks mid-stream (the caller names it a cut stream)', async () => {
    const url = await upstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {}\n\n', () => setTimeout(() => res.socket?.destroy(), 20));
    });
    const res = await client.send(url, POST, ClientSignal.create());
    const iterator = res.body[Symbol.asyncIterator]();
    expect((await iterator.next()).done).to.equal(false);
    const err = await rejection(iterator.next());
    expect(err).to.not.be.instanceOf(GatewayError);
    expect(translateTransportError(err).code).to.equal('upstream_unreachable');
  });

  it('does not count a reader that falls behind as an idle upstream: the idle timeout is for an upstream that stops sending', async () => {
    up = await longStream(16 * MiB);
    const res = await client.send(up.url, POST, ClientSignal.create(), { idleMs: 150 });
    const iterator = res.body[Symbol.asyncIterator]();
    const first = await iterator.next();
    // the upstream is held back for longer than the idle timeout
    await untilHeldBack(up.writer);
    await wait(300);
    const rest = await readPattern({ [Symbol.asyncIterator]: () => iterator }, first.value!.length);
    expect(first.value!.length + rest).to.equal(16 * MiB);
  });

  it('sends a request body that is a stream (an image edit\'s files)', async () => {
    let seen = '';
    const url = await upstream((req, res) => {
      req.setEncoding('utf8');
      req.on('data', (c: string) => (seen += c));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end('data: [DONE]\n\n');
      });
    });
    async function* parts() {
      yield Buffer.from('--b\r\n');
      await wait(5);
      yield Buffer.from('file bytes\r\n--b--\r\n');
    }
    const res = await client.send(url, { path: '/v1/images/edits', headers: { 'content-type': 'multipart/form-data; boundary=b' }, body: parts() }, ClientSignal.create());
    expect(await res.body.text()).to.equal('data: [DONE]\n\n');
    expect(seen).to.equal('--b\r\nfile bytes\r\n--b--\r\n');
  });

  it('leaves no abort listener on a shared request signal, whether each stream was read, cancelled or broken', async () => {
    let n = 0;
    const url = await upstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {}\n\n');
      const which = n++ % 3;
      if (which === 0) res.end('data: [DONE]\n\n');
      else if (which === 2) setTimeout(() => res.socket?.destroy(), 20);
    });
    const shared = new AbortController();
    const drain = async (body: StreamedBody) => {
      for await (const _chunk of body) void _chunk;
    };
    for (let i = 0; i < 2; i++) {
      await (await client.send(url, POST, ClientSignal.of(shared.signal))).body.text(); // read to its end
      for await (const _chunk of (await client.send(url, POST, ClientSignal.of(shared.signal))).body) break; // cancelled
      await rejection(drain((await client.send(url, POST, ClientSignal.of(shared.signal))).body)); // broken
    }
    expect(getEventListeners(shared.signal, 'abort')).to.have.length(0);
  });
});
