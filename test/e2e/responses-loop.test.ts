/**
 * Acceptance QA of the Responses endpoint (issue 6): behaviour found missing or wrong while driving the
 * gateway with the official SDKs, each pinned by a test here.
 */
import { expect } from 'chai';
import OpenAI from 'openai';
import { FakeOpenAI, chatChunks, chatCompletion, type RecordedRequest, type Script } from '../support/fake-openai';
import { FakeMcpServer } from '../support/fake-mcp-server';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { rawSse } from './responses-support';

const KEY = 'sk-qa-responses-CANARY-71';
const MCP_TOOL = [{ type: 'mcp' as const, server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' as const }];

/** A model that asks for `lookup` in every round and never answers. */
const neverStops = (req: RecordedRequest): Script => {
  const n = (req.body.messages as any[]).filter((m) => m.role === 'tool').length;
  const message = { role: 'assistant', content: null, tool_calls: [{ id: `call_${n}`, type: 'function', function: { name: 'lookup', arguments: '{"q":"again"}' } }] };
  return { kind: 'json', body: chatCompletion('', undefined, { choices: [{ index: 0, message, finish_reason: 'tool_calls' }] }) };
};

describe('Responses tool loop: rounds, listeners and per-round tool settings', () => {
  let upstream: FakeOpenAI;
  let tools: FakeMcpServer;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    tools = await FakeMcpServer.start({ toolsOnly: true, tools: { lookup: { handler: () => ({ content: [{ type: 'text', text: 'found' }] }) } } });
    gw = await testConfig()
      .withKey(KEY, { id: 'qa', mcp: { servers: ['kb'] } })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model' })
      .withMcpServer('kb', tools.url, { org: 'acme' })
      .with({ mcp: { healthCheckIntervalSeconds: 0 }, responses: { maxToolRounds: 14 } })
      .start();
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
    await tools.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
  });

  it('runs many rounds without piling abort listeners on the request (no MaxListenersExceededWarning)', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      upstream.script = neverStops;
      const data = await client.responses.create({ model: 'gpt-test', input: 'loop', tools: MCP_TOOL });
      expect(data.status).to.equal('incomplete');
      expect(data.output.filter((i) => i.type === 'mcp_call')).to.have.length(14);
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.map((w) => w.name)).to.not.include('MaxListenersExceededWarning');
  });

  it('starts no model round after the client went away during a tool call: the entry counts the one that ran', async () => {
    upstream.script = neverStops;
    const lookup = tools.tools.get('lookup')!;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    tools.tools.set('lookup', { ...lookup, handler: async () => (await released, { content: [{ type: 'text', text: 'late' }] }) });
    const callsBefore = tools.requestsFor('tools/call').length;
    try {
      const abort = new AbortController();
      const answer = client.responses.create({ model: 'gpt-test', input: 'look it up', tools: MCP_TOOL }, { signal: abort.signal }).catch((e) => e);
      for (const until = Date.now() + 5_000; tools.requestsFor('tools/call').length === callsBefore; ) {
        if (Date.now() > until) expect.fail('the tool was never called');
        await new Promise((r) => setTimeout(r, 10));
      }
      abort.abort();
      expect(await answer).to.be.instanceOf(Error);
      // the tool never answers: the call ends when the gateway sees the client gone
      await gw.gateway.services.pipeline.whenSettled(5_000);
      const entry = (await gw.gateway.services.requestLog.query({ limit: 10 })).data.find((e) => e.endpoint === 'responses' && e.model === 'gpt-test')!;
      expect(entry).to.deep.include({ status: 499, outcome: 'client_abort' });
      // a second round ran its stages (and took a request of the key's rate limit) for a client that had left
      expect(entry.details).to.deep.include({ rounds: 1, toolCalls: 1 });
    } finally {
      release();
      tools.tools.set('lookup', lookup);
    }
  });

  it('sends no tool_choice or parallel_tool_calls upstream when the round offers no tools (OpenAI rejects them)', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('plain') };
    const data = await client.responses.create({ model: 'gpt-test', input: 'hi', tool_choice: 'auto', parallel_tool_calls: true });
    expect(data.output_text).to.equal('plain');
    expect(upstream.last.body).to.deep.equal({ model: 'upstream-model', messages: [{ role: 'user', content: 'hi' }] });
  });

  it('keeps tool_choice and parallel_tool_calls when the round offers tools', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('no tools needed') };
    await client.responses.create({ model: 'gpt-test', input: 'hi', tool_choice: 'auto', parallel_tool_calls: false, tools: MCP_TOOL });
    expect(upstream.last.body).to.deep.include({ tool_choice: 'auto', parallel_tool_calls: false });
    expect(upstream.last.body.tools.map((t: any) => t.function.name)).to.include('lookup');
  });

  it('forces a tool_choice on the first round only, so the model can answer after the tool results', async () => {
    // a model that obeys tool_choice as OpenAI's does: a forced choice always yields a tool call
    upstream.script = (req) => {
      const choice = req.body.tool_choice;
      const forced = choice === 'required' || (typeof choice === 'object' && choice !== null);
      return forced || !(req.body.messages as any[]).some((m) => m.role === 'tool') ? neverStops(req) : { kind: 'json', body: chatCompletion('the answer') };
    };
    for (const tool_choice of ['required', { type: 'function', name: 'lookup' }] as const) {
      upstream.requests.length = 0;
      const data = await client.responses.create({ model: 'gpt-test', input: 'look it up', tools: MCP_TOOL, tool_choice });
      expect(data.status).to.equal('completed');
      expect(data.output_text).to.equal('the answer');
      expect(data.output.filter((i) => i.type === 'mcp_call')).to.have.length(1);
      expect(upstream.requests.map((r) => r.body.tool_choice)).to.deep.equal([upstream.requests[0].body.tool_choice, 'auto']);
      expect(upstream.requests[0].body.tool_choice).to.not.equal('auto');
    }
  });

  it('does not force the tool_choice again on the round after an approved call, so the approval does not come round again', async () => {
    upstream.script = (req) => {
      const choice = req.body.tool_choice;
      const forced = choice === 'required' || (typeof choice === 'object' && choice !== null);
      return forced || !(req.body.messages as any[]).some((m) => m.role === 'tool') ? neverStops(req) : { kind: 'json', body: chatCompletion('the answer') };
    };
    const tools = [{ ...MCP_TOOL[0], require_approval: 'always' as const }];
    const first = await client.responses.create({ model: 'gpt-test', input: 'look it up', tools, tool_choice: 'required' });
    const request = first.output.find((i) => i.type === 'mcp_approval_request') as any;
    expect(request).to.deep.include({ name: 'lookup' });
    // the client sends its settings again with the approval, as the SDKs do
    const second = await client.responses.create({ model: 'gpt-test', previous_response_id: first.id, tools, tool_choice: 'required', input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }] });
    expect(second.output.map((i) => i.type)).to.deep.equal(['mcp_list_tools', 'mcp_call', 'message']);
    expect(second.output_text).to.equal('the answer');
    expect(upstream.last.body.tool_choice).to.equal('auto');
  });

  it('tells the model its tool arguments must be a JSON object, without sending the MCP server a call it refuses', async () => {
    for (const args of ['null', '[1]', '5']) {
      upstream.script = (req) => {
        if ((req.body.messages as any[]).some((m) => m.role === 'tool')) return { kind: 'json', body: chatCompletion('ok') };
        const message = { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: args } }] };
        return { kind: 'json', body: chatCompletion('', undefined, { choices: [{ index: 0, message, finish_reason: 'tool_calls' }] }) };
      };
      const callsBefore = tools.requests.filter((r) => r.rpcMethods.includes('tools/call')).length;
      const data = await client.responses.create({ model: 'gpt-test', input: 'x', tools: MCP_TOOL });
      expect(data.output[1]).to.deep.include({ type: 'mcp_call', name: 'lookup', arguments: args, status: 'failed', error: 'The tool arguments are not a JSON object.' });
      expect(tools.requests.filter((r) => r.rpcMethods.includes('tools/call')).length, args).to.equal(callsBefore);
      const toolMessage = (upstream.last.body.messages as any[]).find((m) => m.role === 'tool');
      expect(toolMessage.content).to.equal('Error: The tool arguments are not a JSON object.');
    }
  });

  it('forces the MCP tool an mcp tool_choice names, and refuses one naming a tool not offered', async () => {
    upstream.script = (req) => ((req.body.messages as any[]).some((m) => m.role === 'tool') ? { kind: 'json', body: chatCompletion('the answer') } : neverStops(req));
    const data = await client.responses.create({ model: 'gpt-test', input: 'look it up', tools: MCP_TOOL, tool_choice: { type: 'mcp', server_label: 'gw', name: 'lookup' } });
    expect(data.output_text).to.equal('the answer');
    expect(upstream.requests[0].body.tool_choice).to.deep.equal({ type: 'function', function: { name: 'lookup' } });
    expect(upstream.requests[1].body.tool_choice).to.equal('auto');

    upstream.requests.length = 0;
    const err = await client.responses
      .create({ model: 'gpt-test', input: 'x', tools: MCP_TOOL, tool_choice: { type: 'mcp', server_label: 'gw', name: 'nowhere' } })
      .then(() => undefined, (e: any) => e);
    expect(err?.status).to.equal(400);
    expect(err.error).to.deep.include({ code: 'invalid_value', param: 'tool_choice.name' });
    expect(upstream.requests).to.have.length(0);
  });
});

