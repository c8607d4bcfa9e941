/**
 * Acceptance QA of guardrails (issue 5) with third-party and SDK clients: the MCP SDK client against
 * `@modelcontextprotocol/server-everything` (its `echo` tool), the openai SDK against a fake upstream.
 */
import { expect } from 'chai';
import OpenAI from 'openai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { request } from 'undici';
import { FakeOpenAI, chatChunks, chatCompletion } from '../support/fake-openai';
import { startEverythingServer, type EverythingServer } from '../support/everything-server';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import piiMask from '../../guardrails/pii-mask';

const KEY = 'sk-qa-guard-CANARY-81';
const STRICT = 'sk-qa-guard-strict-CANARY-82';
const ADMIN = 'qa-admin-key-0123456789';

async function mcpClient(url: string, key: string): Promise<Client> {
  const client = new Client({ name: 'qa', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { 'x-gateway-api-key': `Bearer ${key}` } } }));
  return client;
}

describe('guardrails on MCP and model traffic with server-everything', function () {
  this.timeout(30_000);
  let everything: EverythingServer;
  let upstream: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    everything = await startEverythingServer();
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey(KEY, { id: 'qa', mcp: { servers: ['everything'] } })
      .withKey(STRICT, { id: 'strict', guardrails: ['house-rules'], mcp: { servers: ['everything'] } })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model', price: { inputPerMTok: 1, outputPerMTok: 2 } })
      .withMcpServer('everything', everything.url, { org: 'acme', pricePerCall: 0.25 })
      .with({
        adminKey: ADMIN,
        mcp: { healthCheckIntervalSeconds: 0 },
        guardrails: [
          { id: 'mask-pii', engine: 'pii-mask', phase: 'post', default: true },
          { id: 'house-rules', engine: 'block', options: { words: ['project falcon'], patterns: ['top\\s*secret'] } },
        ],
      })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
    await everything.stop();
  });

  it('masks the best-known example SSN as a US SSN, not as a phone number', async () => {
    const client = await mcpClient(gw.url, KEY);
    try {
      const result = await client.callTool({ name: 'echo', arguments: { message: 'SSN 078-05-1120 and 123-45-6789' } });
      expect(result.content).to.deep.equal([{ type: 'text', text: 'Echo: SSN [US_SSN] and [US_SSN]' }]);
    } finally {
      await client.close();
    }
  });

  it("masks server-everything's echo result and keeps the values out of the logs", async () => {
    const client = await mcpClient(gw.url, KEY);
    const values = ['jane.doe@example.com', '+44 20 7946 0958', '4111 1111 1111 1111', 'GB82 WEST 1234 5698 7654 32', '10.20.30.40'];
    try {
      const result = await client.callTool({ name: 'echo', arguments: { message: `mail ${values[0]}, call ${values[1]}, card ${values[2]}, iban ${values[3]}, ip ${values[4]}` } });
      expect(result.content).to.deep.equal([{ type: 'text', text: 'Echo: mail [EMAIL], call [PHONE], card [CREDIT_CARD], iban [IBAN], ip [IP_ADDRESS]' }]);
    } finally {
      await client.close();
    }
    const logs = (await (await fetch(`${gw.url}/admin/v1/logs?limit=20`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as { data: any[] };
    const entry = logs.data.find((e: any) => e.model === 'MCP: echo' && e.details?.guardrails?.some((g: any) => g.verdict === 'mask' && g.findings?.includes('IBAN')));
    expect(entry.details.guardrails).to.deep.include({ id: 'mask-pii', phase: 'post', verdict: 'mask', findings: ['CREDIT_CARD', 'EMAIL', 'IBAN', 'IP_ADDRESS', 'PHONE'] });
    const everything = JSON.stringify(logs) + gw.logLines.join('\n');
    for (const v of values) expect(everything).to.not.include(v);
  });

  it('blocks an echo call before server-everything sees it, as a tool error without the blocked words', async () => {
    const client = await mcpClient(gw.url, STRICT);
    try {
      const result = await client.callTool({ name: 'echo', arguments: { message: 'plans for Project  Falcon' } });
      expect(result.isError).to.equal(true);
      expect(JSON.stringify(result).toLowerCase()).to.not.include('falcon');
    } finally {
      await client.close();
    }
  });

  it('answers a blocked chat request with 400 guardrail_blocked in the OpenAI shape, never calling the upstream', async () => {
    upstream.requests.length = 0;
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: STRICT, maxRetries: 0 });
    const err = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'this is TOP secret' }] }).then(() => undefined, (e) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err.status).to.equal(400);
    expect(err.code).to.equal('guardrail_blocked');
    expect(err.message.toLowerCase()).to.not.include('top secret');
    expect(upstream.requests).to.have.length(0);
  });

  it('masks a model answer in the Responses API too', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('Write to jane.doe@example.com') };
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const response = await client.responses.create({ model: 'gpt-test', input: 'contact?' });
    expect(response.output_text).to.equal('Write to [EMAIL]');
  });
});

