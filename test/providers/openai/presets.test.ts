import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import type { TestGateway } from '../../support/start-gateway';
import { testConfig } from '../../support/test-config';
import { FakeOpenAI, chatCompletion } from '../../support/fake-openai';
import openaiProvider from '../../../providers/openai';
import type { ChatRequest, HttpOperation, Provider, ProviderTarget } from '../../../core/plugins/sdk';

const CLIENT_KEY = 'sk-client-presets';

describe('openai provider entries: presets (named OpenAI-compatible vendors) and headers', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey(CLIENT_KEY)
      .withProvider({ id: 'mistral', type: 'openai', preset: 'mistral', baseUrl: `${upstream.url}/v1`, apiKey: 'mistral-key' })
      .withModel('mistral-large', { model: 'mistral-large-latest' })
      .withProvider({ id: 'xai', type: 'openai', preset: 'xai', baseUrl: `${upstream.url}/v1`, apiKey: 'xai-key' })
      .withModel('grok-mini', { model: 'grok-3-mini' })
      .withModel('grok-2', { model: 'grok-2-1212' })
      .withModel('grok-4', { model: 'grok-4-0709' })
      .withModel('grok-4.3', { model: 'grok-4.3' })
      .withProvider({ id: 'groq', type: 'openai', preset: 'groq', apiKey: 'groq-key' })
      .withModel('llama-groq', { model: 'llama-3.3-70b-versatile' })
      .withProvider({ id: 'groq-here', type: 'openai', preset: 'groq', baseUrl: `${upstream.url}/v1`, apiKey: 'groq-key' })
      .withModel('llama-groq-here', { model: 'llama-3.3-70b-versatile' })
      .withProvider({ id: 'ollama', type: 'openai', preset: 'ollama' })
      .withModel('llama-local', { model: 'llama3.2' })
      .withProvider({ id: 'teamed', type: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: 'teamed-key', headers: { 'X-Team': 'blue', Authorization: 'Bearer operator-value' } })
      .withModel('teamed-model', { model: 'upstream-model' })
      .with({ routing: { retries: 0 } })
      .start();
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: CLIENT_KEY, maxRetries: 0 });
    upstream.script = { kind: 'json', body: chatCompletion('ok') };
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  // an entry's headers go out as every provider sends them (core/upstream/configured-headers.ts)
  it('sends an entry\'s headers in lower case, its apiKey the one authorization (a second, differently cased one shadowed it)', async () => {
    await client.chat.completions.create({ model: 'teamed-model', messages: [{ role: 'user', content: 'hi' }] });
    expect(upstream.last.headers).to.include({ 'x-team': 'blue', authorization: 'Bearer teamed-key' });
  });

  it('mistral: renames seed and max_completion_tokens, drops what Mistral refuses (stream_options, logit_bias, user...)', async () => {
    await client.chat.completions.create({ model: 'mistral-large', seed: 7, max_completion_tokens: 50, user: 'u1', logit_bias: { '1': 2 }, temperature: 0.1, messages: [{ role: 'user', content: 'hi' }] });
    expect(upstream.last.path).to.equal('/v1/chat/completions');
    expect(upstream.last.headers.authorization).to.equal('Bearer mistral-key');
    expect(upstream.last.body).to.deep.equal({ model: 'mistral-large-latest', random_seed: 7, max_tokens: 50, temperature: 0.1, messages: [{ role: 'user', content: 'hi' }] });
  });

  it('mistral: sends tool call ids other models made as the nine letters and digits Mistral takes, calls and results alike', async () => {
    // Mistral refuses any other id: "Tool call id was toolu_01 but must be a-z, A-Z, 0-9, with a length of 9."
    const claude = new Anthropic({ baseURL: `${gw.url}/native`, apiKey: CLIENT_KEY, maxRetries: 0 });
    await claude.messages.create({
      model: 'mistral-large',
      max_tokens: 64,
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }],
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        { role: 'assistant', content: ['toolu_01A09q90qw90lq917835lq9', 'toolu_02'].map((id) => ({ type: 'tool_use' as const, id, name: 'get_weather', input: {} })) },
        { role: 'user', content: ['toolu_01A09q90qw90lq917835lq9', 'toolu_02'].map((id) => ({ type: 'tool_result' as const, tool_use_id: id, content: '18C' })) },
      ],
    });
    const [, assistant, ...results] = upstream.last.body.messages;
    const ids = assistant.tool_calls.map((c: any) => c.id);
    for (const id of ids) expect(id).to.match(/^[a-zA-Z0-9]{9}$/);
    expect(new Set(ids).size).to.equal(2);
    expect(results.map((m: any) => m.tool_call_id)).to.deep.equal(ids);

    // Mistral's own ids go back as they are
    await client.chat.completions.create({
      model: 'mistral-large',
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'D681PevKs', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'D681PevKs', content: '18C' },
      ],
    });
    expect(upstream.last.body.messages[1].tool_calls[0].id).to.equal('D681PevKs');
    expect(upstream.last.body.messages[2].tool_call_id).to.equal('D681PevKs');
  });

  it('groq: leaves each message\u2019s name out (Groq answers 400 to it), as sent by multi-agent frameworks', async () => {
    // Groq answers a 400 to a message that has a name (its OpenAI compatibility page lists messages[].name)
    upstream.script = (req) => {
      const named = (req.body as { messages?: { name?: unknown }[] }).messages?.findIndex((m) => m.name !== undefined) ?? -1;
      return named >= 0
        ? { kind: 'json', status: 400, body: { error: { message: `'messages.${named}' : property 'name' is unsupported`, type: 'invalid_request_error' } } }
        : { kind: 'json', body: chatCompletion('ok') };
    };
    try {
      const answer = await client.chat.completions.create({
        model: 'llama-groq-here',
        messages: [
          { role: 'system', content: 'You are the supervisor.' },
          { role: 'user', name: 'alice', content: 'Plan the trip.' },
          { role: 'assistant', name: 'research_agent', content: 'Paris is sunny.' },
          { role: 'user', content: 'Go on.' },
        ],
      });
      expect(answer.choices[0].message.content).to.equal('ok');
      expect(upstream.last.body.messages).to.deep.equal([
        { role: 'system', content: 'You are the supervisor.' },
        { role: 'user', content: 'Plan the trip.' },
        { role: 'assistant', content: 'Paris is sunny.' },
        { role: 'user', content: 'Go on.' },
      ]);
    } finally {
      upstream.script = { kind: 'json', body: chatCompletion('ok') };
    }
  });

  it('xai: drops the sampling penalties and stop only for Grok reasoning models', async () => {
    const params = { presence_penalty: 0.5, frequency_penalty: 0.5, stop: ['END'], messages: [{ role: 'user' as const, content: 'hi' }] };
    await client.chat.completions.create({ model: 'grok-mini', ...params });
    expect(upstream.last.body).to.deep.equal({ model: 'grok-3-mini', messages: params.messages });
    await client.chat.completions.create({ model: 'grok-2', ...params });
    expect(upstream.last.body).to.deep.include({ model: 'grok-2-1212', presence_penalty: 0.5, frequency_penalty: 0.5, stop: ['END'] });
  });

  it('xai: leaves out a reasoning effort for the Grok models that refuse it, for chat and Messages clients; the models that take it get it', async () => {
    // what xAI answers a model without the effort dial (its reasoning guide; as measured by other clients)
    upstream.script = (req) => {
      const body = req.body as { model?: string; reasoning_effort?: unknown };
      if (body.reasoning_effort !== undefined && !/^grok-(3-mini|4\.3)/.test(String(body.model))) {
        return { kind: 'json', status: 400, body: { code: 'Client specified an invalid argument', error: `Model ${body.model} does not support parameter reasoningEffort.` } };
      }
      return { kind: 'json', body: chatCompletion('ok') };
    };
    try {
      const messages = [{ role: 'user' as const, content: 'hi' }];
      const data = await client.chat.completions.create({ model: 'grok-4', messages, reasoning_effort: 'high' });
      expect(data.choices[0].message.content).to.equal('ok');
      expect(upstream.last.body).to.deep.equal({ model: 'grok-4-0709', messages });
      const anthropic = new Anthropic({ baseURL: gw.url, apiKey: CLIENT_KEY, maxRetries: 0 });
      const message = await anthropic.messages.create({ model: 'grok-4', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages });
      expect(message.content).to.deep.equal([{ type: 'text', text: 'ok' }]);
      expect(upstream.last.body).to.not.have.property('reasoning_effort');
      for (const [model, upstreamModel] of [['grok-mini', 'grok-3-mini'], ['grok-4.3', 'grok-4.3']]) {
        await client.chat.completions.create({ model, messages, reasoning_effort: 'low' });
        expect(upstream.last.body).to.deep.include({ model: upstreamModel, reasoning_effort: 'low' });
      }
    } finally {
      upstream.script = { kind: 'json', body: chatCompletion('ok') };
    }
  });

  it('xai: reads errors in xAI\'s own shape: a refused API key is the gateway\'s 502 without the key\'s ends, another 400 keeps xAI\'s words, a prompt too long is context_length_exceeded', async () => {
    const messages = [{ role: 'user' as const, content: 'hi' }];
    try {
      // what xAI answers a key it does not know: a 400, the message in `error` as a string
      upstream.script = { kind: 'json', status: 400, body: { code: 'Client specified an invalid argument', error: 'Incorrect API key provided: xa***tF. You can obtain an API key from https://console.x.ai.' } };
      const refused = await client.chat.completions.create({ model: 'grok-mini', messages }).then(() => undefined, (err: unknown) => err as InstanceType<typeof OpenAI.APIError>);
      expect(refused?.status).to.equal(502);
      expect(refused?.code).to.equal('upstream_auth_failed');
      expect(JSON.stringify(refused?.error)).to.not.include('xa***tF');
      upstream.script = { kind: 'json', status: 400, body: { code: 'Client specified an invalid argument', error: "This model's maximum prompt length is 131072 but the request contains 140000 tokens." } };
      const tooLong = await client.chat.completions.create({ model: 'grok-mini', messages }).then(() => undefined, (err: unknown) => err as InstanceType<typeof OpenAI.APIError>);
      expect(tooLong?.status).to.equal(400);
      expect(tooLong?.message).to.include("This model's maximum prompt length is 131072 but the request contains 140000 tokens.");
      // a prompt over the context window, by OpenAI's code, so clients that trim their history on it do
      expect(tooLong?.code).to.equal('context_length_exceeded');
      expect(tooLong?.param).to.equal('messages');
      // and in Anthropic's words to a Messages client (Claude Code on Grok compacts its history on them)
      const anthropic = new Anthropic({ baseURL: gw.url, apiKey: CLIENT_KEY, maxRetries: 0 });
      const asMessages = await anthropic.messages.create({ model: 'grok-mini', max_tokens: 1024, messages }).then(() => undefined, (err: unknown) => err as InstanceType<typeof Anthropic.APIError>);
      expect(asMessages).to.be.instanceOf(Anthropic.BadRequestError);
      expect(asMessages?.error).to.deep.equal({ type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 140000 tokens > 131072 maximum' } });
    } finally {
      upstream.script = { kind: 'json', body: chatCompletion('ok') };
    }
  });

  it('sends a max_tokens to OpenAI\'s own API as max_completion_tokens (its reasoning models refuse max_tokens), and as sent to other servers', () => {
    const provider = openaiProvider.create({}, undefined as never, { provider: { id: 'openai', type: 'openai', apiKey: 'k' } as never }) as Provider;
    const chat = provider.operations.chat as HttpOperation<ChatRequest>;
    const sent = (baseUrl: string, request: ChatRequest) => {
      const target = { model: { id: 'o3', model: 'o3' }, provider: { id: 'openai', type: 'openai' }, baseUrl } as unknown as ProviderTarget;
      return JSON.parse(chat.toUpstream(request, target, { headers: {} }).body as string) as Record<string, unknown>;
    };
    const messages = [{ role: 'user' as const, content: 'hi' }];
    expect(sent(provider.defaultBaseUrl!, { model: 'o3', max_tokens: 50, messages })).to.deep.equal({ model: 'o3', max_completion_tokens: 50, messages });
    expect(sent('http://127.0.0.1:8000/v1', { model: 'o3', max_tokens: 50, messages })).to.deep.equal({ model: 'o3', max_tokens: 50, messages });
    // a client that sent both keeps both (OpenAI answers for itself)
    expect(sent(provider.defaultBaseUrl!, { model: 'o3', max_tokens: 50, max_completion_tokens: 60, messages })).to.deep.equal({ model: 'o3', max_tokens: 50, max_completion_tokens: 60, messages });
  });

  it('fills the vendor base URL when the entry has none', () => {
    const baseUrlOf = (model: string) => gw.gateway.services.catalog.group(model)![0].target.baseUrl;
    expect(baseUrlOf('llama-groq')).to.equal('https://api.groq.com/openai/v1');
    expect(baseUrlOf('llama-local')).to.equal('http://localhost:11434/v1');
    expect(baseUrlOf('mistral-large')).to.equal(`${upstream.url}/v1`);
  });

  it('refuses a hosted vendor preset without an apiKey at boot (a local server needs none)', async () => {
    const err = await testConfig().withKey(CLIENT_KEY).withProvider({ id: 'x', type: 'openai', preset: 'groq' }).withModel('m').start().catch((e) => e);
    expect(String(err.message)).to.include('preset "groq" needs the provider\'s apiKey');
  });

  it('refuses an unknown preset at boot, listing the known ones', async () => {
    const err = await testConfig().withKey(CLIENT_KEY).withProvider({ id: 'x', type: 'openai', preset: 'acme', apiKey: 'k' }).withModel('m').start().catch((e) => e);
    expect(String(err.message)).to.include('unknown preset "acme" (known: groq, mistral, deepseek, together, fireworks, openrouter, xai, ollama, vllm, lmstudio)');
  });
});
