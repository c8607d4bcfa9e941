/**
 * The OpenAI Agents SDK (`@openai/agents`) against the gateway with both of its models, the Responses
 * model (its default) and the chat-completions model: a plain run with usage read back, a function tool
 * the agent calls and answers after, and a streamed run.
 */
import { expect } from 'chai';
import OpenAI from 'openai';
import { Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, hostedMcpTool, setTracingDisabled, tool, user } from '@openai/agents';
import { FakeOpenAI, chatChunks, chatCompletion, type RecordedRequest, type Script } from '../../support/fake-openai';
import { FakeMcpServer } from '../../support/fake-mcp-server';
import type { TestGateway } from '../../support/start-gateway';
import { testConfig } from '../../support/test-config';

const KEY = 'sk-agents-sweep-CANARY-1d3';

describe('OpenAI Agents SDK (Responses and chat-completions models) against the gateway', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    setTracingDisabled(true);
    upstream = await new FakeOpenAI().start();
    gw = await testConfig().withKey(KEY).withOpenAI('oai', upstream, 'sk-provider').withModel('gpt-test', { model: 'upstream-model' }).with({ routing: { retries: 0 } }).start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
  });

  const client = () => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 }) as any;
  const models = {
    responses: () => new OpenAIResponsesModel(client(), 'gpt-test'),
    'chat-completions': () => new OpenAIChatCompletionsModel(client(), 'gpt-test'),
  };

  for (const [kind, make] of Object.entries(models)) {
    describe(`${kind} model`, () => {
      it('plain run: final output and the upstream\u2019s usage', async () => {
        upstream.script = { kind: 'json', body: chatCompletion('Paris.', { prompt_tokens: 21, completion_tokens: 2, total_tokens: 23 }) };
        const result = await new Runner().run(new Agent({ name: 'geo', instructions: 'Be brief.', model: make() }), 'Capital of France?');
        expect(result.finalOutput).to.equal('Paris.');
        expect(result.state.usage).to.deep.include({ inputTokens: 21, outputTokens: 2, totalTokens: 23 });
        expect(upstream.last.body.messages[0]).to.deep.equal({ role: 'system', content: 'Be brief.' });
      });

      it('function tool: the agent calls it, and the result reaches the upstream on the next turn', async () => {
        upstream.script = (req: RecordedRequest): Script => {
          const toolMessage = (req.body.messages as any[]).find((m) => m.role === 'tool');
          if (toolMessage) return { kind: 'json', body: chatCompletion(`Oslo: ${toolMessage.content}`) };
          const call = { id: 'call_w1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } };
          return { kind: 'json', body: chatCompletion('', undefined, { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }] }) };
        };
        const seen: unknown[] = [];
        const weather = tool({
          name: 'weather',
          description: 'Current temperature',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
          strict: true,
          execute: async (input: any) => (seen.push(input), '4 degrees'),
        });
        const result = await new Runner().run(new Agent({ name: 'weather', model: make(), tools: [weather] }), 'Weather in Oslo?');
        expect(seen).to.deep.equal([{ city: 'Oslo' }]);
        expect(result.finalOutput).to.equal('Oslo: 4 degrees');
        expect(upstream.requests).to.have.length(2);
        expect(upstream.last.body.messages.find((m: any) => m.role === 'tool')).to.deep.include({ tool_call_id: 'call_w1', content: '4 degrees' });
      });

      it('keeps the prompt cache for as long as the agent asks (promptCacheRetention)', async () => {
        upstream.script = { kind: 'json', body: chatCompletion('Paris.') };
        const agent = new Agent({ name: 'geo', model: make(), modelSettings: { promptCacheRetention: '24h' } });
        const result = await new Runner().run(agent, 'Capital of France?');
        expect(result.finalOutput).to.equal('Paris.');
        expect(upstream.last.body.prompt_cache_retention).to.equal('24h');
      });

      it('streamed run: the text deltas join to the final output', async () => {
        upstream.script = { kind: 'sse', events: chatChunks(['Bon', 'jour'], { prompt_tokens: 30, completion_tokens: 3, total_tokens: 33 }) };
        const result = await new Runner().run(new Agent({ name: 'fr', model: make() }), 'Hello in French', { stream: true });
        let text = '';
        for await (const chunk of result.toTextStream()) text += chunk;
        await result.completed;
        expect(text).to.equal('Bonjour');
        expect(result.finalOutput).to.equal('Bonjour');
        expect(upstream.last.body.stream).to.equal(true);
      });
    });
  }

  for (const stream of [false, true]) {
    it(`responses model, ${stream ? 'streamed' : 'JSON'}: an answer without a word ends the run, as on the chat-completions model (no asking again until max turns)`, async () => {
      upstream.script = (req: RecordedRequest): Script => (req.body.stream ? { kind: 'sse', events: chatChunks([''], { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 }) } : { kind: 'json', body: chatCompletion('') });
      const agent = new Agent({ name: 'quiet', model: models.responses() });
      let finalOutput: unknown;
      if (stream) {
        const result = await new Runner().run(agent, 'Say nothing.', { stream: true });
        for await (const _event of result);
        await result.completed;
        finalOutput = result.finalOutput;
      } else {
        finalOutput = (await new Runner().run(agent, 'Say nothing.')).finalOutput;
      }
      expect(finalOutput).to.equal('');
      expect(upstream.requests).to.have.length(1);
    });
  }
});