describe('guardrail config errors name the field', () => {
  it('names guardrails[i].engine for an engine no plugin provides', async () => {
    const err = await testConfig()
      .withProvider({ id: 'local', type: 'echo' })
      .withModel('echo')
      .with({ guardrails: [{ id: 'ok', engine: 'pii-mask' }, { id: 'typo', engine: 'pii-mask-v2' }] })
      .start().then(
      async (gw) => (await gw.close(), undefined),
      (e) => e as Error,
    );
    expect(err?.message).to.equal('guardrails[1].engine: unknown guardrail plugin "pii-mask-v2"');
  });
});

describe('MCP guardrails on gateway_proxy model tools (they are MCP tool calls too)', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey(KEY, { id: 'qa' })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model', price: { inputPerMTok: 1, outputPerMTok: 2 } })
      .with({
        guardrails: [
          { id: 'mask-results', engine: 'pii-mask', phase: 'post', on: ['mcp'], default: true },
          { id: 'no-falcon', engine: 'block', phase: 'pre', on: ['mcp'], default: true, options: { words: ['falcon'] } },
          { id: 'mask-args', engine: 'pii-mask', phase: 'pre', on: ['mcp'], default: true, options: { entities: ['EMAIL'] } },
        ],
      })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('masks the model answer of a gateway_proxy tool called through /mcp', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('Write to jane.doe@example.com') };
    const client = await mcpClient(gw.url, KEY);
    try {
      const result = await client.callTool({ name: 'gpt_test', arguments: { prompt: 'contact of bob@example.org?' } });
      expect(result.content).to.deep.equal([{ type: 'text', text: 'Write to [EMAIL]' }]);
      // the tool arguments were masked before the model saw them
      expect(upstream.last.body.messages).to.deep.equal([{ role: 'user', content: 'contact of [EMAIL]?' }]);
    } finally {
      await client.close();
    }
    const page = await gw.gateway.services.requestLog.query({ limit: 5 });
    const entry = page.data.find((e) => e.model === 'MCP: gpt_test')!;
    expect((entry.details?.guardrails as any[]).map((g) => [g.id, g.phase, g.verdict])).to.deep.equal([
      ['no-falcon', 'pre', 'allow'],
      ['mask-args', 'pre', 'mask'],
      ['mask-results', 'post', 'mask'],
    ]);
  });

  it('blocks a gateway_proxy tool call before the model sees it: a tool error, logged', async () => {
    upstream.requests.length = 0;
    const client = await mcpClient(gw.url, KEY);
    try {
      const result = await client.callTool({ name: 'gpt_test', arguments: { prompt: 'tell me about the Falcon' } });
      expect(result.isError).to.equal(true);
      expect(JSON.stringify(result).toLowerCase()).to.not.include('falcon');
    } finally {
      await client.close();
    }
    expect(upstream.requests).to.have.length(0);
    const page = await gw.gateway.services.requestLog.query({ limit: 5 });
    expect(page.data[0]).to.deep.include({ model: 'MCP: gpt_test', status: 400, errorCode: 'guardrail_blocked', keyId: 'qa', cost: 0 });
  });

  it('masks a gateway_proxy tool result inside the Responses loop before the calling model sees it', async () => {
    upstream.script = (req) => {
      const messages = req.body.messages as any[];
      if (messages[0].content === 'second opinion') return { kind: 'json', body: chatCompletion('Ask jane.doe@example.com') };
      const result = messages.find((m) => m.role === 'tool');
      if (result) return { kind: 'json', body: chatCompletion(`They said: ${result.content}`) };
      const message = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'gpt_test', arguments: '{"prompt":"second opinion"}' } }] };
      return { kind: 'json', body: chatCompletion('', undefined, { choices: [{ index: 0, message, finish_reason: 'tool_calls' }] }) };
    };
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const response = await client.responses.create({ model: 'gpt-test', input: 'who?', tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }] });
    expect(response.output[1]).to.deep.include({ type: 'mcp_call', name: 'gpt_test', output: 'Ask [EMAIL]' });
    expect(response.output_text).to.equal('They said: Ask [EMAIL]');
  });
});

