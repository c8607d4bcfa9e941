/**
 * The AI SDK 7's Anthropic provider (`@ai-sdk/anthropic`) on a model served by translation to chat: its
 * native structured output (`output_config.format`) must reach the upstream as `response_format`, and
 * the upstream's reasoning must come back as reasoning the SDK reads.
 */
import { expect } from 'chai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { Output, generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { FakeOpenAI, chatChunks, chatCompletion, type RecordedRequest, type Script } from '../../support/fake-openai';
import { readFixture } from '../../support/fixtures';
import type { TestGateway } from '../../support/start-gateway';
import { testConfig } from '../../support/test-config';

const KEY = 'sk-ai-sdk-anthropic-CANARY-8d2';

describe('AI SDK 7 (@ai-sdk/anthropic) on a translated (non-Anthropic) model', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await testConfig().withKey(KEY).withOpenAI('oai', upstream, 'sk-provider').withModel('gpt-test', { model: 'upstream-model' }).with({ routing: { retries: 0 } }).start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  const anthropic = () => createAnthropic({ baseURL: `${gw.url}/native/v1`, apiKey: KEY });

  it('gets a typed object: the schema goes upstream as response_format json_schema', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('{"name":"Ada Lovelace","born":1815}') };
    const schema = jsonSchema<{ name: string; born: number }>({
      type: 'object',
      properties: { name: { type: 'string' }, born: { type: 'integer' } },
      required: ['name', 'born'],
      additionalProperties: false,
    });
    const result = await generateText({
      model: anthropic()('gpt-test'),
      prompt: 'Extract: Ada Lovelace, born 1815.',
      output: Output.object({ schema }),
      providerOptions: { anthropic: { structuredOutputMode: 'outputFormat' } },
    });
    expect(result.output).to.deep.equal({ name: 'Ada Lovelace', born: 1815 });
    expect(upstream.last.body.response_format?.type).to.equal('json_schema');
    expect(upstream.last.body.response_format.json_schema.schema).to.deep.include({ required: ['name', 'born'] });
  });

  it('reads the upstream\u2019s reasoning as reasoning, asked for with thinking', async () => {
    upstream.script = { kind: 'json', body: readFixture('messages', 'thinking.chat-response.json') };
    const result = await generateText({
      model: anthropic()('gpt-test'),
      prompt: '17 * 23?',
      providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } },
    });
    expect(upstream.last.body.reasoning_effort).to.equal('low');
    expect(result.text).to.equal('391');
    expect(result.reasoningText).to.equal('17 * 23 = 17 * 20 + 17 * 3 = 340 + 51.');
  });
  it('streams text with usage: the input estimate first, the upstream\u2019s counts at the end', async () => {
    upstream.script = { kind: 'sse', events: chatChunks(['Bon', 'jour'], { prompt_tokens: 300, completion_tokens: 3, total_tokens: 303 }) };
    const result = streamText({ model: anthropic()('gpt-test'), prompt: 'Hello in French' });
    expect(await result.text).to.equal('Bonjour');
    expect((await result.usage).outputTokens).to.equal(3);
    expect((await result.usage).inputTokens).to.be.greaterThan(0);
  });

  it('streamed parallel tool calls whose arguments the upstream interleaves each reach the SDK whole', async () => {
    const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1700000000, model: 'upstream-model' };
    const args = (index: number, text: string) => ({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, function: { arguments: text } }] }, finish_reason: null }] });
    upstream.script = (req: RecordedRequest): Script => {
      const results = (req.body.messages as any[]).filter((m) => m.role === 'tool');
      if (results.length > 0) return { kind: 'sse', events: chatChunks([results.map((m) => m.content).join(', ')], { prompt_tokens: 60, completion_tokens: 6, total_tokens: 66 }) };
      // both calls announced in one chunk, then their arguments in turns
      const calls = ['call_a', 'call_b'].map((id, index) => ({ index, id, type: 'function', function: { name: 'weather', arguments: '' } }));
      return {
        kind: 'sse',
        events: [
          { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: null, tool_calls: calls }, finish_reason: null }] },
          args(0, '{"city":'),
          args(1, '{"city":'),
          args(0, '"Oslo"}'),
          args(1, '"Bergen"}'),
          { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
          { ...base, choices: [], usage: { prompt_tokens: 30, completion_tokens: 20, total_tokens: 50 } },
        ],
      };
    };
    const seen: { city: string }[] = [];
    const result = streamText({
      model: anthropic()('gpt-test'),
      prompt: 'Weather in Oslo and Bergen?',
      stopWhen: stepCountIs(3),
      tools: {
        weather: tool({
          description: 'Current temperature',
          inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
          execute: async (input: { city: string }) => (seen.push(input), `${input.city} 4`),
        }),
      },
    });
    expect(await result.text).to.equal('Oslo 4, Bergen 4');
    expect(seen).to.have.deep.members([{ city: 'Oslo' }, { city: 'Bergen' }]);
    const calls = (upstream.last.body.messages as any[]).find((m) => m.role === 'assistant').tool_calls.map((c: any) => [c.id, c.function.arguments]);
    expect(calls).to.deep.equal([['call_a', '{"city":"Oslo"}'], ['call_b', '{"city":"Bergen"}']]);
  });

  it('tool loop: tool_use out, the tool_result comes back as a chat tool message on the next turn', async () => {
    upstream.script = (req: RecordedRequest): Script => {
      const toolMessage = (req.body.messages as any[]).find((m) => m.role === 'tool');
      if (toolMessage) return { kind: 'json', body: chatCompletion(`Oslo: ${JSON.parse(toolMessage.content).celsius} degrees.`) };
      const call = { id: 'call_w1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } };
      return { kind: 'json', body: chatCompletion('', undefined, { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }] }) };
    };
    const seen: unknown[] = [];
    const result = await generateText({
      model: anthropic()('gpt-test'),
      prompt: 'Weather in Oslo?',
      stopWhen: stepCountIs(3),
      tools: {
        weather: tool({
          description: 'Current temperature',
          inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
          execute: async (input: { city: string }) => (seen.push(input), { celsius: 4 }),
        }),
      },
    });
    expect(seen).to.deep.equal([{ city: 'Oslo' }]);
    expect(result.text).to.equal('Oslo: 4 degrees.');
    const sent = upstream.last.body.messages as any[];
    expect(sent.find((m) => m.role === 'assistant').tool_calls[0].function).to.deep.equal({ name: 'weather', arguments: '{"city":"Oslo"}' });
    expect(sent.find((m) => m.role === 'tool').tool_call_id).to.equal(sent.find((m) => m.role === 'assistant').tool_calls[0].id);
  });
});
