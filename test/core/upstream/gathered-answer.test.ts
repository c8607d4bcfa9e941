import { expect } from 'chai';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { GatewayError } from '../../../core/errors/gateway-error';
import { answerText } from '../../../core/upstream/gathered-answer';
import { ClientAbortError, UpstreamClient } from '../../../core/upstream/upstream-client';
import { ClientSignal } from '../../../core/pipeline/client-signal';
import { rejection } from '../../support/rejection';
import { getEventListeners } from 'node:events';

/**
 * UpstreamClient.sendAndRead, the non-streamed exchange: undici's dispatch with a handler that gathers the
 * answer (core/upstream/gathered-answer.ts) and one deadline timer per attempt. Real sockets on loopback,
 * upstreams that misbehave on purpose.
 */
const DEFAULTS = { connectMs: 20_000, firstByteMs: 5_000, idleMs: 5_000, totalMs: 10_000 };
const POST = { path: '/v1/chat/completions', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-upstream-CANARY-7777' }, body: '{"model":"m"}' };

interface Upstream {
  url: string;
  /** resolves when the upstream sees the request's connection close before it answered */
  closed: Promise<void>;
  stop(): Promise<void>;
}

async function upstream(handle: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Upstream> {
  let sawClose!: () => void;
  const closed = new Promise<void>((resolve) => (sawClose = resolve));
  const server = http.createServer((req, res) => {
    res.on('close', () => {
      if (!res.writableFinished) sawClose();
    });
    handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    closed,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('core/upstream/upstream-client sendAndRead (a whole answer through undici dispatch)', () => {
  let client: UpstreamClient;
  let up: Upstream | undefined;

  beforeEach(() => {
    client = new UpstreamClient(DEFAULTS);
  });
  afterEach(async () => {
    await client.close();
    await up?.stop();
    up = undefined;
  });

  it('gathers a JSON answer sent in many small chunks into the whole body, a leading BOM dropped', async () => {
    const json = JSON.stringify({ id: 'x', choices: [{ message: { content: 'é日本'.repeat(50) } }] });
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]);
    let seen = '';
    up = await upstream((req, res) => {
      req.setEncoding('utf8');
      req.on('data', (c: string) => (seen += c));
      req.on('end', async () => {
        res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'yes' });
        // 7-byte pieces split the multi-byte characters too
        for (let i = 0; i < bytes.length; i += 7) {
          res.write(bytes.subarray(i, i + 7));
          if (i % 70 === 0) await wait(1);
        }
        res.end();
      });
    });
    const answer = await client.sendAndRead(up.url, POST, ClientSignal.create());
    expect([answer.status, answer.headers['x-upstream'], seen]).to.deep.equal([200, 'yes', '{"model":"m"}']);
    expect(answer.bytes.equals(bytes)).to.equal(true);
    expect(answerText(answer.bytes)).to.equal(json);
  });

  it('hands back an error status with its body and headers (Retry-After for the retry decision)', async () => {
    up = await upstream((_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' });
      res.end('{"error":{"message":"slow down"}}');
    });
    const answer = await client.sendAndRead(up.url, POST, ClientSignal.create());
    expect([answer.status, answer.headers['retry-after'], answer.bytes.toString()]).to.deep.equal([429, '3', '{"error":{"message":"slow down"}}']);
  });

  it('answers 504 upstream_timeout when the first byte is late, and closes the upstream request', async () => {
    up = await upstream(() => undefined);
    const err = await rejection(client.sendAndRead(up.url, POST, ClientSignal.create(), { firstByteMs: 100 }));
    expect([err.status, err.code]).to.deep.equal([504, 'upstream_timeout']);
    await up.closed;
  });

  it('counts connecting inside the first-byte deadline: a TLS handshake that never ends is given up at that deadline, not at the connect timeout', async () => {
    // accepts TCP and never says a word, so undici's TLS handshake (part of connecting) hangs
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const startedAt = Date.now();
    try {
      const err = await rejection(client.sendAndRead(`https://127.0.0.1:${(silent.address() as AddressInfo).port}`, POST, ClientSignal.create(), { firstByteMs: 100 }));
      expect([err.status, err.code]).to.deep.equal([504, 'upstream_timeout']);
      // the connect timeout is 20 s; the deadline is 0.1 s
      expect(Date.now() - startedAt).to.be.below(10_000);
    } finally {
      // ends undici's pending connect, so the client closes without waiting for its connect timeout
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });

  it('answers 504 upstream_total_timeout when a JSON answer trickles in past totalMs, each chunk within the idle time', async () => {
    up = await upstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"a":"');
      const tick = setInterval(() => res.write('x'), 20);
      res.on('close', () => clearInterval(tick));
    });
    const err = await rejection(client.sendAndRead(up.url, POST, ClientSignal.create(), { firstByteMs: 1_000, idleMs: 1_000, totalMs: 300 }));
    expect([err.status, err.code]).to.deep.equal([504, 'upstream_total_timeout']);
    await up.closed;
  });

  it('answers 504 upstream_idle_timeout when the answer stalls between chunks', async () => {
    up = await upstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"a":');
    });
    const err = await rejection(client.sendAndRead(up.url, POST, ClientSignal.create(), { idleMs: 150 }));
    expect([err.status, err.code]).to.deep.equal([504, 'upstream_idle_timeout']);
  });

  it('cancels the upstream request when the client goes away, as a client abort', async () => {
    let arrived!: () => void;
    const requested = new Promise<void>((resolve) => (arrived = resolve));
    up = await upstream(() => arrived());
    const gone = new AbortController();
    const pending = client.sendAndRead(up.url, POST, ClientSignal.of(gone.signal));
    await requested;
    gone.abort(new Error('whatever the request was aborted with'));
    const err = await rejection(pending);
    expect(err).to.be.instanceOf(ClientAbortError);
    expect(err.code).to.equal('client_abort');
    await up.closed;
  });

  it('does not send anything for a client that is already gone', async () => {
    let requests = 0;
    up = await upstream((_req, res) => (requests++, res.end('{}')));
    const gone = new AbortController();
    gone.abort();
    const err = await rejection(client.sendAndRead(up.url, POST, ClientSignal.of(gone.signal)));
    expect([err.code, requests]).to.deep.equal(['client_abort', 0]);
  });

  it('reports a refused connection as 502 upstream_unreachable without the address', async () => {
    const err = await rejection(client.sendAndRead('http://127.0.0.1:1', POST, ClientSignal.create()));
    expect([err.status, err.code]).to.deep.equal([502, 'upstream_unreachable']);
    expect(err.message).to.not.include('127.0.0.1');
  });

  it('leaves no abort listener on a shared request signal, whether the answers came or the attempts failed', async () => {
    let hang = false;
    up = await upstream((_req, res) => {
      if (!hang) res.end('{}');
    });
    const shared = new AbortController();
    for (let i = 0; i < 3; i++) expect((await client.sendAndRead(up.url, POST, ClientSignal.of(shared.signal))).bytes.toString()).to.equal('{}');
    hang = true;
    for (let i = 0; i < 2; i++) expect((await rejection(client.sendAndRead(up.url, POST, ClientSignal.of(shared.signal), { firstByteMs: 50 }))).code).to.equal('upstream_timeout');
    expect(getEventListeners(shared.signal, 'abort')).to.have.length(0);
  });

  it('runs a provider prepareRequest hook before sending, and sends what it returns', async () => {
    let seen: { auth?: string; body: string } | undefined;
    up = await upstream((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen = { auth: req.headers.authorization, body };
        res.end('{"ok":true}');
      });
    });
    const answer = await client.sendAndRead(up.url, POST, ClientSignal.create(), {}, (wire) => ({ ...wire, headers: { ...wire.headers, authorization: 'Signed abc' } }));
    expect(answer.bytes.toString()).to.equal('{"ok":true}');
    expect(seen).to.deep.equal({ auth: 'Signed abc', body: '{"model":"m"}' });
  });
});