describe('guardrails cannot be bypassed by the shape of a chat request', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;
  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey(KEY, { id: 'qa' })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model' })
      .with({ guardrails: [{ id: 'mask-pii', engine: 'pii-mask', phase: 'pre', default: true }] })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('masks tool-call arguments sent as an object instead of a JSON string', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('ok') };
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-test',
        messages: [
          { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'send', arguments: { to: 'jane.doe@example.com', n: 1 } } }] },
          { role: 'tool', tool_call_id: 'a', content: 'sent' },
        ],
      }),
    });
    expect(res.status).to.equal(200);
    expect(upstream.last.rawBody).to.not.include('jane.doe@example.com');
    expect(upstream.last.body.messages[0].tool_calls[0].function.arguments).to.deep.equal({ to: '[EMAIL]', n: 1 });
  });
});

describe('an engine that never answers is an engine failure after timeoutMs', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;
  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey(KEY, { id: 'qa', guardrails: ['hang-allow'] })
      .withKey(STRICT, { id: 'strict', guardrails: ['hang-block'] })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model' })
      .with({
        plugins: [require('node:path').join(__dirname, '..', 'guardrails', 'fixtures', 'hanging-guardrail.js')],
        guardrails: [
          { id: 'hang-allow', engine: 'never-answers', phase: 'pre', onError: 'allow', timeoutMs: 50 },
          { id: 'hang-block', engine: 'never-answers', phase: 'pre', onError: 'block', timeoutMs: 50 },
        ],
      })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('lets the call through with onError allow, recording the error', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('answered') };
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const { data, response } = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.choices[0].message.content).to.equal('answered');
    const page = await gw.gateway.services.requestLog.query({ limit: 5 });
    const entry = page.data.find((e) => e.id === response.headers.get('x-gateway-request-id'))!;
    expect(entry.details?.guardrails).to.deep.equal([{ id: 'hang-allow', phase: 'pre', verdict: 'error' }]);
  });

  it('blocks the call with onError block', async () => {
    upstream.requests.length = 0;
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: STRICT, maxRetries: 0 });
    const err = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }).then(() => undefined, (e) => e);
    expect(err?.status).to.equal(400);
    expect(err?.code).to.equal('guardrail_blocked');
    expect(upstream.requests).to.have.length(0);
  });
});

