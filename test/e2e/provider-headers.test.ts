import { expect } from 'chai';
import OpenAI from 'openai';
import { FakeOpenAI } from '../support/fake-openai';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const CLIENT_KEY = 'sk-client-headers';

/**
 * A provider entry's `headers` on each upstream request, the same way for every provider
 * (core/upstream/configured-headers.ts): names in lower case, the provider's own credential header last.
 */
describe('provider headers from the config', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey(CLIENT_KEY)
      .withOpenAI('oai', upstream, 'sk-provider-key', { headers: { 'X-Team': 'blue', Authorization: 'Bearer operator-value' } })
      .withModel('gpt-test', { model: 'upstream-model' })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('sends them in lower case, with the entry\'s apiKey as the one authorization (a second, differently cased one shadowed it)', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: CLIENT_KEY, maxRetries: 0 });
    await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
    expect(upstream.last.headers).to.include({ 'x-team': 'blue', authorization: 'Bearer sk-provider-key' });
  });
});
