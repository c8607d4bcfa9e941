/**
 * Every request kind's trace through the stages (design.md §2): which stages ran for each exchange, in
 * which order, which exchange was whose child, and exactly one log entry per request and per tool call.
 * Stage runs are observed through the Pipeline's own debug hook (`observe`), never by mocking.
 */
import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { FakeOpenAI, chatCompletion } from '../../support/fake-openai';
import { FakeMcpServer } from '../../support/fake-mcp-server';
import { startGateway, type TestGateway } from '../../support/start-gateway';
import type { GatewayContext } from '../../../core/pipeline/context';
import { STAGE_ORDER } from '../../../core/pipeline/stage';
import type { LogEntry } from '../../../core/store/log-entry';

/** All seven stages in the card's order, then the stages that settle (call, spend) in reverse. */
const FULL = [...STAGE_ORDER, 'settle:spend', 'settle:call'];

interface Trace {
  ctx: GatewayContext;
  events: string[];
}

/**
 * One line per exchange: kind, endpoint, its stage trace, and its parent: the line number of a traced
 * parent, 'request' for the signed-in /mcp HTTP request that holds a batch of messages (it signs in once
 * and runs no stages itself), null for none.
 */
interface TraceRow {
  traffic: string;
  endpoint: string;
  parent: number | 'request' | null;
  events: string[];
}

const KEYS = ['chat', 'chat-stream', 'embeddings', 'messages', 'images', 'responses', 'tools-call', 'prompts-get', 'resources-read', 'gateway-proxy', 'lists'];
const keyOf = (id: string) => `sk-trace-${id}-CANARY-12`;

