import { expect } from 'chai';
import OpenAI from 'openai';
import { FakeOpenAI, chatChunks, chatCompletion, type RecordedRequest, type Script } from '../support/fake-openai';
import { FakeMcpServer } from '../support/fake-mcp-server';
import { startGateway, type TestGateway } from '../support/start-gateway';

const CLIENT_KEY = 'sk-resp-client-CANARY-31';
const OTHER_KEY = 'sk-resp-other-CANARY-32';
const USAGE = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };

/** A chat completion that asks for these tool calls. */
function toolCallCompletion(calls: { id: string; name: string; args: unknown }[], content: string | null = null) {
  return chatCompletion('', USAGE, {
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } })) },
        finish_reason: 'tool_calls',
      },
    ],
  });
}

/** The stream of a completion that asks for tool calls (arguments sent in two pieces, like OpenAI does). */
function toolCallChunks(calls: { id: string; name: string; args: unknown }[]) {
  const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1700000000, model: 'upstream-model' };
  const events: object[] = [{ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: null }, finish_reason: null }] }];
  calls.forEach((c, index) => {
    const args = JSON.stringify(c.args);
    const half = Math.floor(args.length / 2);
    events.push({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: args.slice(0, half) } }] }, finish_reason: null }] });
    events.push({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, function: { arguments: args.slice(half) } }] }, finish_reason: null }] });
  });
  events.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] });
  events.push({ ...base, choices: [], usage: USAGE });
  return events;
}

const toolResults = (req: RecordedRequest) => (req.body.messages as any[]).filter((m) => m.role === 'tool');

/**
 * A model that asks for tools until it has their results, then answers with what they said. `plan`
 * lists the calls of each round.
 */
function agentModel(plan: { id: string; name: string; args: unknown }[][]): (req: RecordedRequest) => Script {
  return (req) => {
    const assistantTurns = (req.body.messages as any[]).filter((m) => m.role === 'assistant' && m.tool_calls).length;
    const stream = req.body.stream === true;
    if (assistantTurns < plan.length) {
      const calls = plan[assistantTurns];
      return stream ? { kind: 'sse', events: toolCallChunks(calls) } : { kind: 'json', body: toolCallCompletion(calls) };
    }
    const answer = `Answer from: ${toolResults(req).map((m) => m.content).join(' | ')}`;
    return stream ? { kind: 'sse', events: chatChunks(['Answer ', answer.slice('Answer '.length)], USAGE) } : { kind: 'json', body: chatCompletion(answer, USAGE) };
  };
}

describe('Responses endpoint with the gateway-run MCP tool loop (openai SDK)', () => {
  let upstream: FakeOpenAI;
  let docs: FakeMcpServer;
  let crm: FakeMcpServer;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    docs = await FakeMcpServer.start({
      toolsOnly: true,
      tools: {
        search: { description: 'Search the docs', inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }, handler: (args) => ({ content: [{ type: 'text', text: `docs about ${args.q}` }] }) },
        fail: { description: 'Always fails', handler: () => ({ content: [{ type: 'text', text: 'boom' }], isError: true }) },
      },
    });
    crm = await FakeMcpServer.start({
      toolsOnly: true,
      tools: { lookup: { description: 'Find a customer', handler: (args) => ({ content: [{ type: 'text', text: `customer ${args.name}` }] }) } },
    });
    gw = await startGateway({
      organizations: [{ id: 'acme' }],
      keys: [
        { key: CLIENT_KEY, org: 'acme', id: 'agent', models: ['gpt-test'] },
        { key: OTHER_KEY, org: 'acme', id: 'other', models: ['gpt-test'], mcp: { servers: ['docs'] } },
      ],
      providers: [{ id: 'oai', type: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: 'sk-provider' }],
      models: [{ name: 'gpt-test', provider: 'oai', model: 'upstream-model', id: 'oai/upstream-model', price: { inputPerMTok: 1, outputPerMTok: 2 } }],
      mcpServers: [
        { name: 'docs', url: docs.url, org: 'acme', visibility: 'private', pricePerCall: 0.01 },
        { name: 'crm', url: crm.url, org: 'acme', visibility: 'private' },
      ],
      mcp: { healthCheckIntervalSeconds: 0 },
      responses: { maxToolRounds: 3 },
    });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: CLIENT_KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
    await docs.close();
    await crm.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
  });

  it('answers a plain text input (no tools) through the chat translation', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('Hello there', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
    const { data, response } = await client.responses.create({ model: 'gpt-test', input: 'hi', instructions: 'Be brief.', max_output_tokens: 50 }).withResponse();
    expect(data.output_text).to.equal('Hello there');
    expect(data.status).to.equal('completed');
    expect(data.usage).to.deep.include({ input_tokens: 10, output_tokens: 5, total_tokens: 15 });
    expect(upstream.last.body).to.deep.equal({ model: 'upstream-model', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }], max_tokens: 50 });
    expect(response.headers.get('x-gateway-response-cost')).to.equal('0.00002');
    expect(response.headers.get('x-gateway-model-id')).to.equal('oai/upstream-model');
  });

  it('runs the MCP tool loop: lists the tools, calls them, feeds the results back, answers', async () => {
    upstream.script = agentModel([[{ id: 'call_1', name: 'docs-search', args: { q: 'billing' } }]]);
    const { data, response } = await client.responses
      .create({ model: 'gpt-test', input: 'How does billing work?', tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }] })
      .withResponse();
    expect(data.output.map((i) => i.type)).to.deep.equal(['mcp_list_tools', 'mcp_call', 'message']);
    const call = data.output[1] as any;
    expect(call).to.deep.include({ name: 'docs-search', arguments: '{"q":"billing"}', server_label: 'gw', output: 'docs about billing', error: null, status: 'completed' });
    expect(data.output_text).to.equal('Answer from: docs about billing');
    expect(upstream.requests).to.have.length(2);
    expect(upstream.requests[0].body.tools.map((t: any) => t.function.name)).to.include.members(['docs-search', 'docs-fail', 'crm-lookup']);
    // two rounds of 100 in / 20 out at $1/$2 per M, plus the docs fee of $0.01
    expect(response.headers.get('x-gateway-response-cost')).to.equal('0.01028');
  });
});