describe('Responses tool loop: an MCP server that cannot be reached', () => {
  let upstream: FakeOpenAI;
  let tools: FakeMcpServer;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    tools = await FakeMcpServer.start({ toolsOnly: true, tools: { lookup: { handler: () => ({ content: [{ type: 'text', text: 'found' }] }) } } });
    gw = await testConfig()
      .withKey(KEY, { id: 'qa', mcp: { servers: ['kb', 'dead'] } })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model' })
      .withMcpServer('kb', tools.url, { org: 'acme' })
      // nothing listens on port 1: its discovery at boot fails
      .withMcpServer('dead', 'http://127.0.0.1:1/mcp', { org: 'acme' })
      .with({ mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
    await tools.close();
  });

  it('says in the mcp_list_tools item which server could not be listed, rather than listing it as having no tools', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('no tools') };
    const error = 'MCP server "dead" could not be reached; its tools are not listed.';
    const named = await client.responses.create({ model: 'gpt-test', input: 'x', tools: MCP_TOOL }, { headers: { 'x-mcp-servers': 'dead' } });
    expect(named.output[0]).to.deep.include({ type: 'mcp_list_tools', tools: [], error });
    const all = await client.responses.create({ model: 'gpt-test', input: 'x', tools: MCP_TOOL });
    expect(all.output[0]).to.deep.include({ type: 'mcp_list_tools', error });
    expect((all.output[0] as any).tools.map((t: any) => t.name)).to.include('kb-lookup');

    const { events } = await rawSse(gw.url, KEY, { model: 'gpt-test', input: 'x', stream: true, tools: MCP_TOOL }, { 'x-mcp-servers': 'dead' });
    expect(events.map((e) => e.type)).to.include('response.mcp_list_tools.failed');
  });
});

