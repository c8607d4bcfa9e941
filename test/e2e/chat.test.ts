import { expect } from 'chai';
import OpenAI from 'openai';
import { FakeOpenAI, chatChunks, chatCompletion } from '../support/fake-openai';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { readFixture } from '../support/fixtures';
import { eventually } from '../support/eventually';

const PROVIDER_KEY = 'sk-provider-CANARY-7d1e';
const CLIENT_KEY = 'sk-client-CANARY-91aa';

describe('chat completions through the gateway (openai SDK, fake OpenAI upstream)', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey(CLIENT_KEY, { id: 'ci-bot', models: ['gpt-test', 'gpt-4o-*', 'slow-model', 'embed-test'] })
      .withKey('sk-narrow', { id: 'narrow', models: ['other-model'] })
      .withOpenAI('oai', upstream, PROVIDER_KEY)
      .withModel('gpt-test', { model: 'upstream-model', id: 'oai/upstream-model', price: { inputPerMTok: 1, outputPerMTok: 2 } })
      .withModel('gpt-4o-mini', { price: { inputPerMTok: 0.15, outputPerMTok: 0.6 } })
      .withModel('other-model')
      .withModel('slow-model', { timeouts: { firstByteMs: 300 } })
      .withModel('embed-test', { model: 'upstream-embed', kind: 'embedding', price: { inputPerMTok: 0.02 } })
      .with({
        // these tests look at how one upstream answer is mapped; retries and fallbacks are tested in reliability.test.ts
        routing: { retries: 0 },
      })
      .start();
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: CLIENT_KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    upstream.script = { kind: 'json', body: chatCompletion('Hello from upstream') };
  });

  it('answers a chat completion with the deployment id, request id and cost headers', async () => {
    const { data, response } = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.choices[0].message.content).to.equal('Hello from upstream');
    expect(data.usage).to.deep.equal({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
    expect(response.headers.get('x-gateway-model-id')).to.equal('oai/upstream-model');
    expect(response.headers.get('x-gateway-request-id')).to.match(/^[0-9a-f-]{36}$/);
    // 10 input tokens at $1/M + 5 output tokens at $2/M
    expect(response.headers.get('x-gateway-response-cost')).to.equal('0.00002');
  });

  it('gives the openai SDK the gateway\u2019s request id as x-request-id (_request_id, err.requestID), JSON, streamed and refused', async () => {
    const answered = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(answered.request_id).to.be.a('string').that.equals(answered.response.headers.get('x-gateway-request-id'));

    upstream.script = { kind: 'sse', events: chatChunks(['a']) };
    const streamed = await client.chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    for await (const _chunk of streamed.data) void _chunk;
    expect(streamed.request_id).to.be.a('string').that.equals(streamed.response.headers.get('x-gateway-request-id'));

    const refused = (await client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(refused).to.be.instanceOf(OpenAI.NotFoundError);
    expect(refused.requestID).to.be.a('string').that.equals(refused.headers?.get('x-gateway-request-id'));

    const denied = (await new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-wrong', maxRetries: 0 }).models.list().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(denied).to.be.instanceOf(OpenAI.AuthenticationError);
    expect(denied.requestID).to.be.a('string').that.equals(denied.headers?.get('x-gateway-request-id'));
  });

  it('sends the upstream the provider key and the upstream model name, never the client key', async () => {
    await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
    expect(upstream.last.path).to.equal('/v1/chat/completions');
    expect(upstream.last.headers.authorization).to.equal(`Bearer ${PROVIDER_KEY}`);
    expect(upstream.last.rawBody).to.not.include(CLIENT_KEY);
    expect(JSON.stringify(upstream.last.headers)).to.not.include(CLIENT_KEY);
    expect(upstream.last.body.model).to.equal('upstream-model');
  });

  it('passes every chat-completions parameter and message part through unchanged except the model', async () => {
    const request = readFixture('openai', 'every-parameter.request.json');
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(request),
    });
    expect(res.status).to.equal(200);
    expect(upstream.last.body).to.deep.equal({ ...request, model: 'upstream-model' });
  });

  it('passes every parameter through on a stream too, adding only stream usage', async () => {
    const request = { ...readFixture('openai', 'every-parameter.request.json'), stream: true };
    upstream.script = { kind: 'sse', events: chatChunks(['a'], { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }) };
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(request),
    });
    await res.text();
    expect(upstream.last.body).to.deep.equal({ ...request, model: 'upstream-model', stream_options: { include_usage: true } });
  });

  it('returns tool calls as the upstream sent them', async () => {
    upstream.script = {
      kind: 'json',
      body: {
        ...chatCompletion(''),
        choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] }, finish_reason: 'tool_calls' }],
      },
    };
    const res = await client.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
    });
    expect(res.choices[0].finish_reason).to.equal('tool_calls');
    expect(res.choices[0].message.tool_calls).to.deep.equal([{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }]);
  });

  it('streams chunks to the SDK, asks upstream for usage, and hides the usage chunk from a client that did not ask', async () => {
    upstream.script = { kind: 'sse', events: chatChunks(['Hel', 'lo', '!'], { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 }) };
    const stream = await client.chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).to.equal('Hello!');
    expect(chunks.every((c) => c.choices.length > 0 && !c.usage)).to.equal(true);
    expect(upstream.last.body.stream_options).to.deep.equal({ include_usage: true });
  });

  it('streams an answer the upstream sent as one JSON document though asked to stream, as chunks the SDK assembles, and prices it', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('Hello as JSON', { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 }) };
    const stream = await client.chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).to.equal('Hello as JSON');
    expect(chunks.at(-1)!.choices[0].finish_reason).to.equal('stop');
    // the client did not ask for the usage chunk
    expect(chunks.every((c) => c.choices.length > 0 && !c.usage)).to.equal(true);
    const helper = client.chat.completions.stream({ model: 'gpt-test', stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
    const completion = await helper.finalChatCompletion();
    expect(completion.choices[0].message.content).to.equal('Hello as JSON');
    expect(completion.usage).to.deep.include({ prompt_tokens: 1000, completion_tokens: 500 });
    const entry = (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0];
    expect(entry).to.deep.include({ promptTokens: 1000, completionTokens: 500, cost: 0.002 });
  });

  it('gives the usage chunk to a client that asked for it, and prices the stream in a trailer and the log', async () => {
    upstream.script = { kind: 'sse', events: chatChunks(['a', 'b'], { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 }) };
    const stream = await client.chat.completions.create({ model: 'gpt-test', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
    let usage;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    expect(usage).to.deep.equal({ prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 });
    const page = await gw.gateway.services.requestLog.query({ limit: 1 });
    expect(page.data[0]).to.include({ model: 'gpt-test', deploymentId: 'oai/upstream-model', promptTokens: 1000, completionTokens: 500, status: 200, cost: 0.002 });
  });

  it('meters a stream whose every chunk says "usage": null before the usage chunk, as OpenAI sends it, and hides only the usage chunk', async () => {
    // OpenAI with include_usage: every chunk carries `"usage":null`, the last one the counts
    const events = chatChunks(['a', 'b', 'c'], { prompt_tokens: 2000, completion_tokens: 1000, total_tokens: 3000 }).map((e: any) => ('usage' in e ? e : { ...e, usage: null }));
    upstream.script = { kind: 'sse', events };
    const asked = await client.chat.completions.create({ model: 'gpt-test', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
    const seen = [];
    for await (const chunk of asked) seen.push(chunk);
    expect(seen.filter((c) => c.usage).map((c) => c.usage)).to.deep.equal([{ prompt_tokens: 2000, completion_tokens: 1000, total_tokens: 3000 }]);
    const [entry] = (await gw.gateway.services.requestLog.query({ limit: 1 })).data;
    expect(entry).to.include({ promptTokens: 2000, completionTokens: 1000, cost: 0.004 });
    expect(entry.details?.usageEstimated).to.equal(undefined);

    upstream.script = { kind: 'sse', events };
    const notAsked = await client.chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const chunks = [];
    for await (const chunk of notAsked) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).to.equal('abc');
    expect(chunks.every((c) => c.choices.length > 0 && !c.usage)).to.equal(true);
  });

  it('charges a JSON answer whose upstream reported no usage from an estimate, as a stream without usage is, not at $0', async () => {
    // an OpenAI-compatible server that leaves `usage` out of its answer
    const { usage: _omitted, ...noUsage } = chatCompletion('x'.repeat(400));
    upstream.script = { kind: 'json', body: noUsage };
    const { data, response } = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Write 400 characters.' }] }).withResponse();
    expect(data.choices[0].message.content).to.equal('x'.repeat(400));
    await gw.gateway.services.pipeline.whenSettled(5_000);
    await gw.gateway.services.requestLog.writer.settled();
    const [entry] = (await gw.gateway.services.requestLog.query({ limit: 1 })).data;
    // 400 characters answered, about 100 tokens; the prompt from the request
    expect({ completionTokens: entry.completionTokens, estimated: entry.details?.usageEstimated }).to.deep.equal({ completionTokens: 100, estimated: true });
    expect(entry.promptTokens).to.be.within(5, 40);
    expect(entry.cost).to.be.greaterThan(0);
    expect(response.headers.get('x-gateway-response-cost')).to.equal(String(entry.cost));

    // an answer with usage is charged from it, unflagged
    upstream.script = { kind: 'json', body: chatCompletion('x'.repeat(400)) };
    await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Write 400 characters.' }] });
    await gw.gateway.services.pipeline.whenSettled(5_000);
    await gw.gateway.services.requestLog.writer.settled();
    const [reported] = (await gw.gateway.services.requestLog.query({ limit: 1 })).data;
    expect(reported).to.include({ promptTokens: 10, completionTokens: 5 });
    expect(reported.details?.usageEstimated).to.equal(undefined);
  });

  it('sends the stream cost as an HTTP trailer', async () => {
    upstream.script = { kind: 'sse', events: chatChunks(['x'], { prompt_tokens: 1000000, completion_tokens: 0, total_tokens: 1000000 }) };
    const trailers = await rawTrailers(gw.url, { model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'hi' }] }, CLIENT_KEY);
    expect(trailers['x-gateway-response-cost']).to.equal('1');
  });

  it('ends a stream the upstream cut with an error event and no [DONE]', async () => {
    upstream.script = { kind: 'sse', events: chatChunks(['one', 'two', 'three']), cutAfter: 2 };
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await res.text();
    expect(text).to.not.include('[DONE]');
    const last = text.trim().split('\n\n').pop()!;
    expect(JSON.parse(last.slice('data: '.length)).error.code).to.equal('upstream_stream_cut');
    // and the SDK surfaces it as an error
    upstream.script = { kind: 'sse', events: chatChunks(['one', 'two', 'three']), cutAfter: 2 };
    const stream = await client.chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let thrown: unknown;
    try {
      for await (const _ of stream) void _;
    } catch (err) {
      thrown = err;
    }
    expect(thrown).to.be.instanceOf(OpenAI.APIError);
    const logged = await gw.gateway.services.requestLog.query({ limit: 1 });
    expect(logged.data[0].outcome).to.equal('upstream_cut');
  });

  it('aborts the upstream request when the client goes away', async () => {
    upstream.script = { kind: 'sse', events: chatChunks(Array.from({ length: 200 }, (_, i) => `t${i} `)), eventDelayMs: 20 };
    const before = upstream.clientClosed;
    const controller = new AbortController();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await eventually(() => upstream.clientClosed > before, 5000);
    await eventually(async () => (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0]?.outcome === 'client_abort', 5000);
  });

  it('lists embeddings through the upstream', async () => {
    upstream.script = { kind: 'json', body: { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], model: 'upstream-model', usage: { prompt_tokens: 3, total_tokens: 3 } } };
    const res = await client.embeddings.create({ model: 'embed-test', input: 'hello', encoding_format: 'float' });
    expect(res.data[0].embedding).to.deep.equal([0.1, 0.2]);
    expect(upstream.last.path).to.equal('/v1/embeddings');
    expect(upstream.last.body).to.deep.equal({ model: 'upstream-embed', input: 'hello', encoding_format: 'float' });
    const chatModel = (await client.embeddings.create({ model: 'gpt-test', input: 'x' }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(chatModel.status).to.equal(400);
    expect(chatModel.code).to.equal('model_kind_mismatch');
  });

  it('gives the openai SDK the vectors an upstream that ignores encoding_format answers as floats (LM Studio, LocalAI)', async () => {
    upstream.script = {
      kind: 'json',
      body: { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.5, -0.25, 1.5, 2] }, { object: 'embedding', index: 1, embedding: [-1, 0.125, 3, 0] }], model: 'upstream-model', usage: { prompt_tokens: 2, total_tokens: 2 } },
    };
    // no encoding_format: the SDK asks for base64 and decodes what it gets as float32 bytes
    const res = await client.embeddings.create({ model: 'embed-test', input: ['a', 'b'] });
    expect(upstream.last.body.encoding_format).to.equal('base64');
    expect(res.data.map((d) => d.embedding)).to.deep.equal([
      [0.5, -0.25, 1.5, 2],
      [-1, 0.125, 3, 0],
    ]);
    // a client that asked for floats gets them as the upstream sent them
    const floats = await client.embeddings.create({ model: 'embed-test', input: ['a', 'b'], encoding_format: 'float' });
    expect(floats.data[0].embedding).to.deep.equal([0.5, -0.25, 1.5, 2]);
  });

  it('lists only the models the key may use, and reads one', async () => {
    const list = await client.models.list();
    expect(list.data.map((m) => m.id)).to.deep.equal(['gpt-test', 'gpt-4o-mini', 'slow-model', 'embed-test']);
    expect((await client.models.retrieve('gpt-4o-mini')).id).to.equal('gpt-4o-mini');
    const narrow = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-narrow', maxRetries: 0 });
    const err = await narrow.models.retrieve('gpt-test').catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.NotFoundError);
  });

  it('refuses a model outside the key list exactly like an unknown model', async () => {
    const narrow = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-narrow', maxRetries: 0 });
    const forbidden = (await narrow.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    const unknown = (await narrow.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(forbidden.status).to.equal(404);
    expect(unknown.status).to.equal(404);
    expect(forbidden.code).to.equal('model_not_found');
    expect(forbidden.message.replace('gpt-test', 'M')).to.equal(unknown.message.replace('no-such-model', 'M'));
    expect(upstream.requests).to.have.length(0);
  });

  it('answers 401 for a missing or wrong key', async () => {
    for (const headers of [{}, { authorization: 'Bearer sk-wrong' }, { authorization: 'Basic abc' }] as Record<string, string>[]) {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(res.status).to.equal(401);
      const body = (await res.json()) as { error: { type: string } };
      expect(body.error.type).to.equal('authentication_error');
    }
    const viaSdk = await new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-wrong', maxRetries: 0 }).models.list().catch((e: unknown) => e);
    expect(viaSdk).to.be.instanceOf(OpenAI.AuthenticationError);
  });

  const malformed: [string, string | object, string, string | null][] = [
    ['not JSON', '{"model":', 'invalid_json', null],
    ['a JSON array', [], 'invalid_body', null],
    ['no model', { messages: [{ role: 'user', content: 'x' }] }, 'missing_required_parameter', 'model'],
    ['a numeric model', { model: 5, messages: [] }, 'invalid_type', 'model'],
    ['no messages', { model: 'gpt-test' }, 'missing_required_parameter', 'messages'],
    ['messages not an array', { model: 'gpt-test', messages: 'hi' }, 'invalid_type', 'messages'],
    ['empty messages', { model: 'gpt-test', messages: [] }, 'invalid_value', 'messages'],
    ['a message without role', { model: 'gpt-test', messages: [{ content: 'x' }] }, 'missing_required_parameter', 'messages[0].role'],
    ['a string stream flag', { model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], stream: 'yes' }, 'invalid_type', 'stream'],
    ['a string temperature', { model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], temperature: 'hot' }, 'invalid_type', 'temperature'],
  ];
  for (const [name, body, code, param] of malformed) {
    it(`answers 400 in the OpenAI shape for ${name}`, async () => {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      expect(res.status).to.equal(400);
      expect(res.headers.get('content-type')).to.match(/application\/json/);
      const json = (await res.json()) as { error: Record<string, unknown> };
      expect(json).to.have.keys('error');
      expect(json.error).to.include({ type: 'invalid_request_error', code, param });
      expect(upstream.requests).to.have.length(0);
    });
  }

  it('answers 413 for a body over the limit', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'x'.repeat(11 * 1024 * 1024) }] }),
    });
    expect(res.status).to.equal(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('payload_too_large');
  });

  it('maps upstream 500 to 502, keeps 429 with Retry-After, and times out a hung upstream with 504', async () => {
    upstream.script = { kind: 'json', status: 500, body: { error: { message: 'boom at http://internal.example:8080/x' } } };
    const e500 = (await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(e500.status).to.equal(502);
    expect(e500.message).to.not.include('internal.example');
    expect(e500.message).to.not.include(upstream.url);

    upstream.script = { kind: 'json', status: 429, body: { error: { message: 'slow down' } }, headers: { 'retry-after': '7' } };
    const e429 = (await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(e429.status).to.equal(429);
    expect(e429.headers?.get('retry-after')).to.equal('7');

    upstream.script = { kind: 'hang' };
    const e504 = (await client.chat.completions.create({ model: 'slow-model', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(e504.status).to.equal(504);
    expect((e504.error as { code?: string }).code).to.equal('upstream_timeout');
  });

  it('maps a refused connection to 502 without naming the upstream', async () => {
    const dead = await testConfig()
      .withKey(CLIENT_KEY)
      .withProvider({ id: 'oai', type: 'openai', baseUrl: 'http://127.0.0.1:1/v1', apiKey: PROVIDER_KEY })
      .withModel('gpt-test')
      .start();
    try {
      const res = await fetch(`${dead.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(res.status).to.equal(502);
      const text = await res.text();
      expect(JSON.parse(text).error.code).to.equal('upstream_unreachable');
      expect(text).to.not.include('127.0.0.1:1');
    } finally {
      await dead.close();
    }
  });
});

async function rawTrailers(base: string, body: object, key: string): Promise<Record<string, string>> {
  const http = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.trailers as Record<string, string>));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
