import { expect } from 'chai';
import OpenAI from 'openai';
import { bundledPrice, candidateNames } from '../../../core/spend/price-table/bundled-price';
import { BUNDLED_PRICES } from '../../../core/spend/price-table/bundled-prices';
import type { TestGateway } from '../../support/start-gateway';
import { testConfig } from '../../support/test-config';
import { FakeOpenAI, chatChunks, chatCompletion } from '../../support/fake-openai';

describe('bundled price table', () => {
  it('is versioned and dated', () => {
    expect(BUNDLED_PRICES.version).to.match(/^\d{4}\.\d+\.\d+$/);
    expect(BUNDLED_PRICES.date).to.match(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('finds models under the vendors\' decorated ids (dates, Bedrock region/vendor/version, Vertex @version, models/ prefix)', () => {
    expect(candidateNames('us.anthropic.claude-sonnet-4-5-20250929-v1:0')).to.include('claude-sonnet-4-5');
    expect(bundledPrice('bedrock', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0')).to.deep.equal({
      inputPerMTok: 3,
      outputPerMTok: 15,
      cacheReadPerMTok: 0.3,
      cacheWritePerMTok: 3.75,
      cacheWrite1hPerMTok: 6,
      longContext: { aboveInputTokens: 200000, inputPerMTok: 6, outputPerMTok: 22.5, cacheReadPerMTok: 0.6, cacheWritePerMTok: 7.5, cacheWrite1hPerMTok: 12 },
    });
    expect(bundledPrice('bedrock', 'amazon.titan-embed-text-v2:0')).to.deep.equal({ inputPerMTok: 0.02 });
    expect(bundledPrice('openai', 'gpt-4o-2024-08-06')?.inputPerMTok).to.equal(2.5);
    expect(bundledPrice('azure-openai', 'gpt-4o-mini')?.outputPerMTok).to.equal(0.6);
    expect(bundledPrice('anthropic', 'claude-haiku-4-5-20251001')?.inputPerMTok).to.equal(1);
    expect(bundledPrice('vertex-ai', 'claude-opus-4-1@20250805')?.outputPerMTok).to.equal(75);
    expect(bundledPrice('gemini', 'models/gemini-2.5-flash')?.outputPerMTok).to.equal(2.5);
    expect(bundledPrice('openai', 'dall-e-3')?.perImageBySize).to.deep.equal({ '1024x1024': 0.04, '1024x1792': 0.08, '1792x1024': 0.08 });
  });

  it('prices nothing it does not know, nor a preset vendor\'s models, nor names from outside the table\'s own keys', () => {
    expect(bundledPrice('openai', 'my-fine-tune')).to.equal(undefined);
    expect(bundledPrice('openai', 'gpt-4o', 'groq')).to.equal(undefined);
    expect(bundledPrice('echo', 'gpt-4o')).to.equal(undefined);
    expect(bundledPrice('openai', '__proto__')).to.equal(undefined);
    expect(bundledPrice('openai', 'constructor')).to.equal(undefined);
  });
});

describe('bundled prices in use (GET /v1/models, the admin models view, the cost of a call)', () => {
  const ADMIN = 'admin-key-prices';
  let upstream: FakeOpenAI;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey('sk-prices')
      .withOpenAI('oai', upstream, 'sk-up')
      .withModel('gpt-4o-mini')
      .withModel('gpt-4o', { price: { inputPerMTok: 100, outputPerMTok: 200 } })
      .withModel('private-model', { model: 'my-fine-tune' })
      .with({ adminKey: ADMIN, routing: { retries: 0 } })
      .start();
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-prices', maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('lists the price in use and its source; the config price wins over the table', async () => {
    const models = await client.models.list();
    const byId = new Map(models.data.map((m) => [m.id, m as unknown as { price: unknown; price_source: unknown }]));
    expect(byId.get('gpt-4o-mini')).to.deep.include({ price: { inputPerMTok: 0.15, outputPerMTok: 0.6, cacheReadPerMTok: 0.075 }, price_source: 'bundled' });
    expect(byId.get('gpt-4o')).to.deep.include({ price: { inputPerMTok: 100, outputPerMTok: 200 }, price_source: 'config' });
    expect(byId.get('private-model')).to.deep.include({ price: null, price_source: null });
    const one = (await client.models.retrieve('gpt-4o-mini')) as unknown as { price_source: string };
    expect(one.price_source).to.equal('bundled');

    const admin = await fetch(`${gw.url}/admin/v1/models`, { headers: { authorization: `Bearer ${ADMIN}` } }).then((r) => r.json() as Promise<any>);
    expect(admin.priceTable).to.deep.equal({ version: BUNDLED_PRICES.version, date: BUNDLED_PRICES.date });
    const mini = admin.data.find((m: any) => m.name === 'gpt-4o-mini').deployments[0];
    expect(mini).to.deep.include({ price: { inputPerMTok: 0.15, outputPerMTok: 0.6, cacheReadPerMTok: 0.075 }, priceSource: 'bundled' });
  });

  it('prices a call with the bundled price, JSON and streamed', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('hi', { prompt_tokens: 1_000_000, completion_tokens: 1_000_000, total_tokens: 2_000_000 }) };
    const { response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }).withResponse();
    expect(response.headers.get('x-gateway-response-cost')).to.equal('0.75');

    upstream.script = { kind: 'sse', events: chatChunks(['a'], { prompt_tokens: 2_000_000, completion_tokens: 0, total_tokens: 2_000_000 }) };
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'x' }] });
    for await (const _chunk of stream) void _chunk;
    const page = await gw.gateway.services.requestLog.query({ limit: 1 });
    expect(page.data[0]).to.include({ model: 'gpt-4o-mini', promptTokens: 2_000_000, cost: 0.3 });
  });
});