describe('Responses tool loop: MCP tool names that read alike as chat function names', () => {
  let upstream: FakeOpenAI;
  let tools: FakeMcpServer;
  let gw: TestGateway;
  let client: OpenAI;
  const LONG = `search_customer_support_articles_by_product_and_region_and_language`;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    const answer = (text: string) => ({ handler: () => ({ content: [{ type: 'text' as const, text }] }) });
    tools = await FakeMcpServer.start({ toolsOnly: true, tools: { 'files.read': answer('dotted'), files_read: answer('underscored'), [`${LONG}_v1`]: answer('v1'), [`${LONG}_v2`]: answer('v2') } });
    gw = await testConfig()
      .withKey(KEY, { id: 'qa', mcp: { servers: ['kb'] } })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model' })
      .withMcpServer('kb', tools.url, { org: 'acme' })
      .with({ mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
    await tools.close();
  });

  it('offers the model every listed tool under a name of its own, and each name calls its own tool', async () => {
    let offered: string[] = [];
    upstream.script = (req) => {
      if ((req.body.messages as any[]).some((m) => m.role === 'tool')) return { kind: 'json', body: chatCompletion('done') };
      offered = (req.body.tools as any[]).map((t) => t.function.name);
      const tool_calls = offered.map((name, i) => ({ id: `call_${i}`, type: 'function', function: { name, arguments: '{}' } }));
      return { kind: 'json', body: chatCompletion('', undefined, { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls }, finish_reason: 'tool_calls' }] }) };
    };
    const data = await client.responses.create({ model: 'gpt-test', input: 'x', tools: MCP_TOOL });
    const listed = (data.output[0] as any).tools.map((t: any) => t.name);
    expect(listed).to.have.length(4);
    expect(offered).to.have.length(4);
    expect(new Set(offered).size).to.equal(4);
    for (const name of offered) expect(name).to.match(/^[A-Za-z0-9_-]{1,64}$/);
    const calls = data.output.filter((i) => i.type === 'mcp_call') as any[];
    expect(calls.map((c) => [c.name, c.output]).sort()).to.deep.equal([['files.read', 'dotted'], ['files_read', 'underscored'], [`${LONG}_v1`, 'v1'], [`${LONG}_v2`, 'v2']].sort());
  });
});

