/**
 * LangChain's ChatOpenAI and ChatAnthropic against the gateway, as their users write them: invoke and
 * stream with usage_metadata read back, bindTools with the tool result sent on the next turn, and
 * withStructuredOutput on an OpenAI model and on a Claude model through the Messages endpoint.
 */
import { expect } from 'chai';
import { ChatOpenAI } from '@langchain/openai';
import { ChatAnthropic } from '@langchain/anthropic';
import { AIMessage, HumanMessage, ToolMessage, type AIMessageChunk } from '@langchain/core/messages';
import { FakeOpenAI, chatChunks, chatCompletion } from '../../support/fake-openai';
import { FakeAnthropicUpstream } from '../../providers/anthropic/fake-anthropic-upstream';
import type { TestGateway } from '../../support/start-gateway';
import { testConfig } from '../../support/test-config';

const KEY = 'sk-langchain-chat-CANARY-7a4';
const weatherTool = { type: 'function' as const, function: { name: 'weather', description: 'Current temperature', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
const personSchema = { title: 'person', type: 'object', properties: { name: { type: 'string' }, born: { type: 'integer' } }, required: ['name', 'born'], additionalProperties: false };

describe('LangChain ChatOpenAI / ChatAnthropic against the gateway', () => {
  let upstream: FakeOpenAI;
  let claude: FakeAnthropicUpstream;
  let gw: TestGateway;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    claude = new FakeAnthropicUpstream('sk-ant-provider');
    await claude.start();
    gw = await testConfig()
      .withKey(KEY)
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model' })
      .withProvider({ id: 'claude', type: 'anthropic', baseUrl: claude.url, apiKey: 'sk-ant-provider' })
      .withModel('claude-test', { model: 'claude-upstream' })
      .with({ routing: { retries: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
    await claude.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    claude.requests.length = 0;
  });

  const chatOpenAI = (model = 'gpt-test') => new ChatOpenAI({ model, apiKey: KEY, configuration: { baseURL: `${gw.url}/v1` }, maxRetries: 0 });
  const chatAnthropic = (model: string) => new ChatAnthropic({ model, apiKey: KEY, anthropicApiUrl: `${gw.url}/native`, maxRetries: 0 });

  describe('ChatOpenAI', () => {
    it('invoke: text and usage_metadata from the upstream\u2019s count', async () => {
      upstream.script = { kind: 'json', body: chatCompletion('Paris.', { prompt_tokens: 21, completion_tokens: 2, total_tokens: 23 }) };
      const reply = await chatOpenAI().invoke('Capital of France?');
      expect(reply.content).to.equal('Paris.');
      expect(reply.usage_metadata).to.deep.include({ input_tokens: 21, output_tokens: 2, total_tokens: 23 });
    });

    it('stream: the pieces join to the text, usage comes from the final chunk', async () => {
      upstream.script = { kind: 'sse', events: chatChunks(['Bon', 'jour'], { prompt_tokens: 30, completion_tokens: 3, total_tokens: 33 }) };
      let message: AIMessageChunk | undefined;
      for await (const chunk of await chatOpenAI().stream('Hello in French')) message = message ? message.concat(chunk) : chunk;
      expect(message!.content).to.equal('Bonjour');
      expect(message!.usage_metadata).to.deep.include({ input_tokens: 30, output_tokens: 3 });
    });

    it('bindTools: reads the tool call, and the ToolMessage reaches the upstream on the next turn', async () => {
      const call = { id: 'call_w1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } };
      upstream.script = { kind: 'json', body: chatCompletion('', undefined, { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }] }) };
      const model = chatOpenAI().bindTools([weatherTool]);
      const history = [new HumanMessage('Weather in Oslo?')];
      const first = await model.invoke(history);
      expect(first.tool_calls).to.deep.equal([{ id: 'call_w1', name: 'weather', args: { city: 'Oslo' }, type: 'tool_call' }]);
      upstream.script = { kind: 'json', body: chatCompletion('4 degrees in Oslo.') };
      const second = await model.invoke([...history, first, new ToolMessage({ tool_call_id: 'call_w1', content: '{"celsius":4}' })]);
      expect(second.content).to.equal('4 degrees in Oslo.');
      expect(upstream.last.body.messages.at(-1)).to.deep.include({ role: 'tool', tool_call_id: 'call_w1', content: '{"celsius":4}' });
    });

    it('stream with useResponsesApi: an upstream cut mid-answer is an error, not a shorter answer', async () => {
      upstream.script = { kind: 'sse', events: chatChunks(['Bon', 'jour', ' à', ' tous']), cutAfter: 2 };
      const model = new ChatOpenAI({ model: 'gpt-test', apiKey: KEY, configuration: { baseURL: `${gw.url}/v1` }, maxRetries: 0, useResponsesApi: true });
      const pieces: string[] = [];
      const streaming = (async () => {
        for await (const chunk of await model.stream('Hello in French')) pieces.push(JSON.stringify(chunk.content));
      })();
      const err = await streaming.then(() => undefined, (e) => e);
      expect(err, `the stream ended without an error after ${pieces.join(' ')}`).to.be.instanceOf(Error);
      expect(err.message).to.include('The upstream connection broke in the middle of the stream.');
    });

    it('withStructuredOutput: the schema goes upstream as response_format, the object comes back', async () => {
      upstream.script = { kind: 'json', body: chatCompletion('{"name":"Ada Lovelace","born":1815}') };
      const result = await chatOpenAI().withStructuredOutput(personSchema).invoke('Ada Lovelace, born 1815.');
      expect(result).to.deep.equal({ name: 'Ada Lovelace', born: 1815 });
      expect(upstream.last.body.response_format.type).to.equal('json_schema');
    });

    it('withStructuredOutput on a Claude model through chat: Claude\u2019s tool answer comes back as the object', async () => {
      upstream.script = { kind: 'json', body: chatCompletion('unused') };
      claude.reply((req) => {
        const forced = req.body.tool_choice?.name ?? req.body.tools?.[0]?.name;
        const content = forced
          ? [{ type: 'tool_use', id: 'toolu_1', name: forced, input: { name: 'Grace Hopper', born: 1906 } }]
          : [{ type: 'text', text: '{"name":"Grace Hopper","born":1906}' }];
        return { json: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-upstream', content, stop_reason: forced ? 'tool_use' : 'end_turn', stop_sequence: null, usage: { input_tokens: 40, output_tokens: 9 } } };
      });
      const result = await chatOpenAI('claude-test').withStructuredOutput(personSchema).invoke('Grace Hopper, born 1906.');
      expect(result).to.deep.equal({ name: 'Grace Hopper', born: 1906 });
      expect(JSON.stringify(claude.requests[0].body)).to.include('"born"');
    });
  });

  describe('ChatAnthropic', () => {
    it('invoke on a Claude model (pass-through): text and usage_metadata', async () => {
      claude.reply({ json: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-upstream', content: [{ type: 'text', text: 'Paris.' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 17, output_tokens: 3 } } });
      const reply = await chatAnthropic('claude-test').invoke('Capital of France?');
      expect(reply.content).to.equal('Paris.');
      expect(reply.usage_metadata).to.deep.include({ input_tokens: 17, output_tokens: 3 });
    });

    it('withStructuredOutput on a Claude model through the Messages endpoint: the forced tool\u2019s input is the object', async () => {
      claude.reply((req) => {
        const name = req.body.tool_choice?.name ?? req.body.tools[0].name;
        return { json: { id: 'msg_2', type: 'message', role: 'assistant', model: 'claude-upstream', content: [{ type: 'tool_use', id: 'toolu_1', name, input: { name: 'Grace Hopper', born: 1906 } }], stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 40, output_tokens: 9 } } };
      });
      const result = await chatAnthropic('claude-test').withStructuredOutput(personSchema).invoke('Grace Hopper, born 1906.');
      expect(result).to.deep.equal({ name: 'Grace Hopper', born: 1906 });
      expect(claude.requests[0].body.tools[0].input_schema).to.deep.include({ required: ['name', 'born'] });
    });

    it('bindTools on a translated (OpenAI) model: tool call out, tool_result back in as a chat tool message', async () => {
      const call = { id: 'call_w1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } };
      upstream.script = { kind: 'json', body: chatCompletion('', undefined, { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }] }) };
      const model = chatAnthropic('gpt-test').bindTools([{ name: 'weather', description: 'Current temperature', input_schema: weatherTool.function.parameters }]);
      const history = [new HumanMessage('Weather in Oslo?')];
      const first = (await model.invoke(history)) as AIMessage;
      expect(first.tool_calls?.[0]).to.deep.include({ name: 'weather', args: { city: 'Oslo' } });
      upstream.script = { kind: 'json', body: chatCompletion('4 degrees in Oslo.', { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 }) };
      const second = await model.invoke([...history, first, new ToolMessage({ tool_call_id: first.tool_calls![0].id!, content: '{"celsius":4}' })]);
      expect(second.content).to.equal('4 degrees in Oslo.');
      expect(second.usage_metadata).to.deep.include({ input_tokens: 50, output_tokens: 5 });
      const sent = upstream.last.body.messages as any[];
      expect(sent.find((m) => m.role === 'tool')).to.deep.include({ tool_call_id: first.tool_calls![0].id, content: '{"celsius":4}' });
    });
  });
});
