import { expect } from 'chai';
import type { McpServerConfig } from '../../../../core/config/types';
import { FakeMcpServer } from '../../../support/fake-mcp-server';
import { startEverythingServer, type EverythingServer } from '../../../support/everything-server';
import { startMcpHarness, type McpHarness } from '../../../support/mcp-harness';

const acme = { keyId: 'k-acme', org: 'acme' };
const CANARY = 'canary-upstream-cred-91c2';

describe('core/apis/mcp/mcp-gateway (against real SDK servers on loopback)', () => {
  let docs: FakeMcpServer;
  let crm: FakeMcpServer;
  let hr: FakeMcpServer;
  let h: McpHarness;

  beforeEach(async () => {
    docs = await FakeMcpServer.start({
      tools: {
        search: { description: 'Search docs', inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }, extra: { annotations: { readOnlyHint: true } } },
        whoami: { handler: (_args, headers) => ({ content: [{ type: 'text', text: String(headers.authorization ?? 'nobody') }] }) },
        broken: { handler: () => ({ content: [{ type: 'text', text: 'disk full' }], isError: true }) },
      },
      prompts: { summarize: { description: 'Summarize', arguments: [{ name: 'topic', required: true }], text: (a) => `Summarize ${a.topic}` } },
      resources: { 'docs://readme': { name: 'README', mimeType: 'text/markdown', text: '# Docs' } },
      resourceTemplates: [{ uriTemplate: 'docs://pages/{page}', name: 'Page', read: (uri) => `page ${uri}` }],
    });
    crm = await FakeMcpServer.start({ stateful: true, tools: { search: { description: 'Search customers' }, whoami: { handler: (_a, headers) => ({ content: [{ type: 'text', text: String(headers.authorization ?? 'nobody') }] }) } } });
    hr = await FakeMcpServer.start({ tools: { salaries: {} } });
    const servers: McpServerConfig<string>[] = [
      { name: 'docs', url: docs.url, org: 'acme', visibility: 'private', auth: { type: 'api_key', key: CANARY }, forwardHeaders: ['authorization'], pricePerCall: 0.001, toolPrices: { search: 0.002 } },
      { name: 'crm', alias: 'sales', url: crm.url, org: 'acme', visibility: 'private', forwardHeaders: ['authorization'] },
      { name: 'hr', url: hr.url, org: 'globex', visibility: 'private' },
    ];
    h = await startMcpHarness({ servers });
  });
  afterEach(async () => {
    await h.gateway.stop();
    await Promise.all([docs.close(), crm.close(), hr.close()]);
  });

  const scope = (headers: Record<string, string> = {}, caller: Parameters<McpHarness['gateway']['scope']>[0] = acme) => h.gateway.scope(caller, headers);

  it('prefixes tool names with the alias when several servers are reachable, and keeps upstream fields', () => {
    const tools = h.gateway.view.listTools(scope());
    expect(tools.map((t) => t.name)).to.deep.equal(['docs-search', 'docs-whoami', 'docs-broken', 'sales-search', 'sales-whoami']);
    expect(tools[0]).to.deep.equal({
      name: 'docs-search', description: 'Search docs', annotations: { readOnlyHint: true },
      inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    });
  });

  it('keeps plain names when one server is reachable', () => {
    expect(h.gateway.view.listTools(scope({ 'x-mcp-servers': 'sales' })).map((t) => t.name)).to.deep.equal(['search', 'whoami']);
    expect(h.gateway.routeTool(scope({ 'x-mcp-servers': 'crm' }), 'search').server.name).to.equal('crm');
  });

  it('calls a tool by its prefixed name and returns the upstream result as-is, with the stored credential', async () => {
    const routed = h.gateway.routeTool(scope(), 'docs-search');
    expect(routed.upstreamName).to.equal('search');
    expect(h.gateway.feeOf(routed)).to.equal(0.002);
    expect(h.gateway.feeOf(h.gateway.routeTool(scope(), 'docs-whoami'))).to.equal(0.001);
    expect(h.gateway.feeOf(h.gateway.routeTool(scope(), 'sales-search'))).to.equal(0);
    const result = await h.gateway.callTool(routed, { q: 'install' }, { inbound: {} });
    expect(result).to.deep.equal({ content: [{ type: 'text', text: '{"q":"install"}' }] });
    expect(docs.requestsFor('tools/call')[0].headers['x-api-key']).to.equal(CANARY);
  });

  it('returns an upstream tool error as a tool-level error result', async () => {
    const result = await h.gateway.callTool(h.gateway.routeTool(scope(), 'docs-broken'), {}, { inbound: {} });
    expect(result).to.deep.equal({ content: [{ type: 'text', text: 'disk full' }], isError: true });
  });

  it('turns an upstream JSON-RPC error on tools/call into a tool-level error result', async () => {
    const routed = h.gateway.routeTool(scope(), 'docs-search');
    docs.removeTool('search');
    const result = await h.gateway.callTool(routed, { q: 'x' }, { inbound: {} });
    expect(result).to.deep.equal({ content: [{ type: 'text', text: 'MCP error -32602: Tool search not found' }], isError: true });
  });

  it('answers an unknown, hidden or foreign tool the same way: not found', () => {
    const codes = ['docs-nope', 'hr-salaries', 'salaries', 'search', 'nope-search'].map((name) => {
      try {
        h.gateway.routeTool(scope(), name);
        return 'routed';
      } catch (err: any) {
        return `${err.code}:${err.message}`;
      }
    });
    expect(codes).to.deep.equal([
      'mcp_tool_not_found:Unknown tool: docs-nope',
      'mcp_tool_not_found:Unknown tool: hr-salaries',
      'mcp_tool_not_found:Unknown tool: salaries',
      'mcp_tool_not_found:Unknown tool: search',
      'mcp_tool_not_found:Unknown tool: nope-search',
    ]);
  });

  it('never lets x-mcp-servers reach another organisation, naming the server it cannot find', () => {
    expect(() => scope({ 'x-mcp-servers': 'hr' })).to.throw('x-mcp-servers: no MCP server named "hr" is available to this key.');
    const globex = scope({ 'x-mcp-servers': 'hr' }, { keyId: 'k-globex', org: 'globex' });
    expect(h.gateway.view.listTools(globex).map((t) => t.name)).to.deep.equal(['salaries']);
  });

  it('honours the key server set and per-tool whitelist in listing and routing alike', () => {
    const s = scope({}, { keyId: 'k', org: 'acme', restrictions: { servers: ['docs'], tools: { docs: ['search'] } } });
    expect(h.gateway.view.listTools(s).map((t) => t.name)).to.deep.equal(['search']);
    expect(h.gateway.routeTool(s, 'search').upstreamName).to.equal('search');
    expect(() => h.gateway.routeTool(s, 'whoami')).to.throw('Unknown tool: whoami');
  });

  it("sends a per-user credential (x-mcp-<alias>-authorization) to that server only", async () => {
    const inbound = { 'x-mcp-docs-authorization': 'Bearer alice-docs', authorization: 'Bearer gateway-key', 'x-gateway-api-key': 'Bearer gateway-key', cookie: 'sid=1' };
    const viaDocs = await h.gateway.callTool(h.gateway.routeTool(scope(), 'docs-whoami'), {}, { inbound });
    const viaCrm = await h.gateway.callTool(h.gateway.routeTool(scope(), 'sales-whoami'), {}, { inbound });
    expect(viaDocs).to.deep.equal({ content: [{ type: 'text', text: 'Bearer alice-docs' }] });
    expect(viaCrm).to.deep.equal({ content: [{ type: 'text', text: 'nobody' }] });
    for (const r of [...docs.requests, ...crm.requests]) {
      expect(r.headers.cookie).to.equal(undefined);
      expect(r.headers['x-gateway-api-key']).to.equal(undefined);
      expect(JSON.stringify(r.headers)).to.not.include('gateway-key');
    }
  });

  it('proxies prompts with the same naming', async () => {
    expect(h.gateway.view.listPrompts(scope()).map((p) => p.name)).to.deep.equal(['docs-summarize']);
    const result = await h.gateway.getPrompt(h.gateway.routePrompt(scope(), 'docs-summarize'), { topic: 'MCP' }, { inbound: {} });
    expect(result).to.deep.equal({ messages: [{ role: 'user', content: { type: 'text', text: 'Summarize MCP' } }] });
  });

  it('routes resources by the server that listed them, or whose template matches', async () => {
    expect(h.gateway.view.listResources(scope())).to.deep.equal([{ uri: 'docs://readme', name: 'README', mimeType: 'text/markdown' }]);
    expect(h.gateway.view.listResourceTemplates(scope())).to.deep.equal([{ uriTemplate: 'docs://pages/{page}', name: 'Page' }]);
    const readme = await h.gateway.readResource(h.gateway.routeResource(scope(), 'docs://readme'), 'docs://readme', { inbound: {} });
    expect(readme).to.deep.equal({ contents: [{ uri: 'docs://readme', mimeType: 'text/markdown', text: '# Docs' }] });
    expect(h.gateway.routeResource(scope(), 'docs://pages/intro').name).to.equal('docs');
    expect(() => h.gateway.routeResource(scope(), 'file:///etc/passwd')).to.throw('Unknown resource: file:///etc/passwd');
    expect(() => h.gateway.routeResource(scope({}, { keyId: 'g', org: 'globex' }), 'docs://readme')).to.throw('Unknown resource');
  });

  it('lists the healthy servers while one is down (discovery fails open), and reports the dead one as unreachable', async () => {
    await crm.close();
    const crmId = h.gateway.routeTool(scope(), 'sales-search').server.id;
    const checked = await h.gateway.health.check(crmId);
    expect(checked!.health.status).to.equal('unhealthy');
    expect(checked!.health.lastError).to.equal('MCP server crm is unreachable.');
    expect(h.gateway.view.listTools(scope()).map((t) => t.name)).to.deep.equal(['docs-search', 'docs-whoami', 'docs-broken']);
    const err = await h.gateway.callTool(h.gateway.routeTool(scope(), 'sales-search'), {}, { inbound: {} }).catch((e) => e);
    expect(err.code).to.equal('mcp_upstream_unreachable');
    expect(err.message).to.equal('MCP server crm is unreachable.');
  });
});