describe('Responses stream events rebuild the same items (SDK accumulator semantics)', () => {
  let upstream: FakeOpenAI;
  let tools: FakeMcpServer;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    tools = await FakeMcpServer.start({ toolsOnly: true, tools: { lookup: { handler: () => ({ content: [{ type: 'text', text: 'found' }] }) } } });
    gw = await testConfig()
      .withKey(KEY, { id: 'qa', mcp: { servers: ['kb'] } })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model' })
      .withMcpServer('kb', tools.url, { org: 'acme' })
      .with({ mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
    await tools.close();
  });

  it('announces an mcp_call with empty arguments, so added + argument deltas equal the final arguments', async () => {
    upstream.script = (req) => {
      if ((req.body.messages as any[]).some((m) => m.role === 'tool')) return { kind: 'json', body: chatCompletion('done') };
      return neverStops(req);
    };
    const stream = await client.responses.create({ model: 'gpt-test', input: 'go', stream: true, tools: MCP_TOOL });
    const events: any[] = [];
    for await (const e of stream) events.push(e);
    const added = events.find((e) => e.type === 'response.output_item.added' && e.item.type === 'mcp_call');
    const deltas = events.filter((e) => e.type === 'response.mcp_call_arguments.delta' && e.item_id === added.item.id).map((e) => e.delta);
    const done = events.find((e) => e.type === 'response.output_item.done' && e.item.id === added.item.id);
    expect(added.item.arguments + deltas.join('')).to.equal(done.item.arguments);
    expect(done.item.arguments).to.equal('{"q":"again"}');
  });
});

describe('Responses time limit while a tool or a model round runs', () => {
  let upstream: FakeOpenAI;
  let tools: FakeMcpServer;
  let gw: TestGateway;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    tools = await FakeMcpServer.start({ toolsOnly: true, tools: { lookup: { handler: () => new Promise((resolve) => setTimeout(() => resolve({ content: [{ type: 'text', text: 'late' }] }), 5000)) } } });
    gw = await testConfig()
      .withKey(KEY, { id: 'qa', mcp: { servers: ['kb'] } })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model' })
      .withMcpServer('kb', tools.url, { org: 'acme' })
      .with({ mcp: { healthCheckIntervalSeconds: 0 }, responses: { timeLimitSeconds: 0.5 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
    await tools.close();
  });

  it('ends incomplete and says why the running call stopped (no internal AbortError text)', async () => {
    upstream.script = neverStops;
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const data = await client.responses.create({ model: 'gpt-test', input: 'slow', tools: MCP_TOOL });
    expect(data.status).to.equal('incomplete');
    expect(data.incomplete_details).to.deep.equal({ reason: 'time_limit' });
    expect(data.output[1]).to.deep.include({ type: 'mcp_call', name: 'lookup', status: 'failed', output: null, error: 'The tool call was stopped: the response reached its time limit.' });
  });

  it('keeps a response the time limit cut in a model round, so it can be continued with previous_response_id', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    upstream.script = (req) => ((req.body.messages as any[]).length === 1 ? { kind: 'json', delayMs: 3000, body: chatCompletion('too late') } : { kind: 'json', body: chatCompletion('on time') });
    const first = await client.responses.create({ model: 'gpt-test', input: 'think long' });
    expect(first.status).to.equal('incomplete');
    expect(first.incomplete_details).to.deep.equal({ reason: 'time_limit' });
    const second = await client.responses.create({ model: 'gpt-test', input: 'go on', previous_response_id: first.id });
    expect(second.output_text).to.equal('on time');
    expect(upstream.last.body.messages).to.deep.equal([
      { role: 'user', content: 'think long' },
      { role: 'user', content: 'go on' },
    ]);
  });
});

