/**
 * A client that reads a long stream slowly holds the upstream back through the gateway: the gateway does
 * not read (and keep) the upstream's answer faster than the client takes it (issue 16). Real sockets end to
 * end: a raw HTTP client that stops reading, the gateway, an upstream that writes as fast as its socket
 * takes the bytes.
 */
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { PacedWriter, untilHeldBack } from '../support/paced-writer';

const KEY = 'sk-slow-reader-CANARY-31c';
const FRAMES = 32_000;
const PIECE = 'x'.repeat(4_000);
const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-long', object: 'chat.completion.chunk', created: 1700000000, model: 'upstream-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const FRAME = chunk({ content: PIECE });

/** An OpenAI upstream that streams FRAMES pieces of text as fast as its socket takes them. */
class LongStreamUpstream extends PacedWriter {
  url = '';
  /** the connection closed before the stream was over */
  cut = false;
  private server?: http.Server;

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      req.resume();
      res.on('close', () => (this.cut ||= !res.writableFinished));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk({ role: 'assistant', content: '' }));
      let frames = 0;
      this.pump(res, () => (frames++ < FRAMES ? FRAME : undefined), chunk({}, 'stop') + 'data: [DONE]\n\n');
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  override reset(): void {
    super.reset();
    this.cut = false;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a slow stream reader holds the upstream back through the gateway', () => {
  let upstream: LongStreamUpstream;
  let gw: TestGateway;

  before(async () => {
    upstream = await new LongStreamUpstream().start();
    gw = await testConfig()
      .withKey(KEY)
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model' })
      .with({ routing: { retries: 0 }, responses: { timeLimitSeconds: 1 } })
      .start();
  });
  beforeEach(() => upstream.reset());
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  /** A streamed chat completion (or other stream) from a client that reads nothing after the first bytes until told to. */
  async function stream(path = '/v1/chat/completions', body: object = { model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'Write a lot.' }] }): Promise<http.IncomingMessage> {
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' } }, resolve);
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
    expect(res.statusCode).to.equal(200);
    await new Promise((resolve) => res.once('readable', resolve));
    return res;
  }

  it('the upstream writes only what the sockets on the way hold while the client does not read, and the whole stream arrives once it reads on', async () => {
    const res = await stream();
    await untilHeldBack(upstream);
    const total = FRAMES * FRAME.length;
    expect(upstream.finished).to.equal(false);
    // the kernel buffers of two loopback connections and the gateway's small queues, far from the 128 MiB answer
    expect(upstream.written).to.be.below(total / 4);
    let text = '';
    let tail = '';
    res.setEncoding('utf8');
    for await (const piece of res) {
      tail = (tail + piece).slice(-100);
      text = text.length < 200 ? text + piece : text;
    }
    expect(text.startsWith('data: ')).to.equal(true);
    expect(tail.endsWith('data: [DONE]\n\n')).to.equal(true);
    expect(upstream.finished).to.equal(true);
  });

  it('a client that goes away while the upstream is held back closes the upstream connection', async () => {
    const res = await stream();
    await untilHeldBack(upstream);
    res.destroy();
    while (!upstream.cut) await wait(10);
    expect(upstream.finished).to.equal(false);
  });

  it('a Responses stream whose client stops reading still ends at responses.timeLimitSeconds: the upstream is let go and the response logged', async () => {
    const res = await stream('/v1/responses', { model: 'gpt-test', stream: true, input: 'Write a lot.' });
    try {
      await untilHeldBack(upstream);
      await gw.gateway.services.pipeline.whenSettled(5_000);
      const entry = (await gw.gateway.services.requestLog.query({ limit: 10 })).data.find((e) => e.endpoint === 'responses');
      expect(entry?.details).to.deep.include({ incomplete: 'time_limit' });
      while (!upstream.cut) await wait(10);
      expect(upstream.finished).to.equal(false);
    } finally {
      res.destroy();
    }
  });
});