describe('OpenAI Agents SDK: what only OpenAI\u2019s own servers hold', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    setTracingDisabled(true);
    upstream = await new FakeOpenAI().start();
    gw = await testConfig().withKey(KEY).withOpenAI('oai', upstream, 'sk-provider').withModel('gpt-test', { model: 'upstream-model' }).with({ routing: { retries: 0 } }).start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  const model = () => new OpenAIResponsesModel(new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 }) as any, 'gpt-test');

  it('an agent on a stored prompt template is refused (400 naming prompt), not answered without its prompt', async () => {
    upstream.requests.length = 0;
    upstream.script = { kind: 'json', body: chatCompletion('An answer without the prompt.') };
    const agent = new Agent({ name: 'support', model: model(), prompt: { promptId: 'pmpt_support', version: '2', variables: { tone: 'formal' } } });
    const err = await new Runner().run(agent, 'Where is my order?').then(() => undefined, (e) => e);
    expect(err, 'the run answered').to.be.instanceOf(Error);
    expect(err.status).to.equal(400);
    expect(err.error).to.deep.include({ code: 'unsupported_parameter', param: 'prompt' });
    expect(upstream.requests).to.have.length(0);
  });

  it('a run in a stored conversation is refused (400 naming conversation), not answered without its history', async () => {
    upstream.requests.length = 0;
    upstream.script = { kind: 'json', body: chatCompletion('An answer without the history.') };
    const err = await new Runner().run(new Agent({ name: 'chat', model: model() }), 'And the second one?', { conversationId: 'conv_123' }).then(() => undefined, (e) => e);
    expect(err, 'the run answered').to.be.instanceOf(Error);
    expect(err.status).to.equal(400);
    expect(err.error).to.deep.include({ code: 'unsupported_parameter', param: 'conversation' });
    expect(upstream.requests).to.have.length(0);
  });
});

describe('OpenAI Agents SDK with a hosted MCP tool the gateway runs (gateway_proxy)', () => {
  let upstream: FakeOpenAI;
  let docs: FakeMcpServer;
  let gw: TestGateway;

  before(async () => {
    setTracingDisabled(true);
    upstream = await new FakeOpenAI().start();
    docs = await FakeMcpServer.start({ toolsOnly: true, tools: { search: { description: 'Search the docs', handler: (args) => ({ content: [{ type: 'text', text: `docs about ${args.q}` }] }) } } });
    gw = await testConfig()
      .withKey(KEY, { mcp: { servers: ['docs'] } })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model' })
      .withMcpServer('docs', docs.url, { org: 'acme' })
      .with({ routing: { retries: 0 }, mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
    await docs.close();
  });

  /** Asks for `search` once per user turn, then answers with the tool results it was given. */
  const searchingModel = (req: RecordedRequest): Script => {
    const messages = req.body.messages as any[];
    const lastUser = messages.map((m) => m.role).lastIndexOf('user');
    if (!messages.slice(lastUser).some((m) => m.role === 'tool')) {
      const call = { id: `call_${lastUser}`, type: 'function', function: { name: 'search', arguments: '{"q":"billing"}' } };
      return { kind: 'json', body: chatCompletion('', undefined, { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }] }) };
    }
    return { kind: 'json', body: chatCompletion(`results: ${messages.filter((m) => m.role === 'tool').map((m) => m.content).join(' | ')}`) };
  };

  it('sends the tool results of the first turn back to the model on the second (the SDK omits mcp_call outputs)', async () => {
    upstream.script = searchingModel;
    const agent = new Agent({
      name: 'docs',
      model: new OpenAIResponsesModel(new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 }) as any, 'gpt-test'),
      tools: [hostedMcpTool({ serverLabel: 'gw', serverUrl: 'gateway_proxy', requireApproval: 'never' })],
    });
    const first = await new Runner().run(agent, 'How does billing work?');
    expect(first.finalOutput).to.equal('results: docs about billing');
    const second = await new Runner().run(agent, [...first.history, user('And refunds?')]);
    expect(second.finalOutput).to.equal('results: docs about billing | docs about billing');
  });
});