describe('stage trace of every request kind: one pipeline owns every request', () => {
  let upstream: FakeOpenAI;
  let docs: FakeMcpServer;
  let gw: TestGateway;
  let traces: Trace[] = [];

  before(async () => {
    upstream = await new FakeOpenAI().start();
    docs = await FakeMcpServer.start({
      tools: { search: { handler: (args) => ({ content: [{ type: 'text', text: `found ${String(args.q)}` }] }) } },
      prompts: { greet: { text: (args) => `Hello ${args.who ?? 'you'}` } },
      resources: { 'docs://readme': { name: 'readme', text: 'Read me first.' } },
    });
    gw = await startGateway({
      organizations: [{ id: 'acme' }],
      keys: KEYS.map((id) => ({ key: keyOf(id), org: 'acme', id: `trace-${id}` })),
      providers: [
        { id: 'local', type: 'echo' },
        { id: 'oai', type: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: 'sk-provider' },
      ],
      models: [
        { name: 'echo', provider: 'local' },
        { name: 'echo-embed', provider: 'local', kind: 'embedding' },
        { name: 'echo-image', provider: 'local', kind: 'image' },
        { name: 'gpt-test', provider: 'oai', model: 'upstream-model', price: { inputPerMTok: 1, outputPerMTok: 2 } },
      ],
      mcpServers: [{ name: 'docs', url: docs.url, org: 'acme', visibility: 'private', pricePerCall: 0.01 }],
      mcp: { healthCheckIntervalSeconds: 0 },
    });
    gw.gateway.services.pipeline.observe((ctx, stage, phase) => {
      let trace = traces.find((t) => t.ctx === ctx);
      if (!trace) traces.push((trace = { ctx, events: [] }));
      trace.events.push(phase === 'run' ? stage : `settle:${stage}`);
    });
  });
  after(async () => {
    gw.gateway.services.pipeline.observe(undefined);
    await gw.close();
    await upstream.stop();
    await docs.close();
  });
  beforeEach(() => {
    traces = [];
  });

  /** The traces of the last request, once every exchange has settled (its log entry written). */
  async function rows(): Promise<TraceRow[]> {
    await gw.gateway.services.pipeline.whenSettled(5000);
    return traces.map((t) => ({
      traffic: t.ctx.traffic,
      endpoint: t.ctx.endpoint,
      parent: t.ctx.parent ? parentRow(t.ctx.parent) : null,
      events: t.events,
    }));
  }

  function parentRow(parent: GatewayContext): number | 'request' {
    const i = traces.findIndex((p) => p.ctx === parent);
    return i === -1 ? 'request' : i;
  }

  async function entriesOf(id: string): Promise<LogEntry[]> {
    await gw.gateway.services.pipeline.whenSettled(5000);
    return (await gw.gateway.services.requestLog.query({ limit: 100, key: `trace-${id}` })).data;
  }

  function mcpPost(id: string, message: unknown, headers: Record<string, string> = {}) {
    return fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-gateway-api-key': `Bearer ${keyOf(id)}`, ...headers },
      body: JSON.stringify(message),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  }

  const openai = (id: string) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: keyOf(id), maxRetries: 0 });

  it('chat completion (JSON): all seven stages, one log entry', async () => {
    const { data, response } = await openai('chat').chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.choices[0].message.content).to.be.a('string');
    expect(await rows()).to.deep.equal([{ traffic: 'model', endpoint: 'chat', parent: null, events: FULL }]);
    const entries = await entriesOf('chat');
    expect(entries.map((e) => [e.model, e.requestId])).to.deep.equal([['echo', response.headers.get('x-gateway-request-id')]]);
  });

  it('chat completion (stream): all seven stages, settled when the stream ended, one log entry', async () => {
    const stream = await openai('chat-stream').chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'hi' }], stream: true });
    for await (const _chunk of stream) void _chunk;
    expect(await rows()).to.deep.equal([{ traffic: 'model', endpoint: 'chat', parent: null, events: FULL }]);
    expect((await entriesOf('chat-stream')).map((e) => [e.model, e.outcome])).to.deep.equal([['echo', 'ok']]);
  });

  it('embeddings: all seven stages, one log entry', async () => {
    await openai('embeddings').embeddings.create({ model: 'echo-embed', input: 'hello' });
    expect(await rows()).to.deep.equal([{ traffic: 'model', endpoint: 'embeddings', parent: null, events: FULL }]);
    expect((await entriesOf('embeddings')).map((e) => e.model)).to.deep.equal(['echo-embed']);
  });

  it('Anthropic Messages: all seven stages, one log entry', async () => {
    const client = new Anthropic({ baseURL: `${gw.url}/native`, apiKey: keyOf('messages'), maxRetries: 0 });
    await client.messages.create({ model: 'echo', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    expect(await rows()).to.deep.equal([{ traffic: 'model', endpoint: 'messages', parent: null, events: FULL }]);
    expect((await entriesOf('messages')).map((e) => [e.model, e.endpoint])).to.deep.equal([['echo', 'messages']]);
  });

  it('image generation: all seven stages, one log entry', async () => {
    await openai('images').images.generate({ model: 'echo-image', prompt: 'a fox', response_format: 'b64_json' });
    expect(await rows()).to.deep.equal([{ traffic: 'model', endpoint: 'images', parent: null, events: FULL }]);
    expect((await entriesOf('images')).map((e) => e.model)).to.deep.equal(['echo-image']);
  });

  it('Responses with the mcp tool: a parent, and a child exchange per model round and per tool call; one entry for the response, one per tool call', async () => {
    upstream.script = (req) => {
      const tool = (req.body.messages as any[]).find((m) => m.role === 'tool');
      if (tool) return { kind: 'json', body: chatCompletion(`Answer: ${tool.content}`) };
      return {
        kind: 'json',
        body: chatCompletion('', undefined, {
          choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'search', arguments: '{"q":"llamas"}' } }] }, finish_reason: 'tool_calls' }],
        }),
      };
    };
    const data = await openai('responses').responses.create(
      { model: 'gpt-test', input: 'llamas?', tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }] },
      { headers: { 'x-mcp-servers': 'docs' } },
    );
    expect(data.output_text).to.equal('Answer: found llamas');
    expect(await rows()).to.deep.equal([
      { traffic: 'responses', endpoint: 'responses', parent: null, events: FULL },
      { traffic: 'model', endpoint: 'responses', parent: 0, events: FULL },
      { traffic: 'mcp', endpoint: 'responses', parent: 0, events: FULL },
      { traffic: 'model', endpoint: 'responses', parent: 0, events: FULL },
    ]);
    const entries = await entriesOf('responses');
    expect(entries.map((e) => e.model).sort()).to.deep.equal(['MCP: search', 'gpt-test']);
    const response = entries.find((e) => e.model === 'gpt-test')!;
    // the rounds fold into the response's entry: 2 x (10 in, 5 out)
    expect(response).to.deep.include({ promptTokens: 20, completionTokens: 10 });
    expect(response.details).to.deep.include({ rounds: 2, toolCalls: 1, responseId: data.id });
    expect(entries.find((e) => e.model === 'MCP: search')!.details).to.deep.include({ responseId: data.id, server: 'docs' });
  });

  it('/mcp tools/call: all seven stages, one `MCP: <tool>` entry', async () => {
    const { body } = await mcpPost('tools-call', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'docs-search', arguments: { q: 'yaks' } } });
    expect(body.result.content).to.deep.equal([{ type: 'text', text: 'found yaks' }]);
    expect(await rows()).to.deep.equal([{ traffic: 'mcp', endpoint: 'mcp', parent: 'request', events: FULL }]);
    expect((await entriesOf('tools-call')).map((e) => [e.model, e.cost])).to.deep.equal([['MCP: docs-search', 0.01]]);
  });

  it('/mcp prompts/get: all seven stages, one `MCP: prompt <name>` entry', async () => {
    const { body } = await mcpPost('prompts-get', { jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name: 'docs-greet', arguments: { who: 'Ada' } } });
    expect(body.result.messages[0].content).to.deep.equal({ type: 'text', text: 'Hello Ada' });
    expect(await rows()).to.deep.equal([{ traffic: 'mcp', endpoint: 'mcp', parent: 'request', events: FULL }]);
    expect((await entriesOf('prompts-get')).map((e) => [e.model, e.deploymentId])).to.deep.equal([['MCP: prompt docs-greet', 'mcp:docs']]);
  });

  it('/mcp resources/read: all seven stages, one `MCP: resource <uri>` entry', async () => {
    const { body } = await mcpPost('resources-read', { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'docs://readme' } });
    expect(body.result.contents[0]).to.deep.include({ uri: 'docs://readme', text: 'Read me first.' });
    expect(await rows()).to.deep.equal([{ traffic: 'mcp', endpoint: 'mcp', parent: 'request', events: FULL }]);
    expect((await entriesOf('resources-read')).map((e) => e.model)).to.deep.equal(['MCP: resource docs://readme']);
  });

  it('gateway_proxy tool call: an MCP exchange whose call stage runs a child model exchange; one `MCP: <tool>` entry', async () => {
    const { body } = await mcpPost('gateway-proxy', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'gateway_proxy-echo', arguments: { prompt: 'ping' } } });
    expect(body.result.content[0].text).to.include('ping');
    const trace = await rows();
    expect(trace).to.deep.equal([
      { traffic: 'mcp', endpoint: 'mcp', parent: 'request', events: FULL },
      { traffic: 'model', endpoint: 'mcp', parent: 0, events: FULL },
    ]);
    const entries = await entriesOf('gateway-proxy');
    expect(entries.map((e) => e.model)).to.deep.equal(['MCP: gateway_proxy-echo']);
    expect(entries[0].details).to.deep.include({ server: 'gateway_proxy', model: 'echo' });
  });

  it('lists run no upstream call and write no log entry', async () => {
    const { body } = await mcpPost('lists', { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(body.result.tools.map((t: { name: string }) => t.name)).to.include('docs-search');
    expect(await rows()).to.deep.equal([]);
    expect(await entriesOf('lists')).to.deep.equal([]);
  });
});
