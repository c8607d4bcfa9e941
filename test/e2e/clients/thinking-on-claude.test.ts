/**
 * Claude's thinking reaching chat-completions and Responses clients (the official OpenAI SDK) through
 * the anthropic provider, and coming back on the next turn with its signature unchanged, as Anthropic
 * requires: `reasoning_content` + `thinking_blocks` on chat, a `reasoning` item (summary text, the
 * signed blocks in `encrypted_content`) on Responses, JSON and streamed.
 */
import { expect } from 'chai';
import OpenAI from 'openai';
import { FakeAnthropicUpstream } from '../../providers/anthropic/fake-anthropic-upstream';
import { readFixture } from '../../support/fixtures';
import type { TestGateway } from '../../support/start-gateway';
import { testConfig } from '../../support/test-config';

const KEY = 'sk-thinking-CANARY-3c7';
const PROVIDER_KEY = 'sk-ant-thinking-upstream';
const SIGNED = { type: 'thinking', thinking: 'Small primes...', signature: 'EqQBCgIYAhIM' };

/** A Claude answer that thought first (the golden upstream response, with its thinking block). */
const thoughtAnswer = () => readFixture('anthropic', 'text.upstream-response.json');
const thoughtStream = () => {
  const events = readFixture<{ event: string; data: any }[]>('anthropic', 'tool-use.upstream-stream.json');
  // the same stream ending in text: keep the thinking and text blocks, drop the tool calls
  return events.filter((e) => !(e.data.index >= 2) || e.event === 'message_delta' || e.event === 'message_stop').map((e) => (e.event === 'message_delta' ? { ...e, data: { ...e.data, delta: { stop_reason: 'end_turn', stop_sequence: null } } } : e));
};

describe('Claude thinking through chat completions and Responses (OpenAI SDK, fake Anthropic upstream)', () => {
  let upstream: FakeAnthropicUpstream;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    upstream = new FakeAnthropicUpstream(PROVIDER_KEY);
    await upstream.start();
    gw = await testConfig()
      .withKey(KEY)
      .withProvider({ id: 'claude', type: 'anthropic', baseUrl: upstream.url, apiKey: PROVIDER_KEY })
      .withModel('claude-test', { model: 'claude-upstream' })
      .with({ routing: { retries: 0 } })
      .start();
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('chat: reasoning_effort turns thinking on; the blocks come back as thinking_blocks and go upstream again unchanged', async () => {
    upstream.reply({ json: thoughtAnswer() });
    const first = await client.chat.completions.create({ model: 'claude-test', reasoning_effort: 'low', messages: [{ role: 'user', content: 'Name a prime.' }] });
    expect(upstream.last.body.thinking).to.deep.equal({ type: 'enabled', budget_tokens: 1024 });
    const message = first.choices[0].message as any;
    expect(message.reasoning_content).to.equal('Small primes...');
    expect(message.thinking_blocks).to.deep.equal([SIGNED]);

    upstream.reply({ json: thoughtAnswer() });
    await client.chat.completions.create({ model: 'claude-test', messages: [{ role: 'user', content: 'Name a prime.' }, message, { role: 'user', content: 'Another?' }] });
    expect(upstream.last.body.messages[1]).to.deep.equal({ role: 'assistant', content: [SIGNED, { type: 'text', text: message.content }] });
  });

  it('chat, streamed: reasoning_content deltas and the signature in a thinking_blocks delta', async () => {
    upstream.reply({ events: thoughtStream() });
    const stream = await client.chat.completions.create({ model: 'claude-test', stream: true, messages: [{ role: 'user', content: 'Weather?' }] });
    let reasoning = '';
    const signatures: string[] = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as any;
      reasoning += delta?.reasoning_content ?? '';
      for (const block of delta?.thinking_blocks ?? []) signatures.push(block.signature);
    }
    expect(reasoning).to.equal('Two lookups needed.');
    expect(signatures).to.deep.equal(['EqQBCgIYAhIM']);
  });

  for (const streamed of [false, true]) {
    it(`Responses: a reasoning item before the message, passed back as input with its signature (${streamed ? 'streamed' : 'JSON'})`, async () => {
      upstream.reply(streamed ? { events: thoughtStream() } : { json: thoughtAnswer() });
      const request = { model: 'claude-test', input: 'Name a prime.', reasoning: { effort: 'medium' as const }, store: false };
      let output: any[];
      if (streamed) {
        const events: any[] = [];
        for await (const event of await client.responses.create({ ...request, stream: true })) events.push(event);
        expect(events.map((e) => e.type)).to.include.members(['response.reasoning_summary_part.added', 'response.reasoning_summary_text.delta', 'response.reasoning_summary_text.done']);
        output = events.at(-1).response.output;
      } else {
        output = (await client.responses.create(request)).output;
      }
      expect(upstream.last.body.thinking).to.deep.equal({ type: 'enabled', budget_tokens: 4096 });
      expect(output.map((i) => i.type)).to.deep.equal(['reasoning', 'message']);
      const thought = streamed ? 'Two lookups needed.' : 'Small primes...';
      expect(output[0].summary).to.deep.equal([{ type: 'summary_text', text: thought }]);
      expect(output[0].encrypted_content).to.be.a('string');

      upstream.reply({ json: thoughtAnswer() });
      await client.responses.create({ model: 'claude-test', store: false, input: [{ role: 'user', content: 'Name a prime.' }, ...output, { role: 'user', content: 'Another?' }] });
      const assistant = upstream.last.body.messages[1];
      expect(assistant.content[0]).to.deep.equal({ type: 'thinking', thinking: thought, signature: 'EqQBCgIYAhIM' });
    });
  }
});
