import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import { FakeAnthropicUpstream, textEvents } from '../providers/anthropic/fake-anthropic-upstream';
import { FakeOpenAI } from '../support/fake-openai';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { FakeClock } from '../core/limits/fake-clock';

const PROVIDER_KEY = 'sk-ant-upstream-reliability';
const CLIENT_KEY = 'sk-client-reliability-messages';
const OVERLOADED = { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } };

describe('reliability on the Messages API (Anthropic SDK, fake Anthropic upstreams)', () => {
  let first: FakeAnthropicUpstream;
  let second: FakeAnthropicUpstream;
  let openai: FakeOpenAI;
  let gw: TestGateway;
  let client: Anthropic;
  let clock: FakeClock;

  before(async () => {
    first = new FakeAnthropicUpstream(PROVIDER_KEY);
    second = new FakeAnthropicUpstream(PROVIDER_KEY);
    await first.start();
    await second.start();
    openai = await new FakeOpenAI().start();
    clock = new FakeClock();
    gw = await testConfig()
      .withKey(CLIENT_KEY, { id: 'agent' })
      .withProvider({ id: 'claude-a', type: 'anthropic', baseUrl: first.url, apiKey: PROVIDER_KEY })
      .withProvider({ id: 'claude-b', type: 'anthropic', baseUrl: second.url, apiKey: PROVIDER_KEY })
      .withModel('claude-test', { provider: 'claude-a', model: 'claude-sonnet-4-5', id: 'a/sonnet', fallbacks: ['claude-spare'], price: { inputPerMTok: 3, outputPerMTok: 15 } })
      .withModel('claude-spare', { model: 'claude-sonnet-4-5', id: 'b/sonnet', price: { inputPerMTok: 3, outputPerMTok: 15 } })
      // count_tokens only reaches Anthropic: a spare on an OpenAI upstream, and a group that mixes both
      .withModel('claude-or-gpt', { provider: 'claude-a', model: 'claude-sonnet-4-5', id: 'a/or-gpt', fallbacks: ['gpt-spare'] })
      .withOpenAI('oai', openai, 'sk-openai-upstream')
      .withModel('gpt-spare', { model: 'gpt-4o', id: 'oai/spare' })
      .withModel('claude-pool', { model: 'gpt-4o', id: 'oai/pool', weight: 1 })
      .withModel('claude-pool', { provider: 'claude-b', model: 'claude-sonnet-4-5', id: 'b/pool', weight: 0.000001 })
      .with({ routing: { retries: 1 } })
      .start({ clock });
    client = new Anthropic({ baseURL: `${gw.url}/native`, apiKey: CLIENT_KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await first.close();
    await second.close();
    await openai.stop();
  });
  beforeEach(() => {
    first.requests.length = 0;
    second.requests.length = 0;
    openai.requests.length = 0;
  });

  it('retries a stream whose first event is an overloaded error, before the client sees anything', async () => {
    first.replies({ events: [OVERLOADED] }, { events: textEvents('msg_1', 'claude-sonnet-4-5', ['Hel', 'lo']) });
    const stream = client.messages.stream({ model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    const message = await stream.finalMessage();
    expect(message.content).to.deep.equal([{ type: 'text', text: 'Hello' }]);
    expect(first.requests).to.have.length(2);
    expect(second.requests).to.have.length(0);
  });

  it('falls back to the spare model when the deployment keeps answering 529 overloaded', async () => {
    first.reply({ error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } });
    second.reply({ json: { id: 'msg_2', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'from the spare' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 3 } } });
    const { data, response } = await client.messages.create({ model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.content).to.deep.equal([{ type: 'text', text: 'from the spare' }]);
    expect(response.headers.get('x-gateway-model-id')).to.equal('b/sonnet');
    expect(first.requests).to.have.length(2);
  });

  it('never retries a 400 from the upstream', async () => {
    first.reply({ error: { status: 400, type: 'invalid_request_error', message: 'max_tokens: too large' } });
    const err = await client.messages.create({ model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
    expect(err).to.be.instanceOf(Anthropic.BadRequestError);
    expect(first.requests).to.have.length(1);
    expect(second.requests).to.have.length(0);
  });

  it('counts tokens on the Anthropic deployment of a group whose other deployment cannot, and keeps the overloaded answer rather than falling back to a model that cannot count', async () => {
    second.reply({ json: { input_tokens: 12 } });
    const { data, response } = await client.messages.countTokens({ model: 'claude-pool', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data).to.deep.equal({ input_tokens: 12 });
    expect(response.headers.get('x-gateway-model-id')).to.equal('b/pool');
    expect(second.last.path).to.equal('/v1/messages/count_tokens');

    first.reply({ error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } });
    const err = await client.messages.countTokens({ model: 'claude-or-gpt', messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
    expect(err).to.be.instanceOf(Anthropic.APIError);
    expect({ status: err.status, type: err.error?.error?.type }).to.deep.equal({ status: 503, type: 'overloaded_error' });
    expect(first.requests).to.have.length(2);
    expect(openai.requests).to.have.length(0);
  });

  it('answers the Anthropic deployment\u2019s own failure when its fallback cannot take the request (a server tool only Claude runs), so the SDK retries it', async () => {
    first.reply({ error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } });
    const request = {
      model: 'claude-or-gpt',
      max_tokens: 64,
      tools: [{ type: 'web_search_20250305' as const, name: 'web_search' as const, max_uses: 2 }],
      messages: [{ role: 'user' as const, content: 'What happened in Paris today?' }],
    };
    for (const stream of [false, true]) {
      first.requests.length = 0;
      // past the cooldown the earlier failures started (a deployment in cooldown is not planned at all)
      clock.advance(60_000);
      const err = await client.messages.create({ ...request, stream }).catch((e) => e);
      expect(err, `stream: ${stream}`).to.be.instanceOf(Anthropic.APIError);
      expect({ status: err.status, type: err.error?.error?.type }, `stream: ${stream}`).to.deep.equal({ status: 503, type: 'overloaded_error' });
      expect(first.requests.length, `stream: ${stream}`).to.be.greaterThan(0);
      expect(openai.requests, `stream: ${stream}`).to.have.length(0);
    }
  });

  it('tries the Anthropic deployment in cooldown when its fallback cannot take the request (a server tool only Claude runs), rather than a 400 about the client\u2019s valid request', async () => {
    const request = {
      model: 'claude-or-gpt',
      max_tokens: 64,
      tools: [{ type: 'web_search_20250305' as const, name: 'web_search' as const, max_uses: 2 }],
      messages: [{ role: 'user' as const, content: 'What happened in Paris today?' }],
    };
    clock.advance(60_000);
    first.reply({ error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } });
    // two attempts each: the third failure puts the lone deployment in cooldown
    for (let i = 0; i < 2; i++) expect((await client.messages.create(request).catch((e) => e)).status).to.equal(503);
    first.reply({ json: { id: 'msg_3', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'searched' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 3 } } });
    first.requests.length = 0;
    const { data, response } = await client.messages.create(request).withResponse();
    expect(data.content).to.deep.equal([{ type: 'text', text: 'searched' }]);
    expect(response.headers.get('x-gateway-model-id')).to.equal('a/or-gpt');
    expect(first.requests).to.have.length(1);
    expect(openai.requests).to.have.length(0);
  });
});
