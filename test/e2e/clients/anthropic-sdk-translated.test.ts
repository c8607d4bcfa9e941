/**
 * The Anthropic SDK's structured outputs and extended thinking on a model served by translation to chat
 * (a fake OpenAI-compatible upstream): the schema must reach the upstream as `response_format`, never be
 * dropped, and the upstream's reasoning must come back as thinking blocks, JSON and streamed.
 */
import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { jsonSchemaOutputFormat } from '@anthropic-ai/sdk/helpers/json-schema';
import { FakeOpenAI, chatCompletion } from '../../support/fake-openai';
import { readFixture } from '../../support/fixtures';
import type { TestGateway } from '../../support/start-gateway';
import { testConfig } from '../../support/test-config';

const KEY = 'sk-anthropic-sdk-CANARY-7f3';

const PERSON = {
  type: 'object',
  properties: { name: { type: 'string' }, born: { type: 'integer' } },
  required: ['name', 'born'],
  additionalProperties: false,
} as const;

describe('Anthropic SDK on a translated (non-Anthropic) model: structured output and thinking', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;
  let client: Anthropic;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await testConfig().withKey(KEY).withOpenAI('oai', upstream, 'sk-provider').withModel('gpt-test', { model: 'upstream-model' }).with({ routing: { retries: 0 } }).start();
    client = new Anthropic({ baseURL: `${gw.url}/native`, apiKey: KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
  });

  it('sends messages.parse structured output upstream as response_format json_schema, and parses the answer', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('{"name":"Ada Lovelace","born":1815}') };
    const message = await client.messages.parse({
      model: 'gpt-test',
      max_tokens: 256,
      messages: [{ role: 'user', content: 'Extract: Ada Lovelace, born 1815.' }],
      output_config: { format: jsonSchemaOutputFormat(PERSON as any) },
    });
    expect(message.parsed_output).to.deep.equal({ name: 'Ada Lovelace', born: 1815 });
    const format = upstream.last.body.response_format;
    expect(format.type).to.equal('json_schema');
    expect(format.json_schema.schema).to.deep.include({ type: 'object', required: ['name', 'born'] });
  });

  it('refuses structured output it cannot translate with a 400 naming the field, before calling upstream', async () => {
    const err = await client.messages
      .create({ model: 'gpt-test', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], output_config: { effort: 'max' } })
      .then(() => undefined, (e) => e);
    expect(err).to.be.instanceOf(Anthropic.BadRequestError);
    expect(err.error).to.deep.equal({ type: 'error', error: { type: 'invalid_request_error', message: 'output_config.effort: is supported only for Anthropic models' } });
    expect(upstream.requests).to.have.length(0);
  });

  it('returns the upstream\u2019s reasoning as a thinking block and a msg_ id (JSON)', async () => {
    upstream.script = { kind: 'json', body: readFixture('messages', 'thinking.chat-response.json') };
    const message = await client.messages.create({ model: 'gpt-test', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: '17 * 23?' }] });
    expect(upstream.last.body.reasoning_effort).to.equal('low');
    expect(message.id).to.match(/^msg_/);
    expect(message.content).to.deep.equal(readFixture('messages', 'thinking.messages-response.json').content);
  });

  it('streams the reasoning as a thinking block with its signature, which goes back on the next turn', async () => {
    upstream.script = { kind: 'sse', events: readFixture<{ data: object }[]>('messages', 'thinking.chat-stream.json').slice(0, -1).map((f) => f.data) };
    const stream = client.messages.stream({ model: 'gpt-test', max_tokens: 2048, messages: [{ role: 'user', content: '17 * 23?' }] });
    const first = await stream.finalMessage();
    expect(first.id).to.match(/^msg_/);
    expect(first.content[0]).to.deep.equal({ type: 'thinking', thinking: '17 * 20 = 340; 17 * 3 = 51.', signature: 'EqQBCgIYAhIM' });
    expect(first.content[1]).to.deep.include({ type: 'text', text: '391' });

    upstream.script = { kind: 'json', body: chatCompletion('23') };
    await client.messages.create({
      model: 'gpt-test',
      max_tokens: 64,
      messages: [{ role: 'user', content: '17 * 23?' }, { role: 'assistant', content: first.content as any }, { role: 'user', content: 'And 391 / 17?' }],
    });
    // an OpenAI-compatible upstream gets the turn without the Anthropic-only blocks (OpenAI refuses unknown fields)
    expect(upstream.last.body.messages[1]).to.deep.equal({ role: 'assistant', content: '391' });
  });
});