describe('Responses time limit cutting a streamed model round', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey(KEY, { id: 'qa' })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model', price: { inputPerMTok: 1, outputPerMTok: 2 } })
      .with({ responses: { timeLimitSeconds: 2 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('reports in response.incomplete the usage its log entry charges, the cut round included', async () => {
    // a minute of words, cut by the time limit after a part of them
    upstream.script = { kind: 'sse', events: chatChunks(Array.from({ length: 600 }, () => 'word '), { prompt_tokens: 10, completion_tokens: 600, total_tokens: 610 }), eventDelayMs: 100 };
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const stream = await client.responses.create({ model: 'gpt-test', input: 'tell me a long story', stream: true });
    let final: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === 'response.incomplete') final = event.response;
    expect(final?.incomplete_details).to.deep.equal({ reason: 'time_limit' });
    await gw.gateway.services.pipeline.whenSettled(5_000);
    const entry = (await gw.gateway.services.requestLog.query({ limit: 10 })).data.find((e) => e.details?.responseId === final!.id)!;
    expect(entry.completionTokens).to.be.greaterThan(0);
    expect(entry.cost).to.be.greaterThan(0);
    expect(final!.usage).to.deep.include({ input_tokens: entry.promptTokens, output_tokens: entry.completionTokens, total_tokens: entry.promptTokens + entry.completionTokens });
  });
});

describe('malformed Responses requests get a 400 naming the field', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await testConfig()
      .withKey(KEY, { id: 'qa' })
      .withProvider({ id: 'local', type: 'echo' })
      .withModel('echo')
      .start();
  });
  after(async () => {
    await gw.close();
  });

  const cases: [string, Record<string, unknown>, string][] = [
    ['a tool that is not an object', { tools: [null] }, 'tools[0]'],
    ['instructions that are not a string', { instructions: 5 }, 'instructions'],
    ['allowed_tools that is neither a list nor a filter', { tools: [{ ...MCP_TOOL[0], allowed_tools: 'echo' }] }, 'tools[0].allowed_tools'],
    // read loosely, a read_only that is not a boolean matched every tool: the destructive ones were offered too
    ['an allowed_tools filter whose read_only is not a boolean', { tools: [{ ...MCP_TOOL[0], allowed_tools: { read_only: 'true' } }] }, 'tools[0].allowed_tools'],
    ['an input_file given by file_url (a chat file part has no URL: it was sent on empty)', { input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://example.com/report.pdf' }] }] }, 'input[0].content[0]'],
    // read as a substring, 'lookup_v2' let a tool named 'lookup' run without approval
    ['a require_approval filter whose tool_names is not a list', { tools: [{ ...MCP_TOOL[0], require_approval: { never: { tool_names: 'lookup_v2' } } }] }, 'tools[0].require_approval'],
    ['a conversation id (no Conversations API here: the model answered without its history)', { conversation: 'conv_68a1' }, 'conversation'],
    ['a stored prompt (kept at OpenAI: the model answered without its instructions)', { prompt: { id: 'pmpt_68a1', version: '2' } }, 'prompt'],
    // each was dropped unread: the model answered at its default effort, or without the logprobs asked for
    ['a reasoning effort that is not a string', { reasoning: { effort: 5 } }, 'reasoning.effort'],
    ['a text verbosity that is not a string', { text: { verbosity: ['low'] } }, 'text.verbosity'],
    ['an include that is not a list of strings', { include: 'message.output_text.logprobs' }, 'include'],
    // read as empty, the model was asked (and the key charged) to answer an empty message
    ['an input_text part without its text', { input: [{ role: 'user', content: [{ type: 'input_text' }] }] }, 'input[0].content[0].text'],
    ['an output_text part without its text', { input: [{ role: 'user', content: 'hi' }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: null }] }] }, 'input[1].content[0].text'],
  ];
  for (const [what, fields, param] of cases) {
    it(`refuses ${what}`, async () => {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
      const err = await client.responses.create({ model: 'echo', input: 'x', ...(fields as object) } as any).then(() => undefined, (e) => e);
      expect(err).to.be.instanceOf(OpenAI.BadRequestError);
      expect(err.param).to.equal(param);
    });
  }
});

