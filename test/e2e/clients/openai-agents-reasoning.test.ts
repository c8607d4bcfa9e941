/**
 * The OpenAI Agents SDK (`@openai/agents`, Responses API) on a Claude model that thinks: a two-turn run
 * sends the first turn's reasoning item back in full, and the gateway must hand Claude its signed thinking
 * block again, unchanged, on the next turn.
 */
import { expect } from 'chai';
import { Agent, OpenAIProvider, Runner, setTracingDisabled } from '@openai/agents';
import { FakeAnthropicUpstream } from '../../providers/anthropic/fake-anthropic-upstream';
import { readFixture } from '../../support/fixtures';
import type { TestGateway } from '../../support/start-gateway';
import { testConfig } from '../../support/test-config';

const KEY = 'sk-agents-CANARY-4f9';
const PROVIDER_KEY = 'sk-ant-agents-upstream';

describe('OpenAI Agents SDK on a thinking Claude model (fake Anthropic upstream)', () => {
  let upstream: FakeAnthropicUpstream;
  let gw: TestGateway;

  before(async () => {
    // traces would be exported to OpenAI's servers: nothing leaves this machine
    setTracingDisabled(true);
    upstream = new FakeAnthropicUpstream(PROVIDER_KEY);
    await upstream.start();
    gw = await testConfig()
      .withKey(KEY)
      .withProvider({ id: 'claude', type: 'anthropic', baseUrl: upstream.url, apiKey: PROVIDER_KEY })
      .withModel('claude-test', { model: 'claude-upstream' })
      .with({ routing: { retries: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('passes the first turn\u2019s signed thinking back to Claude on the second turn', async () => {
    upstream.reply({ json: readFixture('anthropic', 'text.upstream-response.json') });
    const runner = new Runner({ modelProvider: new OpenAIProvider({ baseURL: `${gw.url}/v1`, apiKey: KEY, useResponses: true }) });
    const agent = new Agent({ name: 'primes', instructions: 'Answer briefly.', model: 'claude-test', modelSettings: { reasoning: { effort: 'low' } } });
    const first = await runner.run(agent, 'Name a prime.');
    expect(first.finalOutput).to.equal('Onze, par exemple.');
    expect(upstream.last.body.thinking).to.deep.equal({ type: 'enabled', budget_tokens: 1024 });

    await runner.run(agent, [...first.history, { role: 'user', content: 'Another one?' }]);
    expect(upstream.last.body.messages[1]).to.deep.equal({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Small primes...', signature: 'EqQBCgIYAhIM' },
        { type: 'text', text: 'Onze, par exemple.' },
      ],
    });
  });
});