describe('core/apis/mcp/mcp-gateway with @modelcontextprotocol/server-everything', () => {
  let everything: EverythingServer;
  let h: McpHarness;
  before(async () => {
    everything = await startEverythingServer();
    h = await startMcpHarness({ servers: [{ name: 'everything', url: everything.url, visibility: 'public' }] });
  });
  after(async () => {
    await h?.gateway.stop();
    await everything?.stop();
  });

  it('discovers its tools, prompts and resources and calls its echo tool', async () => {
    const s = h.gateway.scope({ keyId: 'k', org: 'acme' }, {});
    const record = h.gateway.registry.list()[0];
    expect(record.health.status).to.equal('healthy');
    const tools = h.gateway.view.listTools(s).map((t) => t.name);
    expect(tools).to.include.members(['echo', 'get-sum']);
    expect(h.gateway.view.listPrompts(s).length).to.be.greaterThan(0);
    const result = await h.gateway.callTool(h.gateway.routeTool(s, 'echo'), { message: 'hello' }, { inbound: {} });
    expect(result).to.deep.equal({ content: [{ type: 'text', text: 'Echo: hello' }] });
    const sum = await h.gateway.callTool(h.gateway.routeTool(s, 'get-sum'), { a: 2, b: 3 }, { inbound: {} });
    expect(JSON.stringify(sum)).to.include('5');
  });

  it('reads a resource it listed', async () => {
    const s = h.gateway.scope({ keyId: 'k', org: 'acme' }, {});
    const resources = h.gateway.view.listResources(s);
    if (resources.length === 0) {
      expect(h.gateway.view.listResourceTemplates(s).length).to.be.greaterThan(0);
      return;
    }
    const uri = resources[0].uri as string;
    const read = await h.gateway.readResource(h.gateway.routeResource(s, uri), uri, { inbound: {} });
    expect((read.contents as { uri: string }[])[0].uri).to.equal(uri);
  });
});
