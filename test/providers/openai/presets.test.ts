import { expect } from 'chai';
import OpenAI from 'openai';
import type { TestGateway } from '../../support/start-gateway';
import { testConfig } from '../../support/test-config';
import { FakeOpenAI, chatCompletion } from '../../support/fake-openai';

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
      .withProvider({ id: 'groq', type: 'openai', preset: 'groq', apiKey: 'groq-key' })
      .withModel('llama-groq', { model: 'llama-3.3-70b-versatile' })
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

  it('xai: drops the sampling penalties and stop only for Grok reasoning models', async () => {
    const params = { presence_penalty: 0.5, frequency_penalty: 0.5, stop: ['END'], messages: [{ role: 'user' as const, content: 'hi' }] };
    await client.chat.completions.create({ model: 'grok-mini', ...params });
    expect(upstream.last.body).to.deep.equal({ model: 'grok-3-mini', messages: params.messages });
    await client.chat.completions.create({ model: 'grok-2', ...params });
    expect(upstream.last.body).to.deep.include({ model: 'grok-2-1212', presence_penalty: 0.5, frequency_penalty: 0.5, stop: ['END'] });
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
