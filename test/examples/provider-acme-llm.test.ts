import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import OpenAI from 'openai';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const PLUGIN = path.join(__dirname, '..', '..', 'examples', 'provider-acme-llm', 'index.js');
const ACME_KEY = 'acme-secret-CANARY-42';

/** A fake Acme LLM server speaking the example's wire format; records what it receives. */
class FakeAcme {
  readonly received: { path: string; headers: http.IncomingHttpHeaders; body: any }[] = [];
  answer: (body: any) => { status: number; json?: unknown; events?: unknown[] } = () => ({ status: 200, json: {} });
  private server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw);
      this.received.push({ path: req.url ?? '', headers: req.headers, body });
      const reply = this.answer(body);
      if (reply.events) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const e of reply.events) res.write(`data: ${JSON.stringify(e)}\n\n`);
        res.end();
        return;
      }
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.json));
    });
  });
  url = '';
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

describe('example provider plugin (examples/provider-acme-llm), loaded from the config', () => {
  let acme: FakeAcme;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    acme = await new FakeAcme().start();
    gw = await testConfig()
      .withKey('sk-client-1')
      .withProvider({ id: 'acme', type: 'acme-llm', baseUrl: acme.url, apiKey: ACME_KEY, options: { defaultMaxTokens: 256 } })
      .withModel('acme-large', { model: 'large-2', price: { inputPerMTok: 1, outputPerMTok: 1 } })
      .with({ plugins: [PLUGIN] })
      .start({ clock: { now: () => 1_700_000_000_000 } });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-client-1', maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await acme.stop();
  });

  it('translates a chat completion to the Acme API and back', async () => {
    acme.answer = () => ({ status: 200, json: { id: 'gen-1', output: { text: 'Bonjour !' }, stop: 'end', usage: { input_tokens: 12, output_tokens: 3 } } });
    const { data, response } = await client.chat.completions
      .create({ model: 'acme-large', temperature: 0.3, messages: [{ role: 'system', content: 'Answer in French.' }, { role: 'user', content: 'Hello!' }] })
      .withResponse();
    expect(acme.received.at(-1)).to.deep.include({ path: '/v2/generate' });
    expect(acme.received.at(-1)!.headers['x-acme-key']).to.equal(ACME_KEY);
    expect(acme.received.at(-1)!.body).to.deep.equal({ model: 'large-2', system: 'Answer in French.', turns: [{ role: 'user', text: 'Hello!' }], max_new_tokens: 256, temperature: 0.3 });
    expect(data).to.deep.equal({
      id: 'chatcmpl-gen-1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'acme-large',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Bonjour !' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
    });
    expect(response.headers.get('x-gateway-response-cost')).to.equal('0.000015');
  });

  it('streams Acme tokens as chat.completion.chunk frames', async () => {
    acme.answer = () => ({ status: 200, events: [{ type: 'token', text: 'Hel' }, { type: 'token', text: 'lo' }, { type: 'done', stop: 'length', usage: { input_tokens: 2, output_tokens: 2 } }] });
    const stream = await client.chat.completions.create({ model: 'acme-large', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    let finish: string | null = null;
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect({ text, finish, usage }).to.deep.equal({ text: 'Hello', finish: 'length', usage: { prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 } });
    expect(acme.received.at(-1)!.body.stream).to.equal(true);
  });

  it('maps Acme errors to the gateway error model without echoing the Acme key', async () => {
    acme.answer = () => ({ status: 429, json: { error: { kind: 'rate', detail: `slow down ${ACME_KEY}` } } });
    let error: InstanceType<typeof OpenAI.APIError> | undefined;
    try {
      await client.chat.completions.create({ model: 'acme-large', messages: [{ role: 'user', content: 'hi' }] });
    } catch (err) {
      error = err as InstanceType<typeof OpenAI.APIError>;
    }
    expect(error).to.be.instanceOf(OpenAI.RateLimitError);
    expect(error?.code).to.equal('upstream_rate_limited');
    expect(JSON.stringify(error?.error)).to.not.include(ACME_KEY);
  });

  it('refuses content the provider cannot translate with a clear 400', async () => {
    let error: InstanceType<typeof OpenAI.APIError> | undefined;
    try {
      await client.chat.completions.create({ model: 'acme-large', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] }] });
    } catch (err) {
      error = err as InstanceType<typeof OpenAI.APIError>;
    }
    expect(error?.status).to.equal(400);
    expect(error?.code).to.equal('unsupported_content');
    expect(error?.param).to.equal('messages[0].content[0]');
  });

  it('validates the provider options at boot, naming the option path', async () => {
    let error: Error | undefined;
    try {
      await testConfig()
        .withProvider({ id: 'acme', type: 'acme-llm', baseUrl: acme.url, options: { defaultMaxTokens: 0 } })
        .withModel('acme-large')
        .with({ plugins: [PLUGIN] })
        .start();
    } catch (err) {
      error = err as Error;
    }
    expect(error?.name).to.equal('PluginError');
    expect(error?.message).to.match(/^providers\[0\]\.options: .*defaultMaxTokens/);
  });
});