describe('an engine verdict of the wrong shape is an engine failure, never a key', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;
  const verdicts = [
    { action: 'mask', segments: [{ id: '__proto__', text: 'masked' }] },
    { action: 'mask', segments: [{ id: 'length', text: 'masked' }] },
    { action: 'mask', segments: [{ id: 0, text: 5 }] },
    { action: 'mask', segments: [null] },
    { action: 'mask', segments: [], findings: 'EMAIL' },
    { action: 'mask', segments: [], findings: [1] },
  ];
  before(async () => {
    upstream = await new FakeOpenAI().start();
    let config = testConfig().withOpenAI('oai', upstream, 'sk-provider').withModel('gpt-test', { model: 'upstream-model' });
    verdicts.forEach((_v, i) => (config = config.withKey(`sk-odd-verdict-${i}`, { id: `odd-${i}`, guardrails: [`odd-${i}`] })));
    gw = await config
      .with({
        plugins: [require('node:path').join(__dirname, '..', 'guardrails', 'fixtures', 'fixed-verdict-guardrail.js')],
        guardrails: verdicts.map((verdict, i) => ({ id: `odd-${i}`, engine: 'fixed-verdict', phase: 'pre' as const, onError: 'allow' as const, options: { verdict } })),
      })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('records an error and, with onError allow, sends the request unchanged', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('answered') };
    for (const [i, verdict] of verdicts.entries()) {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: `sk-odd-verdict-${i}`, maxRetries: 0 });
      const { data, response } = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
      expect(data.choices[0].message.content, JSON.stringify(verdict)).to.equal('answered');
      expect(upstream.last.body.messages, JSON.stringify(verdict)).to.deep.equal([{ role: 'user', content: 'hi' }]);
      const page = await gw.gateway.services.requestLog.query({ limit: 20 });
      const entry = page.data.find((e) => e.id === response.headers.get('x-gateway-request-id'))!;
      expect(entry.details?.guardrails, JSON.stringify(verdict)).to.deep.equal([{ id: `odd-${i}`, phase: 'pre', verdict: 'error' }]);
    }
    expect(([] as any).put).to.equal(undefined);
  });
});

describe('a stream blocked mid-way is still charged', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;
  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey(KEY, { id: 'qa' })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model', price: { inputPerMTok: 1, outputPerMTok: 2 } })
      .with({
        guardrails: [{ id: 'no-falcon', engine: 'block', phase: 'post', default: true, options: { words: ['falcon'] } }],
      })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('estimates the usage the upstream had not reported yet (its usage chunk comes last) and logs the charge', async () => {
    const pieces = ['The plan ', 'is ready. ', 'x'.repeat(400), ' Project Fal', 'con starts ', 'tomorrow.'];
    upstream.script = { kind: 'sse', events: chatChunks(pieces, { prompt_tokens: 50, completion_tokens: 120, total_tokens: 170 }) };
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Tell me the plan for the launch.' }], stream: true });
    let text = '';
    const err = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    })().then(() => undefined, (e) => e);
    expect(err?.error?.code).to.equal('guardrail_blocked');
    expect(text.toLowerCase()).to.not.include('falcon');
    const page = await gw.gateway.services.requestLog.query({ limit: 5 });
    const entry = page.data[0];
    expect(entry).to.deep.include({ model: 'gpt-test', errorCode: 'guardrail_blocked' });
    expect(entry.promptTokens).to.be.greaterThan(0);
    expect(entry.completionTokens).to.be.greaterThan(100);
    expect(entry.cost).to.be.greaterThan(0);
    expect(entry.details).to.deep.include({ usageEstimated: true });
  });

  it('checks a stream whose deltas carry their content as a list of text parts (some OpenAI-compatible servers)', async () => {
    const pieces = ['The plan ', 'is ready. ', ' Project Fal', 'con starts ', 'tomorrow.'];
    const listed = (events: any[]) => events.map((e) => ({ ...e, choices: e.choices.map((c: any) => (c.delta.content ? { ...c, delta: { content: [{ type: 'text', text: c.delta.content }] } } : c)) }));
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    upstream.script = { kind: 'sse', events: listed(chatChunks(pieces, { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 })) };
    const stream = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Tell me the plan.' }], stream: true });
    let text = '';
    const err = await (async () => {
      for await (const chunk of stream) {
        const content = chunk.choices[0]?.delta?.content as unknown;
        text += typeof content === 'string' ? content : Array.isArray(content) ? content.map((p: any) => p.text).join('') : '';
      }
    })().then(() => undefined, (e) => e);
    expect(err?.error?.code, text).to.equal('guardrail_blocked');
    expect(text.toLowerCase()).to.not.include('falcon');
    // the translations read such deltas' text: the Responses answer is checked too
    upstream.script = { kind: 'sse', events: listed(chatChunks(pieces, { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 })) };
    const res = await request(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', stream: true, input: 'Tell me the plan.' }),
    });
    const events = (await res.body.text()).split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    expect(events.find((e) => e.type === 'error')?.code).to.equal('guardrail_blocked');
    expect(events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('').toLowerCase()).to.not.include('falcon');
  });

  it('a Responses stream it blocks ends with response.failed reporting the usage the log charges', async () => {
    const pieces = ['The plan ', 'is ready. ', 'x'.repeat(400), ' Project Fal', 'con starts ', 'tomorrow.'];
    upstream.script = { kind: 'sse', events: chatChunks(pieces, { prompt_tokens: 50, completion_tokens: 120, total_tokens: 170 }) };
    // raw: the SDK stops at the error event, before the response.failed that follows it
    const res = await request(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', stream: true, input: 'Tell me the plan for the launch.' }),
    });
    const events = (await res.body.text()).split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    expect(events.find((e) => e.type === 'error')?.code).to.equal('guardrail_blocked');
    const failed = events.find((e) => e.type === 'response.failed');
    expect(failed, JSON.stringify(events.map((e) => e.type))).to.not.equal(undefined);
    await gw.gateway.services.pipeline.whenSettled(5_000);
    await gw.gateway.services.requestLog.writer.settled();
    const entry = (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0];
    expect(entry).to.deep.include({ endpoint: 'responses', errorCode: 'guardrail_blocked' });
    expect(entry.completionTokens).to.be.greaterThan(100);
    expect(failed.response.usage).to.deep.include({ input_tokens: entry.promptTokens, output_tokens: entry.completionTokens });
  });
});

