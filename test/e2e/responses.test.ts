import { expect } from 'chai';
import OpenAI from 'openai';
import { FakeOpenAI, chatChunks, chatCompletion, type RecordedRequest, type Script } from '../support/fake-openai';
import { FakeMcpServer } from '../support/fake-mcp-server';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { rawSse } from './responses-support';

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

/** Resolved when the crm lookup runs: the docs `slow` tool waits for it (proves two calls ran at once). */
let crmCalled: () => void = () => undefined;
let crmSeen: Promise<void> = Promise.resolve();

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
        search: {
          description: 'Search the docs',
          inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
          handler: (args) => ({ content: [{ type: 'text', text: `docs about ${args.q}` }] }),
          extra: { annotations: { readOnlyHint: true } },
        },
        fail: { description: 'Always fails', handler: () => ({ content: [{ type: 'text', text: 'boom' }], isError: true }), extra: { annotations: { readOnlyHint: false } } },
        slow: {
          description: 'Waits until a crm lookup has started',
          handler: async () => {
            const concurrent = await Promise.race([crmSeen.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 3000))]);
            return { content: [{ type: 'text', text: concurrent ? 'ran beside lookup' : 'ran alone' }] };
          },
        },
      },
    });
    crm = await FakeMcpServer.start({
      toolsOnly: true,
      tools: { lookup: { description: 'Find a customer', handler: (args) => (crmCalled(), { content: [{ type: 'text', text: `customer ${args.name}` }] }) } },
    });
    gw = await testConfig()
      .withKey(CLIENT_KEY, { id: 'agent', models: ['gpt-test'] })
      .withKey(OTHER_KEY, { id: 'other', models: ['gpt-test'], mcp: { servers: ['docs'] } })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model', id: 'oai/upstream-model', price: { inputPerMTok: 1, outputPerMTok: 2 } })
      .withMcpServer('docs', docs.url, { org: 'acme', visibility: 'private', pricePerCall: 0.01 })
      .withMcpServer('crm', crm.url, { org: 'acme', visibility: 'private' })
      .with({ mcp: { healthCheckIntervalSeconds: 0 }, responses: { maxToolRounds: 3 } })
      .start();
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

  it("carries a search model's url_citation annotations and the service_tier into the output, JSON and streamed", async () => {
    const text = 'Rain is likely (weather.example).';
    const citation = { type: 'url_citation', url_citation: { start_index: 16, end_index: 31, title: 'Forecast', url: 'https://weather.example/today' } };
    const expected = { type: 'url_citation', start_index: 16, end_index: 31, title: 'Forecast', url: 'https://weather.example/today' };
    const message = { role: 'assistant', content: text, annotations: [citation] };
    upstream.script = { kind: 'json', body: chatCompletion(text, USAGE, { service_tier: 'default', choices: [{ index: 0, message, finish_reason: 'stop' }] }) };
    const data = await client.responses.create({ model: 'gpt-test', input: 'weather?' });
    expect(data.output_text).to.equal(text);
    expect((data.output[0] as any).content[0].annotations).to.deep.equal([expected]);
    expect(data.service_tier).to.equal('default');

    // OpenAI streams the annotations in a delta of their own, after the text
    const chunks = chatChunks([text], USAGE).map((e: any) => ({ ...e, service_tier: 'default' }));
    chunks.splice(2, 0, { ...chunks[1], choices: [{ index: 0, delta: { annotations: [citation] }, finish_reason: null }] });
    upstream.script = { kind: 'sse', events: chunks };
    const final = await client.responses.stream({ model: 'gpt-test', input: 'weather?' }).finalResponse();
    expect((final.output[0] as any).content[0].annotations).to.deep.equal([expected]);
    expect(final.service_tier).to.equal('default');
  });

  it('reads tools and tool_choice sent as null as not set (a Python client passing None), like the other optional fields', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('Hello there') };
    const data = await client.responses.create({ model: 'gpt-test', input: 'hi', tools: null, tool_choice: null } as never);
    expect(data.output_text).to.equal('Hello there');
    expect(data.tools).to.deep.equal([]);
    expect(data.tool_choice).to.equal('auto');
    expect(upstream.last.body).to.deep.equal({ model: 'upstream-model', messages: [{ role: 'user', content: 'hi' }] });
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
  it('streams the loop: list_tools, each mcp_call, then the text deltas, and the SDK reads the events', async () => {
    upstream.script = agentModel([[{ id: 'call_1', name: 'docs-search', args: { q: 'refunds' } }]]);
    const stream = await client.responses.create({
      model: 'gpt-test',
      input: 'Refunds?',
      stream: true,
      tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }],
    });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const types = events.map((e) => e.type);
    expect(types).to.deep.equal([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.mcp_list_tools.in_progress',
      'response.mcp_list_tools.completed',
      'response.output_item.done',
      'response.output_item.added',
      'response.mcp_call_arguments.delta',
      'response.mcp_call_arguments.done',
      'response.mcp_call.in_progress',
      'response.mcp_call.completed',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.sequence_number)).to.deep.equal(events.map((_, i) => i));
    const deltas = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta);
    expect(deltas.join('')).to.equal('Answer from: docs about refunds');
    const callDone = events[11];
    expect(callDone.item).to.deep.include({ type: 'mcp_call', name: 'docs-search', output: 'docs about refunds', status: 'completed' });
    const completed = events[events.length - 1].response;
    expect(completed.status).to.equal('completed');
    expect(completed.output.map((i: any) => i.type)).to.deep.equal(['mcp_list_tools', 'mcp_call', 'message']);
    expect(completed.usage).to.deep.include({ input_tokens: 200, output_tokens: 40, total_tokens: 240 });
    // every round was streamed from the upstream
    expect(upstream.requests.map((r) => r.body.stream)).to.deep.equal([true, true]);
  });

  it('works with the SDK stream helper, which rebuilds the response from the events', async () => {
    upstream.script = agentModel([[{ id: 'call_1', name: 'docs-search', args: { q: 'helper' } }]]);
    const stream = client.responses.stream({
      model: 'gpt-test',
      input: 'helper?',
      tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }],
    });
    let deltas = '';
    stream.on('response.output_text.delta', (e) => (deltas += e.delta));
    const final = await stream.finalResponse();
    expect(deltas).to.equal('Answer from: docs about helper');
    expect(final.output_text).to.equal('Answer from: docs about helper');
    expect(final.output.map((i) => i.type)).to.deep.equal(['mcp_list_tools', 'mcp_call', 'message']);
  });

  it('sends the summed cost of a streamed loop as a trailer', async () => {
    upstream.script = agentModel([[{ id: 'call_1', name: 'docs-search', args: { q: 'x' } }]]);
    const { events, trailers, status } = await rawSse(gw.url, CLIENT_KEY, {
      model: 'gpt-test', input: 'x', stream: true, tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }],
    });
    expect(status).to.equal(200);
    expect(events[events.length - 1].type).to.equal('response.completed');
    expect(trailers['x-gateway-response-cost']).to.equal('0.01028');
  });

  it('runs several tool calls of one round concurrently and feeds every result back in order', async () => {
    crmSeen = new Promise<void>((resolve) => (crmCalled = resolve));
    upstream.script = agentModel([[{ id: 'call_a', name: 'docs-slow', args: {} }, { id: 'call_b', name: 'crm-lookup', args: { name: 'Ada' } }]]);
    const data = await client.responses.create({ model: 'gpt-test', input: 'go', tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }] });
    const calls = data.output.filter((i) => i.type === 'mcp_call') as any[];
    expect(calls.map((c) => [c.name, c.output])).to.deep.equal([['docs-slow', 'ran beside lookup'], ['crm-lookup', 'customer Ada']]);
    expect(toolResults(upstream.last)).to.deep.equal([
      { role: 'tool', tool_call_id: 'call_a', content: 'ran beside lookup' },
      { role: 'tool', tool_call_id: 'call_b', content: 'customer Ada' },
    ]);
  });

  it('reports a tool-level error as the call error and lets the model go on', async () => {
    upstream.script = agentModel([[{ id: 'call_1', name: 'docs-fail', args: {} }]]);
    const data = await client.responses.create({ model: 'gpt-test', input: 'go', tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }] });
    const call = data.output[1] as any;
    expect(call).to.deep.include({ type: 'mcp_call', name: 'docs-fail', output: null, error: 'boom', status: 'failed' });
    expect(data.output_text).to.equal('Answer from: Error: boom');
  });

  it('x-mcp-servers narrows the tools to the named servers (plain names with one server)', async () => {
    upstream.script = agentModel([[{ id: 'call_1', name: 'lookup', args: { name: 'Bob' } }]]);
    const data = await client.responses.create(
      { model: 'gpt-test', input: 'who?', tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }] },
      { headers: { 'x-mcp-servers': 'crm' } },
    );
    expect(upstream.requests[0].body.tools.map((t: any) => t.function.name)).to.deep.equal(['lookup']);
    expect((data.output[0] as any).tools.map((t: any) => t.name)).to.deep.equal(['lookup']);
    expect(data.output_text).to.equal('Answer from: customer Bob');
  });

  it('fails loudly with a 400 naming the servers when x-mcp-servers names nothing the key can reach', async () => {
    const other = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: OTHER_KEY, maxRetries: 0 });
    const err = await other.responses
      .create({ model: 'gpt-test', input: 'x', tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }] }, { headers: { 'x-mcp-servers': 'crm, nowhere' } })
      .then(() => undefined, (e) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err.code).to.equal('mcp_server_not_found');
    expect(err.message).to.include('"crm"').and.include('"nowhere"');
    expect(upstream.requests).to.have.length(0);
  });

  it('narrows to an mcp entry\'s allowed_tools', async () => {
    upstream.script = agentModel([]);
    const data = await client.responses.create({ model: 'gpt-test', input: 'x', tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never', allowed_tools: ['docs-search'] }] });
    expect(upstream.requests[0].body.tools.map((t: any) => t.function.name)).to.deep.equal(['docs-search']);
    expect((data.output[0] as any).tools.map((t: any) => t.name)).to.deep.equal(['docs-search']);
  });

  it('runs no MCP tool an allowed_tools choice left out, even when the model names it (from an earlier turn)', async () => {
    upstream.script = agentModel([[{ id: 'call_1', name: 'crm-lookup', args: { name: 'Ada' } }]]);
    const lookups = crm.requestsFor('tools/call').length;
    const data = await client.responses.create({
      model: 'gpt-test',
      input: 'who?',
      tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }],
      tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'mcp', server_label: 'gw', name: 'docs-search' }] },
    });
    expect(upstream.requests[0].body.tools.map((t: any) => t.function.name)).to.deep.equal(['docs-search']);
    expect(crm.requestsFor('tools/call')).to.have.length(lookups);
    expect(data.output.filter((i) => i.type === 'mcp_call')).to.deep.equal([]);
    expect(data.output_text).to.equal('Answer from: Error: unknown tool "crm-lookup".');
  });

  it("narrows to read-only tools with allowed_tools {read_only: true} (MCP's readOnlyHint)", async () => {
    upstream.script = agentModel([]);
    const data = await client.responses.create({ model: 'gpt-test', input: 'x', tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never', allowed_tools: { read_only: true } }] });
    expect(upstream.requests[0].body.tools.map((t: any) => t.function.name)).to.deep.equal(['docs-search']);
    expect((data.output[0] as any).tools.map((t: any) => t.name)).to.deep.equal(['docs-search']);
  });

  it('stops at responses.maxToolRounds with a model that never stops: status incomplete', async () => {
    upstream.script = (req) => {
      const n = (req.body.messages as any[]).filter((m) => m.role === 'tool').length;
      return { kind: 'json', body: toolCallCompletion([{ id: `call_${n}`, name: 'docs-search', args: { q: `round ${n}` } }]) };
    };
    const data = await client.responses.create({ model: 'gpt-test', input: 'loop', tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }] });
    expect(data.status).to.equal('incomplete');
    expect(data.incomplete_details).to.deep.equal({ reason: 'max_tool_rounds' });
    // three rounds ran tools; the fourth model answer asked again and was not run
    expect(upstream.requests).to.have.length(4);
    expect(data.output.filter((i) => i.type === 'mcp_call')).to.have.length(3);
  });

  it('returns mcp_approval_request items and runs nothing until the client approves (previous_response_id)', async () => {
    const callsBefore = docs.requestsFor('tools/call').length;
    upstream.script = agentModel([[{ id: 'call_1', name: 'docs-search', args: { q: 'secret plans' } }]]);
    const tools = [{ type: 'mcp' as const, server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'always' as const }];
    const first = await client.responses.create({ model: 'gpt-test', input: 'find plans', tools });
    expect(first.status).to.equal('completed');
    expect(first.output.map((i) => i.type)).to.deep.equal(['mcp_list_tools', 'mcp_approval_request']);
    const request = first.output[1] as any;
    expect(request).to.deep.include({ name: 'docs-search', arguments: '{"q":"secret plans"}', server_label: 'gw' });
    expect(docs.requestsFor('tools/call').length).to.equal(callsBefore);

    const second = await client.responses.create({
      model: 'gpt-test',
      previous_response_id: first.id,
      tools,
      input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
    });
    expect(second.output.map((i) => i.type)).to.deep.equal(['mcp_list_tools', 'mcp_call', 'message']);
    expect(second.output[1]).to.deep.include({ name: 'docs-search', output: 'docs about secret plans', approval_request_id: request.id });
    expect(second.output_text).to.equal('Answer from: docs about secret plans');
    expect(docs.requestsFor('tools/call').length).to.equal(callsBefore + 1);
    // the model saw the whole conversation: the user turn, its own tool call and the result
    expect(upstream.last.body.messages.map((m: any) => m.role)).to.deep.equal(['user', 'assistant', 'tool']);
  });

  it('continues from approval items sent back in the input (no stored state), and tells the model about a denial', async () => {
    upstream.script = agentModel([[{ id: 'call_1', name: 'docs-search', args: { q: 'a' } }, { id: 'call_2', name: 'crm-lookup', args: { name: 'b' } }]]);
    const tools = [{ type: 'mcp' as const, server_label: 'gw', server_url: 'gateway_proxy', require_approval: { never: { tool_names: ['crm-lookup'] } } }];
    const first = await client.responses.create({ model: 'gpt-test', input: 'both', tools, store: false });
    expect(first.output.map((i) => i.type)).to.deep.equal(['mcp_list_tools', 'mcp_approval_request', 'mcp_call']);
    const request = first.output[1] as any;
    const second = await client.responses.create({
      model: 'gpt-test',
      tools,
      input: [{ role: 'user', content: 'both' }, ...(first.output as any[]), { type: 'mcp_approval_response', approval_request_id: request.id, approve: false, reason: 'not now' }],
    });
    expect(second.output.map((i) => i.type)).to.deep.equal(['mcp_list_tools', 'message']);
    expect(second.output_text).to.equal('Answer from: The user did not approve this tool call. Reason: not now | customer b');
  });

  it('runs read-only tools without approval under require_approval {never: {read_only: true}}, and asks for the others', async () => {
    upstream.script = agentModel([[{ id: 'call_1', name: 'docs-search', args: { q: 'ro' } }, { id: 'call_2', name: 'crm-lookup', args: { name: 'rw' } }]]);
    const tools = [{ type: 'mcp' as const, server_label: 'gw', server_url: 'gateway_proxy', require_approval: { never: { read_only: true } } }];
    const data = await client.responses.create({ model: 'gpt-test', input: 'both', tools, store: false });
    expect(data.output.map((i) => i.type)).to.deep.equal(['mcp_list_tools', 'mcp_approval_request', 'mcp_call']);
    expect(data.output[1]).to.deep.include({ name: 'crm-lookup' });
    expect(data.output[2]).to.deep.include({ name: 'docs-search', output: 'docs about ro' });
  });

  it('runs an approved call once when the client sends the approval request back beside previous_response_id', async () => {
    upstream.script = agentModel([[{ id: 'call_1', name: 'docs-search', args: { q: 'twice?' } }]]);
    const tools = [{ type: 'mcp' as const, server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'always' as const }];
    const first = await client.responses.create({ model: 'gpt-test', input: 'find it', tools });
    const request = first.output[1] as any;
    const callsBefore = docs.requestsFor('tools/call').length;
    const second = await client.responses.create({
      model: 'gpt-test',
      previous_response_id: first.id,
      tools,
      input: [request, { type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
    });
    expect(docs.requestsFor('tools/call').length).to.equal(callsBefore + 1);
    expect(second.output.map((i) => i.type)).to.deep.equal(['mcp_list_tools', 'mcp_call', 'message']);
    // every copy of the call the model sees has the one result
    const sent = upstream.last.body.messages as any[];
    expect(sent.filter((m) => m.role === 'tool').map((m) => m.content)).to.deep.equal(['docs about twice?', 'docs about twice?']);
  });

  it('does not run an approved call again when the client sends the whole history back on the next turn', async () => {
    upstream.script = agentModel([[{ id: 'call_1', name: 'docs-search', args: { q: 'once' } }]]);
    const tools = [{ type: 'mcp' as const, server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'always' as const }];
    const history: any[] = [{ role: 'user', content: 'find it' }];
    const first = await client.responses.create({ model: 'gpt-test', input: history, tools, store: false });
    const request = first.output[1] as any;
    history.push(...first.output, { type: 'mcp_approval_response', approval_request_id: request.id, approve: true });
    const callsBefore = docs.requestsFor('tools/call').length;
    const second = await client.responses.create({ model: 'gpt-test', input: history, tools, store: false });
    expect(second.output.map((i) => i.type)).to.deep.equal(['mcp_list_tools', 'mcp_call', 'message']);
    expect(docs.requestsFor('tools/call').length).to.equal(callsBefore + 1);

    // what the Agents SDK does without previous_response_id: everything so far, plus the new turn
    history.push(...second.output, { role: 'user', content: 'thanks' });
    const third = await client.responses.create({ model: 'gpt-test', input: history, tools, store: false });
    expect(third.output.map((i) => i.type)).to.deep.equal(['mcp_list_tools', 'message']);
    expect(docs.requestsFor('tools/call').length).to.equal(callsBefore + 1);
    // the model sees the call once, with its result
    const sent = upstream.last.body.messages as any[];
    expect(sent.filter((m) => m.role === 'tool').map((m) => m.content)).to.deep.equal(['docs about once']);
    expect(sent.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant', 'user']);
  });

  it('returns function tools to the client as function_call items and continues with their output', async () => {
    upstream.script = (req) => {
      const result = toolResults(req)[0];
      return result ? { kind: 'json', body: chatCompletion(`It is ${result.content}`, USAGE) } : { kind: 'json', body: toolCallCompletion([{ id: 'call_w', name: 'get_weather', args: { city: 'Paris' } }]) };
    };
    const tools = [{ type: 'function' as const, name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    const first = await client.responses.create({ model: 'gpt-test', input: 'Weather in Paris?', tools });
    expect(first.output).to.have.length(1);
    expect(first.output[0]).to.deep.include({ type: 'function_call', call_id: 'call_w', name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(upstream.last.body.tools).to.deep.equal([{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false } }]);
    const second = await client.responses.create({ model: 'gpt-test', previous_response_id: first.id, tools, input: [{ type: 'function_call_output', call_id: 'call_w', output: 'sunny' }] });
    expect(second.output_text).to.equal('It is sunny');
  });

  it('caps the whole response at max_output_tokens: a later round may only use what the earlier ones left', async () => {
    upstream.script = agentModel([[{ id: 'call_1', name: 'docs-search', args: { q: 'a' } }], [{ id: 'call_2', name: 'docs-search', args: { q: 'b' } }]]);
    const tools = [{ type: 'mcp' as const, server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' as const }];
    // every round of this model writes 20 tokens
    const data = await client.responses.create({ model: 'gpt-test', input: 'twice', tools, max_output_tokens: 30 });
    expect(upstream.requests.map((r) => r.body.max_tokens)).to.deep.equal([30, 10]);
    expect(data.status).to.equal('incomplete');
    expect(data.incomplete_details).to.deep.equal({ reason: 'max_output_tokens' });
    expect(data.usage!.output_tokens).to.equal(40);
  });

  it('maps text.format json_schema to response_format', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('{"a":1}') };
    await client.responses.create({ model: 'gpt-test', input: 'json please', text: { format: { type: 'json_schema', name: 'thing', schema: { type: 'object' }, strict: true } } });
    expect(upstream.last.body.response_format).to.deep.equal({ type: 'json_schema', json_schema: { name: 'thing', schema: { type: 'object' }, strict: true } });
  });

  it("returns the output text's logprobs asked for with include message.output_text.logprobs alone (no top_logprobs), as OpenAI does", async () => {
    const tokens = [{ token: 'Hi', logprob: -0.1, bytes: [72, 105], top_logprobs: [] }];
    upstream.script = { kind: 'json', body: chatCompletion('Hi', USAGE, { choices: [{ index: 0, message: { role: 'assistant', content: 'Hi', refusal: null }, logprobs: { content: tokens, refusal: null }, finish_reason: 'stop' }] }) };
    const data = await client.responses.create({ model: 'gpt-test', input: 'Greet me.', include: ['message.output_text.logprobs'] });
    expect(upstream.last.body.logprobs).to.equal(true);
    expect((data.output[0] as any).content[0].logprobs).to.deep.equal(tokens);
  });

  it('logs one entry for the response (rounds summed) and one per tool call, and the cost adds up', async () => {
    upstream.script = agentModel([[{ id: 'call_1', name: 'docs-search', args: { q: 'log' } }], [{ id: 'call_2', name: 'crm-lookup', args: { name: 'x' } }]]);
    const { data, response } = await client.responses
      .create({ model: 'gpt-test', input: 'log me', tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }] })
      .withResponse();
    const requestId = response.headers.get('x-gateway-request-id');
    const page = await gw.gateway.services.requestLog.query({ limit: 50 });
    const mine = page.data.filter((e) => e.id === requestId || e.details?.responseId === data.id);
    const byModel = mine.map((e) => e.model).sort();
    expect(byModel).to.deep.equal(['MCP: crm-lookup', 'MCP: docs-search', 'gpt-test']);
    const main = mine.find((e) => e.model === 'gpt-test')!;
    expect(main).to.deep.include({ endpoint: 'responses', promptTokens: 300, completionTokens: 60, status: 200 });
    expect(main.details).to.deep.include({ rounds: 3, toolCalls: 2, responseId: data.id });
    const total = mine.reduce((n, e) => n + e.cost, 0);
    // 3 rounds x (100 x $1 + 20 x $2)/M = 0.00042, plus the docs fee 0.01 (crm has no fee)
    expect(Number(response.headers.get('x-gateway-response-cost'))).to.be.closeTo(total, 1e-12);
    expect(response.headers.get('x-gateway-response-cost')).to.equal('0.01042');
  });

  it('never passes the client key to the model upstream, the MCP servers or the log', async () => {
    upstream.script = agentModel([[{ id: 'call_1', name: 'docs-search', args: { q: 'keys' } }]]);
    await client.responses.create(
      { model: 'gpt-test', input: 'x', tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }] },
      { headers: { 'x-mcp-docs-authorization': 'Bearer user-token-CANARY' } },
    );
    for (const r of upstream.requests) expect(JSON.stringify(r.headers) + r.rawBody).to.not.include(CLIENT_KEY);
    for (const r of docs.requests) expect(JSON.stringify(r.headers)).to.not.include(CLIENT_KEY);
    const page = await gw.gateway.services.requestLog.query({ limit: 100 });
    expect(JSON.stringify(page)).to.not.include(CLIENT_KEY).and.not.include('user-token-CANARY');
    expect(gw.logLines.join('\n')).to.not.include(CLIENT_KEY).and.not.include('user-token-CANARY');
  });

  it("repeats an mcp tool's authorization and header values nowhere: not in the response, streamed or not", async () => {
    upstream.script = agentModel([[{ id: 'call_1', name: 'docs-search', args: { q: 'tokens' } }]]);
    const tool = { type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never', authorization: 'oauth-CANARY-token', headers: { 'X-Api-Key': 'hdr-CANARY-secret' } } as const;
    const data = await client.responses.create({ model: 'gpt-test', input: 'x', tools: [tool] } as never);
    expect(data.output_text).to.equal('Answer from: docs about tokens');
    expect(data.tools).to.deep.equal([{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never', headers: { 'X-Api-Key': '***' } }]);
    upstream.script = agentModel([[{ id: 'call_1', name: 'docs-search', args: { q: 'tokens' } }]]);
    const streamed = await rawSse(gw.url, CLIENT_KEY, { model: 'gpt-test', input: 'x', stream: true, tools: [tool] });
    const completed = streamed.events.find((e) => e.type === 'response.completed');
    expect(completed.response.tools[0].headers).to.deep.equal({ 'X-Api-Key': '***' });
    expect(JSON.stringify(streamed.events)).to.not.include('CANARY');
    for (const r of [...upstream.requests, ...docs.requests]) expect(JSON.stringify(r)).to.not.include('CANARY');
  });

  it('answers a bad request in the OpenAI error shape', async () => {
    const err = await client.responses.create({ model: 'gpt-test', input: 'x', tools: [{ type: 'mcp', server_label: 'gw', server_url: 'https://example.com/mcp', require_approval: 'never' }] }).then(
      () => undefined,
      (e) => e,
    );
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err.param).to.equal('tools[0].server_url');
    const missing = await client.responses.create({ model: 'nope', input: 'x' }).then(() => undefined, (e) => e);
    expect(missing.status).to.equal(404);
  });

  it('names the Responses fields, not chat ones, in an upstream refusal (a prompt over the context window is about input)', async () => {
    const message = "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.";
    upstream.script = { kind: 'json', status: 400, body: { error: { message, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } } };
    const long = await client.responses.create({ model: 'gpt-test', input: 'a long story' }).then(() => undefined, (e) => e);
    expect(long).to.be.instanceOf(OpenAI.BadRequestError);
    expect(long.error).to.deep.include({ message, type: 'invalid_request_error', param: 'input', code: 'context_length_exceeded' });
    upstream.script = { kind: 'json', status: 400, body: { error: { message: "Invalid schema for response_format 'answer'.", type: 'invalid_request_error', param: 'response_format', code: 'invalid_value' } } };
    const format = { type: 'json_schema' as const, name: 'answer', schema: { type: 'object' } };
    const schema = await client.responses.create({ model: 'gpt-test', input: 'x', text: { format } }).then(() => undefined, (e) => e);
    expect(schema.error).to.deep.include({ param: 'text.format', code: 'invalid_value' });
  });

  it('says which approval request it does not know when the input is only that approval', async () => {
    const input = [{ type: 'mcp_approval_response' as const, approval_request_id: 'mcpr_long_gone', approve: true }];
    const err = await client.responses.create({ model: 'gpt-test', input }).then(() => undefined, (e) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err.error).to.deep.include({ code: 'approval_request_not_found', param: 'input', message: "No pending approval request with id 'mcpr_long_gone'." });
    expect(upstream.requests.length).to.equal(0);
  });

  it('answers an unknown previous_response_id as OpenAI does: 400 previous_response_not_found', async () => {
    const err = await client.responses.create({ model: 'gpt-test', input: 'x', previous_response_id: 'resp_nobody_has_this' }).then(() => undefined, (e) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err.error).to.deep.include({ type: 'invalid_request_error', code: 'previous_response_not_found', param: 'previous_response_id' });
    expect(err.error.message).to.equal("Previous response with id 'resp_nobody_has_this' not found.");
  });
});
