import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import OpenAI from 'openai';
import type { TestGateway } from '../../support/start-gateway';
import { testConfig } from '../../support/test-config';
import { signatureOf } from '../../support/signing-provider-plugin';
import { FakeOpenAI, chatCompletion } from '../../support/fake-openai';

const PLUGIN = path.join(__dirname, '..', '..', 'support', 'signing-provider-plugin.js');
const SIGNING_SECRET = 'signing-secret-CANARY-77';
const ADMIN_KEY = 'admin-key-hooks';

function frame(value: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(value));
  const length = Buffer.alloc(4);
  length.writeUInt32BE(json.length);
  return Buffer.concat([length, json]);
}

/**
 * A token endpoint and an upstream in one server: /token hands out numbered tokens; /generate accepts a
 * request only with the newest token and a signature over the exact method, URL and bytes it received.
 */
class FakeSignedUpstream {
  tokensIssued = 0;
  readonly received: { url: string; authorization?: string; body: any }[] = [];
  url = '';
  private server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      if (req.url === '/token') {
        this.tokensIssued++;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ access_token: `tok-${this.tokensIssued}`, expires_in: 60 }));
        return;
      }
      const expected = signatureOf(SIGNING_SECRET, req.method!, this.url + req.url, raw);
      if (req.headers['x-signature'] !== expected || req.headers.authorization !== `Bearer tok-${this.tokensIssued}`) {
        res.writeHead(403, { 'content-type': 'application/json' });
        res.end('{"error":"bad signature or token"}');
        return;
      }
      const body = JSON.parse(raw.toString('utf8'));
      this.received.push({ url: req.url!, authorization: req.headers.authorization, body });
      if (body.stream) {
        res.writeHead(200, { 'content-type': 'application/x-frames' });
        const chunk = (delta: unknown, extra: object = {}) => ({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: null }], ...extra });
        const all = Buffer.concat([
          frame({ kind: 'chunk', chunk: chunk({ role: 'assistant', content: 'Hel' }) }),
          frame({ kind: 'chunk', chunk: chunk({ content: 'lo' }) }),
          frame({ kind: 'chunk', chunk: { id: 'c1', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } } }),
        ]);
        if (body.messages[0].content === 'cut') {
          // the first frame whole, then half of the second, and the body ends
          res.end(all.subarray(0, all.indexOf(Buffer.from('"lo"')) ));
          return;
        }
        // split mid-frame, so the decoder has to hold partial frames across chunks
        res.write(all.subarray(0, 7));
        setTimeout(() => res.end(all.subarray(7)), 5);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'r1', object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: 'signed hello' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }));
    });
  });
  async start() {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }
  stop() {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(r));
  }
}

/** The newest request-log entry's cost (a stream's entry is written as it ends, just after the client's last read). */
async function lastLoggedCost(gw: TestGateway, model: string): Promise<number | undefined> {
  for (let i = 0; i < 50; i++) {
    const logs = (await fetch(`${gw.url}/admin/v1/logs?model=${model}&limit=5`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } }).then((r) => r.json())) as { data: { cost: number }[] };
    // the three JSON calls and two streams of this file, all logged: the newest is the last stream
    if (logs.data.length >= 5) return logs.data[0].cost;
    await new Promise((r) => setTimeout(r, 20));
  }
  return undefined;
}

