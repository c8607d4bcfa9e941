import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import type { TestGateway } from '../../support/start-gateway';
import { testConfig } from '../../support/test-config';
import { API_VERSION, AZURE_KEY, FakeAzure, OLD_API_VERSION, azureChunks, azureCompletion, filteredResults } from './fake-azure-upstream';

const CLIENT_KEY = 'sk-client-azure';

describe('azure-openai provider (openai and @anthropic-ai/sdk clients, fake Azure resource)', () => {
  let azure: FakeAzure;
  let gw: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;

  before(async () => {
    azure = await new FakeAzure().start();
    azure.bearers = ['entra-token-from-command', 'static-entra-token'];
    gw = await testConfig()
      .withKey(CLIENT_KEY)
      .withProvider({ id: 'azure', type: 'azure-openai', baseUrl: azure.url, apiKey: AZURE_KEY, apiVersion: API_VERSION })
      // no price: the bundled table prices the `gpt-4o` deployment
      .withModel('gpt-4o', { model: 'gpt-4o' })
      .withModel('o3-mini', { model: 'o3-mini', price: { inputPerMTok: 1, outputPerMTok: 4 } })
      .withModel('my-dalle', { model: 'dall-e-3', kind: 'image' })
      .withProvider({ id: 'azure-v1', type: 'azure-openai', baseUrl: azure.url, apiKey: AZURE_KEY })
      .withModel('embed', { model: 'my-embedding-deployment', kind: 'embedding', price: { inputPerMTok: 1 } })
      .withProvider({ id: 'azure-entra', type: 'azure-openai', baseUrl: azure.url, entraTokenCommand: 'echo entra-token-from-command', apiVersion: API_VERSION })
      .withModel('gpt-entra', { model: 'gpt-4o-mini' })
      .withProvider({ id: 'azure-static', type: 'azure-openai', baseUrl: azure.url, entraToken: { $env: 'TEST_AZURE_ENTRA_TOKEN' }, apiVersion: API_VERSION })
      .withModel('gpt-static', { model: 'gpt-4o-mini' })
      .withProvider({ id: 'azure-old', type: 'azure-openai', baseUrl: azure.url, apiKey: AZURE_KEY, apiVersion: OLD_API_VERSION })
      .withModel('gpt-old-api', { model: 'gpt-4o' })
      .with({ routing: { retries: 0 } })
      .start({ env: { ...process.env, TEST_AZURE_ENTRA_TOKEN: 'static-entra-token' } });
    openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: CLIENT_KEY, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: gw.url, apiKey: CLIENT_KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await azure.stop();
  });

  it('calls the deployment path with api-key and api-version, and prices cached usage from the bundled table', async () => {
    azure.reply = () => ({ kind: 'json', body: azureCompletion({ content: 'Hi from Azure' }, 'stop', { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100, prompt_tokens_details: { cached_tokens: 400 } }) });
    const { data, response } = await openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello' }], temperature: 0.2 }).withResponse();
    expect(azure.last.path).to.equal(`/openai/deployments/gpt-4o/chat/completions?api-version=${API_VERSION}`);
    expect(azure.last.headers['api-key']).to.equal(AZURE_KEY);
    expect(azure.last.headers.authorization).to.equal(undefined);
    expect(azure.last.body).to.deep.equal({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello' }], temperature: 0.2 });
    expect(data.choices[0].message.content).to.equal('Hi from Azure');
    // 600 uncached at $2.50/M + 400 cached at $1.25/M + 100 out at $10/M
    expect(response.headers.get('x-gateway-response-cost')).to.equal('0.003');
  });

  it('streams tool calls the openai client assembles, drops the prompt-filter frame, and prices the streamed usage', async () => {
    azure.reply = () => ({
      kind: 'sse',
      events: azureChunks(
        [
          { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
          { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
          { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
        ],
        'tool_calls',
        { prompt_tokens: 2000, completion_tokens: 20, total_tokens: 2020 },
      ),
    });
    const stream = openai.chat.completions.stream({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
    });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0].finish_reason).to.equal('tool_calls');
    const call = final.choices[0].message.tool_calls![0];
    expect(call).to.deep.include({ id: 'call_1', type: 'function' });
    expect(call.type === 'function' && [call.function.name, call.function.arguments]).to.deep.equal(['get_weather', '{"city":"Paris"}']);
    expect(azure.last.body.stream_options).to.deep.equal({ include_usage: true });
    const page = await gw.gateway.services.requestLog.query({ limit: 1 });
    // 2000 in at $2.50/M + 20 out at $10/M
    expect(page.data[0]).to.include({ model: 'gpt-4o', promptTokens: 2000, completionTokens: 20, status: 200, cost: 0.0052 });
  });

  it('serves Anthropic Messages clients through the chat translation, JSON and streamed tool use', async () => {
    azure.reply = (req) =>
      req.body.stream
        ? { kind: 'sse', events: azureChunks([{ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_9', type: 'function', function: { name: 'lookup', arguments: '{"q":"gw"}' } }] }], 'tool_calls', { prompt_tokens: 30, completion_tokens: 7, total_tokens: 37 }) }
        : { kind: 'json', body: azureCompletion({ content: 'Bonjour' }, 'stop', { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 }) };
    const message = await anthropic.messages.create({ model: 'gpt-4o', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Salut' }] });
    expect(message.content).to.deep.equal([{ type: 'text', text: 'Bonjour' }]);
    expect(message.usage).to.include({ input_tokens: 12, output_tokens: 2 });
    expect(azure.last.body.messages).to.deep.equal([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Salut' }]);
    expect(azure.last.body.max_tokens ?? azure.last.body.max_completion_tokens).to.equal(100);

    const stream = anthropic.messages.stream({ model: 'gpt-4o', max_tokens: 100, tools: [{ name: 'lookup', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }], messages: [{ role: 'user', content: 'look it up' }] });
    const final = await stream.finalMessage();
    expect(final.stop_reason).to.equal('tool_use');
    expect(final.content).to.deep.equal([{ type: 'tool_use', id: 'call_9', name: 'lookup', input: { q: 'gw' } }]);
  });

  it('surfaces a prompt blocked by the content filter as a 400 content_filter naming the category', async () => {
    azure.reply = () => ({
      kind: 'json',
      status: 400,
      body: { error: { message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.", type: null, param: 'prompt', code: 'content_filter', status: 400, innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: filteredResults } } },
    });
    const err = await openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'something hateful' }] }).catch((e) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err.code).to.equal('content_filter');
    expect(err.message).to.include("Azure OpenAI's content filter blocked the prompt (hate: medium)");
    const anthropicErr = await anthropic.messages.create({ model: 'gpt-4o', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(anthropicErr).to.be.instanceOf(Anthropic.BadRequestError);
    expect(anthropicErr.error.error.message).to.include('content filter blocked the prompt');
  });

  it('surfaces a completion cut by the content filter as the same error, JSON and streamed', async () => {
    azure.reply = (req) =>
      req.body.stream
        ? { kind: 'sse', events: azureChunks([{ role: 'assistant', content: 'Well' }], 'content_filter', { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 }).map((e: any) => (e.choices?.[0]?.finish_reason === 'content_filter' ? { ...e, choices: [{ ...e.choices[0], content_filter_results: filteredResults }] } : e)) }
        : { kind: 'json', body: azureCompletion({ content: null }, 'content_filter', { prompt_tokens: 5, completion_tokens: 0, total_tokens: 5 }, { content_filter_results: filteredResults }) };
    const err = await openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err.code).to.equal('content_filter');
    expect(err.message).to.include('blocked the completion (hate: medium)');

    const stream = await openai.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'x' }] });
    let text = '';
    const streamErr = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    })().catch((e) => e);
    expect(text).to.equal('Well');
    expect(streamErr).to.be.instanceOf(OpenAI.APIError);
    expect(streamErr.message).to.include('blocked the completion (hate: medium)');
  });

  it('caps an Anthropic client\'s answer from a reasoning deployment with max_completion_tokens, and keeps max_tokens for a version older than it', async () => {
    azure.reply = () => ({ kind: 'json', body: azureCompletion({ content: 'Thought it through' }, 'stop', { prompt_tokens: 12, completion_tokens: 40, total_tokens: 52 }) });
    const message = await anthropic.messages.create({ model: 'o3-mini', max_tokens: 300, messages: [{ role: 'user', content: 'Think' }] });
    expect(message.content).to.deep.equal([{ type: 'text', text: 'Thought it through' }]);
    expect(azure.last.body).to.include({ max_completion_tokens: 300 }).and.not.have.property('max_tokens');
    // a chat client's own max_tokens reaches the reasoning deployment the same way
    await openai.chat.completions.create({ model: 'o3-mini', max_tokens: 200, messages: [{ role: 'user', content: 'Think' }] });
    expect(azure.last.body).to.include({ max_completion_tokens: 200 }).and.not.have.property('max_tokens');
    await anthropic.messages.create({ model: 'gpt-old-api', max_tokens: 300, messages: [{ role: 'user', content: 'Hi' }] });
    expect(azure.last.path).to.equal(`/openai/deployments/gpt-4o/chat/completions?api-version=${OLD_API_VERSION}`);
    expect(azure.last.body).to.include({ max_tokens: 300 }).and.not.have.property('max_completion_tokens');
  });

  it('streams on an api-version older than stream_options without sending it, and estimates the unreported usage', async () => {
    // what such a version streams: no usage chunk, as it was never asked for one
    azure.reply = () => ({ kind: 'sse', events: azureChunks([{ role: 'assistant', content: '' }, { content: 'Paris is sunny ' }, { content: 'and warm today.' }], 'stop', {}).slice(0, -1) });
    const stream = await openai.chat.completions.create({ model: 'gpt-old-api', stream: true, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).to.equal('Paris is sunny and warm today.');
    expect(azure.last.path).to.equal(`/openai/deployments/gpt-4o/chat/completions?api-version=${OLD_API_VERSION}`);
    expect(azure.last.body).to.not.have.property('stream_options');
    await gw.gateway.services.pipeline.whenSettled(5_000);
    await gw.gateway.services.requestLog.writer.settled();
    const entry = (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0];
    // priced from an estimate (about four characters a token), and flagged as one, rather than at nothing
    expect(entry).to.deep.include({ model: 'gpt-old-api', status: 200 });
    expect(entry.completionTokens).to.be.within(5, 12);
    expect(entry.promptTokens).to.be.greaterThan(0);
    expect(entry.cost).to.be.greaterThan(0);
    expect(entry.details).to.deep.include({ usageEstimated: true });
  });

  it('streams to an Anthropic client, and to a chat client asking for usage, on an api-version older than stream_options, without sending it', async () => {
    const answer = () => ({ kind: 'sse' as const, events: azureChunks([{ role: 'assistant', content: '' }, { content: 'Paris is sunny.' }], 'stop', {}).slice(0, -1) });
    azure.reply = answer;
    // the Messages translation asks the chat stream for its usage
    const message = await anthropic.messages.stream({ model: 'gpt-old-api', max_tokens: 100, messages: [{ role: 'user', content: 'Weather in Paris?' }] }).finalMessage();
    expect(message.content.map((b) => (b.type === 'text' ? b.text : b.type))).to.deep.equal(['Paris is sunny.']);
    expect(message.usage.output_tokens).to.be.greaterThan(0);
    expect(azure.last.body).to.not.have.property('stream_options');

    azure.reply = answer;
    const stream = await openai.chat.completions.create({ model: 'gpt-old-api', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).to.equal('Paris is sunny.');
    expect(azure.last.body).to.not.have.property('stream_options');
  });

  it('uses the v1 API path (no api-version, deployment as the body model) for embeddings', async () => {
    azure.reply = () => ({ kind: 'json', body: { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.5, -0.25] }], model: 'text-embedding-3-small', usage: { prompt_tokens: 4, total_tokens: 4 } } });
    const res = await openai.embeddings.create({ model: 'embed', input: 'hello', encoding_format: 'float' });
    expect(res.data[0].embedding).to.deep.equal([0.5, -0.25]);
    expect(azure.last.path).to.equal('/openai/v1/embeddings');
    expect(azure.last.body).to.deep.include({ model: 'my-embedding-deployment', input: 'hello' });
  });

  it('generates images on the deployment path', async () => {
    azure.reply = () => ({ kind: 'json', body: { created: 1700000000, data: [{ b64_json: 'aGVsbG8=', revised_prompt: 'a cat' }] } });
    const res = await openai.images.generate({ model: 'my-dalle', prompt: 'a cat', size: '1024x1024', response_format: 'b64_json' });
    expect(res.data![0].b64_json).to.equal('aGVsbG8=');
    expect(azure.last.path).to.equal(`/openai/deployments/dall-e-3/images/generations?api-version=${API_VERSION}`);
    expect(azure.last.body).to.deep.include({ model: 'dall-e-3', prompt: 'a cat', size: '1024x1024' });
  });

  it('surfaces an image prompt the content filter blocked as a 400 content_filter naming the categories (DALL-E\u2019s inner_error shape)', async () => {
    // the images API's filter error: `inner_error` with `content_filter_results`, not chat's `innererror.content_filter_result`
    azure.reply = () => ({
      kind: 'json',
      status: 400,
      body: {
        error: {
          code: 'content_policy_violation',
          message: 'Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system.',
          type: 'invalid_request_error',
          inner_error: { code: 'ResponsibleAIPolicyViolation', content_filter_results: { sexual: { filtered: true, severity: 'high' }, violence: { filtered: false, severity: 'safe' }, hate: { filtered: false, severity: 'safe' }, self_harm: { filtered: false, severity: 'safe' } }, revised_prompt: 'a cat' },
        },
      },
    });
    const err = await openai.images.generate({ model: 'my-dalle', prompt: 'a cat' }).catch((e) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err.code).to.equal('content_filter');
    expect(err.message).to.include("Azure OpenAI's content filter blocked the prompt (sexual: high).");
  });

  it('sends an Entra ID token, from the configured command or static from env, as a bearer token and no api-key', async () => {
    azure.reply = () => ({ kind: 'json', body: azureCompletion({ content: 'entra ok' }, 'stop', { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }) });
    const res = await openai.chat.completions.create({ model: 'gpt-entra', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.choices[0].message.content).to.equal('entra ok');
    expect(azure.last.headers.authorization).to.equal('Bearer entra-token-from-command');
    expect(azure.last.headers['api-key']).to.equal(undefined);
    await openai.chat.completions.create({ model: 'gpt-static', messages: [{ role: 'user', content: 'hi' }] });
    expect(azure.last.headers.authorization).to.equal('Bearer static-entra-token');
    expect(azure.last.headers['api-key']).to.equal(undefined);
  });

  it('runs the token command again after Azure refuses its cached token (401: revoked, the CLI signed in elsewhere): the next request is served', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'entra-'));
    const file = join(dir, 'token');
    writeFileSync(file, 'entra-token-one\n');
    azure.bearers.push('entra-token-one');
    const gw2 = await testConfig()
      .withKey(CLIENT_KEY)
      .withProvider({ id: 'azure-cli', type: 'azure-openai', baseUrl: azure.url, entraTokenCommand: `cat '${file}'`, apiVersion: API_VERSION })
      .withModel('gpt-cli', { model: 'gpt-4o-mini' })
      .with({ routing: { retries: 0 } })
      .start();
    try {
      azure.reply = () => ({ kind: 'json', body: azureCompletion({ content: 'entra ok' }, 'stop', { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }) });
      const client = new OpenAI({ baseURL: `${gw2.url}/v1`, apiKey: CLIENT_KEY, maxRetries: 0 });
      await client.chat.completions.create({ model: 'gpt-cli', messages: [{ role: 'user', content: 'one' }] });
      expect(azure.last.headers.authorization).to.equal('Bearer entra-token-one');
      // the token is revoked long before its lifetime (10 minutes for one without an expiry) is over
      azure.bearers = azure.bearers.filter((t) => t !== 'entra-token-one').concat('entra-token-two');
      writeFileSync(file, 'entra-token-two\n');
      const refused = await client.chat.completions.create({ model: 'gpt-cli', messages: [{ role: 'user', content: 'two' }] }).catch((e) => e);
      expect(refused.status).to.equal(502);
      const res = await client.chat.completions.create({ model: 'gpt-cli', messages: [{ role: 'user', content: 'three' }] });
      expect(res.choices[0].message.content).to.equal('entra ok');
      expect(azure.last.headers.authorization).to.equal('Bearer entra-token-two');
    } finally {
      await gw2.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('turns a refused key into a 502 upstream_auth_failed that does not repeat it', async () => {
    const bad = await testConfig()
      .withKey(CLIENT_KEY)
      .withProvider({ id: 'azure', type: 'azure-openai', baseUrl: azure.url, apiKey: 'wrong-key-CANARY', apiVersion: API_VERSION })
      .withModel('gpt-4o')
      .with({ routing: { retries: 0 } })
      .start();
    try {
      const client = new OpenAI({ baseURL: `${bad.url}/v1`, apiKey: CLIENT_KEY, maxRetries: 0 });
      const err = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
      expect(err.status).to.equal(502);
      expect(err.code).to.equal('upstream_auth_failed');
      expect(JSON.stringify(err.error)).not.to.include('CANARY');
    } finally {
      await bad.close();
    }
  });

  it('refuses at boot a provider entry without credentials, or with /openai in its baseUrl', async () => {
    const noAuth = await testConfig().withKey(CLIENT_KEY).withProvider({ id: 'azure', type: 'azure-openai', baseUrl: azure.url }).withModel('m').start().catch((e) => e);
    expect(String(noAuth.message)).to.include('give exactly one of apiKey, entraToken or entraTokenCommand');
    const withPath = await testConfig().withKey(CLIENT_KEY).withProvider({ id: 'azure', type: 'azure-openai', baseUrl: `${azure.url}/openai/v1`, apiKey: 'k' }).withModel('m').start().catch((e) => e);
    expect(String(withPath.message)).to.include('without /openai');
  });
});