describe('Responses tool loop: images an MCP tool returns', () => {
  const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').toString('base64');
  let upstream: FakeOpenAI;
  let tools: FakeMcpServer;
  let gw: TestGateway;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    const content = [{ type: 'text' as const, text: 'the chart' }, { type: 'image' as const, data: PNG, mimeType: 'image/png' }];
    tools = await FakeMcpServer.start({ toolsOnly: true, tools: { lookup: { handler: () => ({ content }) }, write: { handler: () => ({ content: [{ type: 'text', text: 'written' }] }) } } });
    gw = await testConfig()
      .withKey(KEY, { id: 'qa', mcp: { servers: ['kb'] } })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model' })
      .withMcpServer('kb', tools.url, { org: 'acme' })
      .with({ mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
    await tools.close();
  });

  it('shows the model the image as an image after the tool answer, not as JSON text', async () => {
    upstream.script = (req) => ((req.body.messages as any[]).some((m) => m.role === 'tool') ? { kind: 'json', body: chatCompletion('a bar chart') } : neverStops(req));
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const data = await client.responses.create({ model: 'gpt-test', input: 'show me', tools: MCP_TOOL });
    expect(data.output_text).to.equal('a bar chart');
    const messages = upstream.last.body.messages as any[];
    const at = messages.findIndex((m) => m.role === 'tool');
    expect(messages[at]).to.deep.equal({ role: 'tool', tool_call_id: 'call_0', content: 'the chart' });
    expect(messages[at + 1]).to.deep.equal({ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] });
  });

  it('shows the model the image of a call the client approved, by previous_response_id or with the items sent back', async () => {
    upstream.script = (req) => ((req.body.messages as any[]).some((m) => m.role === 'tool') ? { kind: 'json', body: chatCompletion('a bar chart') } : neverStops(req));
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const tools = [{ ...MCP_TOOL[0], require_approval: 'always' as const }];
    const image = { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] };
    const first = await client.responses.create({ model: 'gpt-test', input: 'show me', tools });
    const request = first.output.find((i) => i.type === 'mcp_approval_request') as any;
    const approval = { type: 'mcp_approval_response' as const, approval_request_id: request.id, approve: true };
    const continuations = [
      { previous_response_id: first.id, input: [approval] },
      { store: false, input: [{ role: 'user' as const, content: 'show me' }, request, approval] },
    ];
    for (const continuation of continuations) {
      const data = await client.responses.create({ model: 'gpt-test', tools, ...continuation } as any);
      expect((data as any).output_text).to.equal('a bar chart');
      const messages = upstream.last.body.messages as any[];
      const at = messages.findIndex((m) => m.role === 'tool');
      expect(messages[at]).to.deep.include({ role: 'tool', content: 'the chart' });
      expect(messages[at + 1]).to.deep.equal(image);
    }
  });

  it('keeps the answers of one turn together when one of its calls ran with an image and another waited for approval', async () => {
    upstream.script = (req) => {
      const messages = req.body.messages as any[];
      if (messages.some((m) => m.role === 'tool')) return { kind: 'json', body: chatCompletion('done') };
      const calls = ['lookup', 'write'].map((name, i) => ({ id: `call_${name}`, type: 'function', function: { name, arguments: `{"n":${i}}` } }));
      return { kind: 'json', body: chatCompletion('', undefined, { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: calls }, finish_reason: 'tool_calls' }] }) };
    };
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const tools = [{ ...MCP_TOOL[0], require_approval: { never: { tool_names: ['lookup'] } } }];
    const first = await client.responses.create({ model: 'gpt-test', input: 'look and write', tools } as any);
    const request = first.output.find((i) => i.type === 'mcp_approval_request') as any;
    expect(request.name).to.equal('write');
    const data = await client.responses.create({ model: 'gpt-test', tools, previous_response_id: first.id, input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }] } as any);
    expect((data as any).output_text).to.equal('done');
    // chat APIs want every call of an assistant turn answered right after it, before any other message
    const roles = (upstream.last.body.messages as any[]).map((m) => (m.role === 'tool' ? `tool:${m.tool_call_id}` : m.role));
    expect(roles).to.deep.equal(['user', 'assistant', 'tool:call_lookup', 'tool:call_write', 'user']);
    expect((upstream.last.body.messages as any[])[4]).to.deep.equal({ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] });
  });
});