describe('provider hooks: prepareRequest (signing, cached tokens) and a provider stream decoder', () => {
  let upstream: FakeSignedUpstream;
  let gw: TestGateway;
  let client: OpenAI;
  let now = 1_700_000_000_000;

  before(async () => {
    upstream = await new FakeSignedUpstream().start();
    gw = await testConfig()
      .withKey('sk-client-1')
      .withProvider({ id: 'signed', type: 'signed-llm', baseUrl: upstream.url, apiKey: SIGNING_SECRET, options: { tokenUrl: `${upstream.url}/token` } })
      .withModel('signed-model', { model: 'dep-1', price: { inputPerMTok: 1, outputPerMTok: 2 } })
      .withProvider({ id: 'broken', type: 'signed-llm', baseUrl: upstream.url, apiKey: SIGNING_SECRET, options: { tokenUrl: `${upstream.url}/token`, failWith: SIGNING_SECRET } })
      .withModel('broken-model', { model: 'dep-2' })
      .with({ plugins: [PLUGIN], routing: { retries: 0 }, adminKey: ADMIN_KEY })
      .start({ clock: { now: () => now } });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-client-1', maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('signs the final URL and body bytes, and fetches a token once while it is valid, again once it expired', async () => {
    const first = await client.chat.completions.create({ model: 'signed-model', messages: [{ role: 'user', content: 'héllo' }] });
    expect(first.choices[0].message.content).to.equal('signed hello');
    await client.chat.completions.create({ model: 'signed-model', messages: [{ role: 'user', content: 'again' }] });
    expect(upstream.tokensIssued).to.equal(1);
    expect(upstream.received.map((r) => [r.url, r.authorization])).to.deep.equal([
      ['/generate?deployment=dep-1', 'Bearer tok-1'],
      ['/generate?deployment=dep-1', 'Bearer tok-1'],
    ]);
    now += 61_000;
    await client.chat.completions.create({ model: 'signed-model', messages: [{ role: 'user', content: 'later' }] });
    expect(upstream.tokensIssued).to.equal(2);
    expect(upstream.received.at(-1)!.authorization).to.equal('Bearer tok-2');
  });

  it('reads a binary framed stream with the provider decoder; the openai client assembles it and the stream is priced', async () => {
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-client-1', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'signed-model', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'stream please' }] }),
    });
    const text = await response.text();
    expect(text).to.match(/data: \[DONE\]\n\n$/);
    const stream = await client.chat.completions.create({ model: 'signed-model', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'stream please' }] });
    let content = '';
    let usage: unknown;
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(content).to.equal('Hello');
    expect(usage).to.deep.equal({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
    expect(upstream.received.at(-1)!.body.stream).to.equal(true);
    // 5 input tokens at $1/M + 2 output tokens at $2/M
    expect(await lastLoggedCost(gw, 'signed-model')).to.equal(0.000009);
  });

  it('a body that ends inside a binary frame is a cut stream (the decoder\'s end() throws)', async () => {
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-client-1', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'signed-model', stream: true, messages: [{ role: 'user', content: 'cut' }] }),
    });
    const text = await response.text();
    expect(text).to.include('"content":"Hel"');
    expect(text).to.include('"code":"upstream_stream_cut"');
    expect(text).not.to.include('[DONE]');
  });

  it('a hook that fails with a plain error is a 502 upstream_auth_failed that repeats nothing of its message', async () => {
    const err = await client.chat.completions.create({ model: 'broken-model', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(err).to.be.instanceOf(OpenAI.APIError);
    expect(err.status).to.equal(502);
    expect(err.code).to.equal('upstream_auth_failed');
    expect(JSON.stringify(err.error)).not.to.include(SIGNING_SECRET);
    expect(gw.logLines.join('\n')).not.to.include(SIGNING_SECRET);
  });
});

describe('each provider plugin keeps its own state in deps.store', () => {
  let vendorA: FakeOpenAI;
  let vendorB: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    vendorA = await new FakeOpenAI().start();
    vendorB = await new FakeOpenAI().start();
    vendorA.script = vendorB.script = { kind: 'json', body: chatCompletion('ok') };
    gw = await testConfig()
      .withKey('sk-client-store', { id: 'app' })
      .withProvider({ id: 'a', type: 'vendor-a', baseUrl: vendorA.url, options: { token: 'token-of-vendor-a' } })
      .withModel('model-a')
      .withProvider({ id: 'b', type: 'vendor-b', baseUrl: vendorB.url, options: { token: 'token-of-vendor-b' } })
      .withModel('model-b')
      .with({ plugins: [path.join(__dirname, '..', '..', 'support', 'stateful-provider-plugins.js')], routing: { retries: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await vendorA.stop();
    await vendorB.stop();
  });

  it('sends each vendor the token its own plugin stored, not the one another plugin stored under the same key', async () => {
    const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-client-store', maxRetries: 0 });
    for (const model of ['model-a', 'model-b', 'model-a', 'model-b']) {
      const { choices } = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
      expect(choices[0].message.content).to.equal('ok');
    }
    expect(vendorA.requests.map((r) => r.headers.authorization)).to.deep.equal(['Bearer token-of-vendor-a', 'Bearer token-of-vendor-a']);
    expect(vendorB.requests.map((r) => r.headers.authorization)).to.deep.equal(['Bearer token-of-vendor-b', 'Bearer token-of-vendor-b']);
  });
});
