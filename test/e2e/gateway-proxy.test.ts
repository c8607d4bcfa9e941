import { expect } from 'chai';
import OpenAI from 'openai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FakeOpenAI, chatCompletion } from '../support/fake-openai';
import { FakeMcpServer } from '../support/fake-mcp-server';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const KEY = 'sk-proxy-client-CANARY-41';
const NARROW_KEY = 'sk-proxy-narrow-CANARY-42';
const DOCS_ONLY_KEY = 'sk-proxy-docs-only-CANARY-43';
const ONE_MODEL_KEY = 'sk-proxy-one-model-CANARY-44';
const ADMIN = 'sk-proxy-admin-CANARY-45';

describe('gateway_proxy: the gateway models as MCP tools', () => {
  let upstream: FakeOpenAI;
  let docs: FakeMcpServer;
  let gw: TestGateway;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    docs = await FakeMcpServer.start({ toolsOnly: true, tools: { search: { description: 'Search the docs' } } });
    gw = await testConfig()
      .withKey(KEY, { id: 'proxy-user' })
      .withKey(NARROW_KEY, { id: 'narrow', models: ['gpt-4o-mini'] })
      .withKey(DOCS_ONLY_KEY, { id: 'docs-only', mcp: { servers: ['docs'], tools: { docs: ['search'] } } })
      .withKey(ONE_MODEL_KEY, { id: 'one-model', mcp: { tools: { gateway_proxy: ['team_claude_v2'] } } })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-4o-mini', { model: 'upstream-mini', price: { inputPerMTok: 1, outputPerMTok: 2 } })
      .withModel('team/claude.v2', { model: 'upstream-claude' })
      .withModel('embed', { kind: 'embedding' })
      .withMcpServer('docs', docs.url, { org: 'acme', visibility: 'private' })
      .with({ adminKey: ADMIN, mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
    await docs.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    upstream.script = (req) => ({ kind: 'json', body: chatCompletion(`${req.body.model} says: ${req.body.messages.at(-1).content}`) });
  });

  async function mcpClient(key: string, headers: Record<string, string> = {}) {
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { 'x-gateway-api-key': `Bearer ${key}`, ...headers } } }));
    return client;
  }

  it('lists one tool per chat model the key may use, named gateway_proxy-<model> beside another server', async () => {
    const client = await mcpClient(KEY);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).to.deep.equal(['docs-search', 'gateway_proxy-gpt_4o_mini', 'gateway_proxy-team_claude_v2']);
    const mini = tools.find((t) => t.name === 'gateway_proxy-gpt_4o_mini')!;
    expect(mini.inputSchema).to.deep.include({ type: 'object', required: ['prompt'] });
    expect(Object.keys(mini.inputSchema.properties!)).to.deep.equal(['prompt', 'system', 'max_tokens']);
    await client.close();

    const narrow = await mcpClient(NARROW_KEY);
    expect((await narrow.listTools()).tools.map((t) => t.name)).to.deep.equal(['docs-search', 'gateway_proxy-gpt_4o_mini']);
    await narrow.close();
  });

  it('calls a model tool through the model pipeline under the caller key: answer as text, priced and logged', async () => {
    const client = await mcpClient(KEY);
    const result = await client.callTool({ name: 'gateway_proxy-gpt_4o_mini', arguments: { prompt: 'Hello?', system: 'Be kind.', max_tokens: 30 } });
    expect(result).to.deep.equal({ content: [{ type: 'text', text: 'upstream-mini says: Hello?' }] });
    expect(upstream.last.body).to.deep.equal({ model: 'upstream-mini', messages: [{ role: 'system', content: 'Be kind.' }, { role: 'user', content: 'Hello?' }], max_tokens: 30 });
    await client.close();
    const page = await gw.gateway.services.requestLog.query({ limit: 10, key: 'proxy-user' });
    const entry = page.data.find((e) => e.model === 'MCP: gateway_proxy-gpt_4o_mini')!;
    expect(entry).to.deep.include({ endpoint: 'mcp', promptTokens: 10, completionTokens: 5, status: 200, deploymentId: 'oai/upstream-mini' });
    expect(entry.details).to.deep.include({ server: 'gateway_proxy', model: 'gpt-4o-mini' });
    expect(entry.cost).to.be.closeTo(0.00002, 1e-12);
  });

  it('refuses a model the key may not use like an unknown tool', async () => {
    const narrow = await mcpClient(NARROW_KEY);
    const err = await narrow.callTool({ name: 'gateway_proxy-team_claude_v2', arguments: { prompt: 'x' } }).then(() => undefined, (e) => e);
    expect(err?.message).to.include('Unknown tool');
    expect(upstream.requests).to.have.length(0);
    await narrow.close();
  });

  it('x-mcp-servers: gateway_proxy selects only the model tools (one server: plain names); naming only docs hides them', async () => {
    const onlyModels = await mcpClient(KEY, { 'x-mcp-servers': 'gateway_proxy' });
    expect((await onlyModels.listTools()).tools.map((t) => t.name)).to.deep.equal(['gpt_4o_mini', 'team_claude_v2']);
    await onlyModels.close();
    const onlyDocs = await mcpClient(KEY, { 'x-mcp-servers': 'docs' });
    expect((await onlyDocs.listTools()).tools.map((t) => t.name)).to.deep.equal(['search']);
    await onlyDocs.close();
  });

  it('rejects arguments without a prompt as a tool error the model can read (MCP 2025-11-25 input validation), running no model', async () => {
    const client = await mcpClient(KEY);
    for (const args of [{ system: 'x' }, { prompt: 'hi', max_tokens: 0 }]) {
      const result = await client.callTool({ name: 'gateway_proxy-gpt_4o_mini', arguments: args });
      expect(result.isError, JSON.stringify(args)).to.equal(true);
      expect((result.content as any)[0].text).to.match(/'prompt'|'max_tokens'/);
    }
    await client.close();
    expect(upstream.requests).to.have.length(0);
  });

  it("is out of scope for a key whose server set leaves it out: it neither lists nor calls model tools", async () => {
    const client = await mcpClient(DOCS_ONLY_KEY);
    expect((await client.listTools()).tools.map((t) => t.name)).to.deep.equal(['search']);
    for (const name of ['gpt_4o_mini', 'gateway_proxy-gpt_4o_mini']) {
      const err = await client.callTool({ name, arguments: { prompt: 'x' } }).then(() => undefined, (e) => e);
      expect(err?.message).to.include('Unknown tool');
    }
    const named = await mcpClient(DOCS_ONLY_KEY, { 'x-mcp-servers': 'gateway_proxy' });
    const err = await named.listTools().then(() => undefined, (e) => e);
    expect(err?.message).to.include('no MCP server named "gateway_proxy"');
    expect(upstream.requests).to.have.length(0);
    await client.close();
    await named.close();
  });

  it("applies a key's per-tool whitelist to gateway_proxy like to any server", async () => {
    const client = await mcpClient(ONE_MODEL_KEY);
    expect((await client.listTools()).tools.map((t) => t.name)).to.deep.equal(['docs-search', 'gateway_proxy-team_claude_v2']);
    const err = await client.callTool({ name: 'gateway_proxy-gpt_4o_mini', arguments: { prompt: 'x' } }).then(() => undefined, (e) => e);
    expect(err?.message).to.include('Unknown tool');
    expect(upstream.requests).to.have.length(0);
    await client.close();
  });

  it('takes gateway_proxy as a server name in a key made through the management API', async () => {
    const res = await fetch(`${gw.url}/admin/v1/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ org: 'acme', name: 'models-only', mcp: { servers: ['gateway_proxy'] } }),
    });
    const created = (await res.json()) as { key: string };
    expect(res.status, JSON.stringify(created)).to.equal(201);
    const client = await mcpClient(created.key);
    expect((await client.listTools()).tools.map((t) => t.name)).to.deep.equal(['gpt_4o_mini', 'team_claude_v2']);
    await client.close();
  });

  it('is usable from the Responses tool loop: the model asks another model', async () => {
    upstream.script = (req) => {
      const tool = (req.body.messages as any[]).find((m) => m.role === 'tool');
      if (req.body.model === 'upstream-claude') return { kind: 'json', body: chatCompletion('second opinion: yes') };
      if (tool) return { kind: 'json', body: chatCompletion(`Final: ${tool.content}`) };
      return {
        kind: 'json',
        body: chatCompletion('', undefined, {
          choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'team_claude_v2', arguments: '{"prompt":"ok?"}' } }] }, finish_reason: 'tool_calls' }],
        }),
      };
    };
    const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const data = await openai.responses.create(
      { model: 'gpt-4o-mini', input: 'ask claude', tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }] },
      { headers: { 'x-mcp-servers': 'gateway_proxy' } },
    );
    expect((data.output[0] as any).tools.map((t: any) => t.name)).to.deep.equal(['gpt_4o_mini', 'team_claude_v2']);
    expect(data.output[1]).to.deep.include({ type: 'mcp_call', name: 'team_claude_v2', output: 'second opinion: yes' });
    expect(data.output_text).to.equal('Final: second opinion: yes');
    expect(upstream.requests.map((r) => r.body.model)).to.deep.equal(['upstream-mini', 'upstream-claude', 'upstream-mini']);
  });
});

describe('gateway_proxy: a model tool whose name an upstream tool also uses', () => {
  it('never clashes: with two servers reachable both are prefixed with their alias (the organization\'s own server first)', async () => {
    const upstream = await new FakeOpenAI().start();
    upstream.script = { kind: 'json', body: chatCompletion('model answer') };
    const clash = await FakeMcpServer.start({ toolsOnly: true, tools: { summarize: { handler: () => ({ content: [{ type: 'text', text: 'upstream tool' }] }) } } });
    const gw = await testConfig()
      .withKey(KEY, { id: 'k' })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('summarize')
      .withMcpServer('tools', clash.url, { org: 'acme', visibility: 'private' })
      .with({ mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
    try {
      const client = new Client({ name: 'e2e', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { 'x-gateway-api-key': `Bearer ${KEY}` } } }));
      expect((await client.listTools()).tools.map((t) => t.name)).to.deep.equal(['tools-summarize', 'gateway_proxy-summarize']);
      expect(await client.callTool({ name: 'tools-summarize', arguments: {} })).to.deep.equal({ content: [{ type: 'text', text: 'upstream tool' }] });
      expect(await client.callTool({ name: 'gateway_proxy-summarize', arguments: { prompt: 'x' } })).to.deep.equal({ content: [{ type: 'text', text: 'model answer' }] });
      await client.close();
    } finally {
      await gw.close();
      await upstream.stop();
      await clash.close();
    }
  });
});

describe('gateway_proxy: two models whose names become the same tool name', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    upstream.script = (req) => ({ kind: 'json', body: chatCompletion(`${req.body.model} says hi`) });
    gw = await testConfig()
      .withKey(KEY, { id: 'both' })
      .withKey(ONE_MODEL_KEY, { id: 'dotted-only', models: ['claude-3.5-sonnet'] })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('claude-3-5-sonnet', { model: 'upstream-dashed' })
      .withModel('claude-3.5-sonnet', { model: 'upstream-dotted' })
      .with({ mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  async function tools(key: string) {
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { 'x-gateway-api-key': `Bearer ${key}` } } }));
    return client;
  }

  it('gives each model a tool of its own, so a key allowed only the second still has one', async () => {
    const both = await tools(KEY);
    const listed = (await both.listTools()).tools;
    expect(listed.map((t) => [t.name, t.description])).to.deep.equal([
      ['claude_3_5_sonnet', 'Ask the model claude-3-5-sonnet (through the gateway) and get its answer as text.'],
      ['claude_3_5_sonnet_2', 'Ask the model claude-3.5-sonnet (through the gateway) and get its answer as text.'],
    ]);
    await both.close();
    const dotted = await tools(ONE_MODEL_KEY);
    expect((await dotted.listTools()).tools.map((t) => t.name)).to.deep.equal(['claude_3_5_sonnet_2']);
    expect(await dotted.callTool({ name: 'claude_3_5_sonnet_2', arguments: { prompt: 'hi' } })).to.deep.equal({ content: [{ type: 'text', text: 'upstream-dotted says hi' }] });
    await dotted.close();
  });
});