describe('pii-mask recognises the phone numbers people write in examples', () => {
  const check = async (text: string) => {
    const engine = await piiMask.create({}, undefined as never);
    return engine.check({ phase: 'post', traffic: 'chat', target: 'm', segments: [{ id: 0, text, path: 'x' }] }, new AbortController().signal);
  };
  for (const [text, masked] of [
    ['call me at 555-123-4567', 'call me at [PHONE]'],
    ['or (555) 123-4567 after six', 'or [PHONE] after six'],
    ['London (+44) 20 7946 0958', 'London [PHONE]'],
  ]) {
    it(`masks "${text}"`, async () => {
      expect(await check(text)).to.deep.equal({ action: 'mask', segments: [{ id: 0, text: masked }], findings: ['PHONE'] });
    });
  }
  it('still leaves order numbers alone', async () => {
    expect(await check('order #123-456-7890 shipped')).to.deep.equal({ action: 'allow' });
  });
});

describe('pii-mask finds tokens of more common providers', () => {
  const check = async (text: string) => {
    const engine = await piiMask.create({ entities: ['SECRET'] }, undefined as never);
    return engine.check({ phase: 'post', traffic: 'chat', target: 'm', segments: [{ id: 0, text, path: 'x' }] }, new AbortController().signal);
  };
  for (const [what, token] of [
    ['a GitLab personal access token', 'glpat-Abc123def456GHI789jk'],
    ['a Hugging Face token', 'hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567'],
    ['an npm token', 'npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789'],
    ['a SendGrid key', 'SG.AbCdEfGhIjKlMnOpQrStUv.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg'],
  ]) {
    it(`masks ${what}`, async () => {
      expect(await check(`token=${token} end`)).to.deep.equal({ action: 'mask', segments: [{ id: 0, text: 'token=[SECRET] end' }], findings: ['SECRET'] });
    });
  }
  it('masks the token of an Authorization: Bearer header pasted into text', async () => {
    expect(await check('curl -H "Authorization: Bearer 7f3a9c2e4b1d8f6a0c5e9b3d7a1f4c8e" https://api')).to.deep.equal({
      action: 'mask',
      segments: [{ id: 0, text: 'curl -H "Authorization: Bearer [SECRET]" https://api' }],
      findings: ['SECRET'],
    });
  });
  it('leaves the word bearer in prose alone', async () => {
    expect(await check('The bearer of this letter is a friend of mine and trustworthy.')).to.deep.equal({ action: 'allow' });
  });
});
