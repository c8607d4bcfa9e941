import { expect } from 'chai';
import { connect } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ModernClient, ResourceNotFoundError, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { FakeMcpServer } from '../support/fake-mcp-server';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { eventually } from '../support/eventually';
import { startRedis, type RedisServer } from '../support/redis-server';

const ADMIN_KEY = 'sk-admin-CANARY-0c4d';
const ACME_KEY = 'sk-acme-CANARY-55aa';
const ACME_NARROW = 'sk-acme-narrow-CANARY-66bb';
const GLOBEX_KEY = 'sk-globex-CANARY-77cc';
const DOCS_TOKEN = 'docs-upstream-token-CANARY-1f2e';
const HR_TOKEN = 'hr-upstream-token-CANARY-3a4b';
const STATIC_VALUE = 'static-header-CANARY-9e8d';
const CANARIES = [ADMIN_KEY, ACME_KEY, ACME_NARROW, GLOBEX_KEY, DOCS_TOKEN, HR_TOKEN, STATIC_VALUE];

/** POST one JSON-RPC message to /mcp; returns status, headers and parsed body. */
async function rpc(gw: TestGateway, key: string | undefined, method: string, params?: unknown, headers: Record<string, string> = {}, id: number | string = 1) {
  const res = await fetch(`${gw.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...(key ? { 'x-gateway-api-key': `Bearer ${key}` } : {}), ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text && res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : undefined };
}

describe('/mcp end to end (raw JSON-RPC and the MCP SDK client)', () => {
  let docs: FakeMcpServer;
  let crm: FakeMcpServer;
  let hr: FakeMcpServer;
  let weather: FakeMcpServer;
  let gw: TestGateway;

  before(async () => {
    docs = await FakeMcpServer.start({
      tools: {
        search: { description: 'Search the docs', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } },
        whoami: { handler: (_a, h) => ({ content: [{ type: 'text', text: String(h.authorization ?? 'nobody') }] }) },
        fail: { handler: () => ({ content: [{ type: 'text', text: 'index missing' }], isError: true }) },
      },
      prompts: { summarize: { description: 'Summarize a topic', arguments: [{ name: 'topic', required: true }], text: (a) => `Summarize ${a.topic}` } },
      resources: { 'docs://readme': { name: 'README', mimeType: 'text/plain', text: 'read me' } },
    });
    crm = await FakeMcpServer.start({ stateful: true, tools: { lookup: {}, whoami: { handler: (_a, h) => ({ content: [{ type: 'text', text: String(h.authorization ?? 'nobody') }] }) } } });
    hr = await FakeMcpServer.start({ tools: { salaries: { handler: () => ({ content: [{ type: 'text', text: 'CONFIDENTIAL' }] }) } } });
    weather = await FakeMcpServer.start({ tools: { forecast: {} } });
    gw = await testConfig()
      .withOrg('acme')
      .withOrg('globex')
      .withKey(ACME_KEY, { id: 'acme-bot' })
      .withKey(ACME_NARROW, { id: 'acme-narrow', mcp: { servers: ['docs'], tools: { docs: ['search'] } } })
      .withKey(GLOBEX_KEY, { org: 'globex', id: 'globex-bot' })
      .withMcpServer('docs', docs.url, { org: 'acme', visibility: 'private', auth: { type: 'bearer', token: DOCS_TOKEN }, staticHeaders: { 'x-team': STATIC_VALUE }, forwardHeaders: ['authorization'], pricePerCall: 0.01, toolPrices: { search: 0.05 } })
      .withMcpServer('crm', crm.url, { alias: 'sales', org: 'acme', visibility: 'private', forwardHeaders: ['authorization'] })
      .withMcpServer('hr', hr.url, { org: 'globex', visibility: 'private', auth: { type: 'api_key', key: HR_TOKEN } })
      .withMcpServer('weather', weather.url, { visibility: 'public' })
      .with({ adminKey: ADMIN_KEY, mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await Promise.all([docs.close(), crm.close(), hr.close(), weather.close()]);
  });

  describe('raw JSON-RPC', () => {
    it('lists the tools a key may reach with <alias>-<tool> names, as plain JSON, with no handshake', async () => {
      const res = await rpc(gw, ACME_KEY, 'tools/list');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^application\/json/);
      expect(res.headers.get('mcp-session-id')).to.equal(null);
      expect(res.body.jsonrpc).to.equal('2.0');
      expect(res.body.id).to.equal(1);
      expect(res.body.result.tools.map((t: any) => t.name)).to.deep.equal(['docs-search', 'docs-whoami', 'docs-fail', 'sales-lookup', 'sales-whoami', 'weather-forecast']);
      expect(res.body.result.tools[0]).to.deep.equal({ name: 'docs-search', description: 'Search the docs', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } });
    });

    it('calls a tool and returns the upstream result as-is', async () => {
      const res = await rpc(gw, ACME_KEY, 'tools/call', { name: 'docs-search', arguments: { q: 'install' } });
      expect(res.body).to.deep.equal({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: '{"q":"install"}' }] } });
      const upstreamCall = docs.requestsFor('tools/call').at(-1)!;
      expect(upstreamCall.headers.authorization).to.equal(`Bearer ${DOCS_TOKEN}`);
      expect(upstreamCall.headers['x-team']).to.equal(STATIC_VALUE);
      expect(upstreamCall.headers['x-gateway-api-key']).to.equal(undefined);
    });

    it('returns an upstream tool error as a tool-level error result', async () => {
      const res = await rpc(gw, ACME_KEY, 'tools/call', { name: 'docs-fail', arguments: {} });
      expect(res.body.result).to.deep.equal({ content: [{ type: 'text', text: 'index missing' }], isError: true });
    });

    it('answers SSE when the client accepts only an event stream', async () => {
      const res = await rpc(gw, ACME_KEY, 'tools/list', undefined, { accept: 'text/event-stream' });
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
      const data = /^event: message\ndata: (.*)\n\n$/.exec(res.text);
      expect(data, res.text).to.not.equal(null);
      expect(JSON.parse(data![1]).result.tools).to.have.length(6);
    });

    it('honours Accept weights: q=0 refuses a type, and the heavier of JSON and SSE wins', async () => {
      const frame = (text: string) => /^event: message\ndata: (.*)\n\n$/.exec(text);
      for (const accept of ['application/json;q=0, text/event-stream', 'application/json;q=0.2, text/event-stream;q=0.9', '*/*;q=0.1, text/event-stream']) {
        const res = await rpc(gw, ACME_KEY, 'tools/list', undefined, { accept });
        expect([res.status, res.headers.get('content-type')], accept).to.deep.equal([200, 'text/event-stream; charset=utf-8']);
        expect(JSON.parse(frame(res.text)![1]).result.tools, accept).to.have.length(6);
      }
      const json = await rpc(gw, ACME_KEY, 'tools/list', undefined, { accept: 'text/event-stream;q=0.5, application/json' });
      expect(json.headers.get('content-type')).to.match(/^application\/json/);
      expect(json.body.result.tools).to.have.length(6);
      const neither = await rpc(gw, ACME_KEY, 'tools/list', undefined, { accept: 'application/json;q=0, text/event-stream;q=0' });
      expect(neither.status).to.equal(406);
      expect(neither.body.error.code).to.equal(-32600);
    });

    it('answers ping, and initialize without a session', async () => {
      expect((await rpc(gw, ACME_KEY, 'ping')).body).to.deep.equal({ jsonrpc: '2.0', id: 1, result: {} });
      const init = await rpc(gw, ACME_KEY, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } });
      expect(init.body.result.protocolVersion).to.equal('2025-06-18');
      expect(init.body.result.capabilities).to.have.keys('tools', 'prompts', 'resources');
      expect(init.headers.get('mcp-session-id')).to.equal(null);
    });

    it('accepts notifications with 202 and no body', async () => {
      const res = await fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'x-gateway-api-key': `Bearer ${ACME_KEY}` },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      });
      expect(res.status).to.equal(202);
      expect(await res.text()).to.equal('');
    });

    it('refuses a missing or wrong key with 401', async () => {
      const missing = await rpc(gw, undefined, 'tools/list');
      expect(missing.status).to.equal(401);
      expect(missing.body).to.deep.equal({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'Missing API key: send x-gateway-api-key: Bearer <key> (or Authorization: Bearer <key>).', data: { code: 'invalid_api_key' } } });
      const wrong = await rpc(gw, 'sk-wrong', 'tools/list');
      expect(wrong.status).to.equal(401);
      expect(wrong.body.error.message).to.equal('Invalid API key.');
      // Authorization: Bearer is the fallback when x-gateway-api-key is absent (issue 14)
      const viaAuthorization = await rpc(gw, undefined, 'tools/list', undefined, { authorization: `Bearer ${ACME_KEY}` });
      expect(viaAuthorization.status).to.equal(200);
    });

    it('answers a wrong Accept header with 406 only to a caller with a valid key; without one it is the 401', async () => {
      const html = { accept: 'text/html' };
      const missing = await rpc(gw, undefined, 'tools/list', undefined, html);
      expect(missing.status).to.equal(401);
      expect(missing.body).to.deep.equal({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'Missing API key: send x-gateway-api-key: Bearer <key> (or Authorization: Bearer <key>).', data: { code: 'invalid_api_key' } } });
      const wrong = await rpc(gw, 'sk-wrong', 'tools/list', undefined, html);
      expect(wrong.status).to.equal(401);
      expect(wrong.body.error).to.include({ code: -32001, message: 'Invalid API key.' });
      const known = await rpc(gw, ACME_KEY, 'tools/list', undefined, html);
      expect(known.status).to.equal(406);
      expect(known.body).to.deep.equal({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Not Acceptable: accept application/json or text/event-stream.' } });
    });

    it('answers malformed JSON with -32700 and an unknown method with -32601', async () => {
      const res = await fetch(`${gw.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-gateway-api-key': `Bearer ${ACME_KEY}` }, body: '{"jsonrpc":"2.0",' });
      expect(res.status).to.equal(400);
      expect(((await res.json()) as any).error.code).to.equal(-32700);
      const unknown = await rpc(gw, ACME_KEY, 'tools/destroy');
      expect(unknown.body).to.deep.equal({ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found: tools/destroy' } });
    });

    it('answers an invalid message, an unreadable body and an empty batch as an event stream to a client that accepts only one', async () => {
      const send = (body: string) =>
        fetch(`${gw.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-gateway-api-key': `Bearer ${ACME_KEY}` }, body });
      const cases: [string, unknown][] = [
        [JSON.stringify({ jsonrpc: '1.0', id: 3, method: 'tools/list' }), { jsonrpc: '2.0', id: 3, error: { code: -32600, message: 'Invalid Request: jsonrpc must be "2.0".' } }],
        ['{"jsonrpc":"2.0",', { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'The request body is not valid JSON.', data: { code: 'invalid_json' } } }],
        ['[]', { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: empty batch.' } }],
        ['', { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the request body is empty.' } }],
      ];
      for (const [body, expected] of cases) {
        const res = await send(body);
        const text = await res.text();
        expect([res.status, res.headers.get('content-type')], `${body}: ${text}`).to.deep.equal([400, 'text/event-stream; charset=utf-8']);
        const data = /^event: message\ndata: (.*)\n\n$/.exec(text);
        expect(data, text).to.not.equal(null);
        expect(JSON.parse(data![1])).to.deep.equal(expected);
      }
    });

    it('answers a body still unfinished at the request timeout as an invalid request (-32600, 408), not an internal error', async () => {
      const server = gw.server.server;
      const saved = [server.requestTimeout, server.headersTimeout];
      const { port } = new URL(gw.url);
      const socket = connect(Number(port), '127.0.0.1');
      const received: Buffer[] = [];
      socket.on('data', (b) => received.push(b));
      const closed = new Promise((resolve) => socket.on('close', resolve));
      try {
        server.requestTimeout = server.headersTimeout = 200;
        socket.write(`POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json\r\nx-gateway-api-key: Bearer ${ACME_KEY}\r\nContent-Length: 100\r\n\r\n{"jsonrpc":`);
        await new Promise((r) => setTimeout(r, 400));
        // Node checks request timeouts every 30 s: run its check now rather than wait for it
        const check = Object.getOwnPropertySymbols(server).find((s) => s.description === 'http.server.connectionsCheckingInterval')!;
        (server as any)[check]._onTimeout();
        await eventually(() => Buffer.concat(received).toString().includes('\r\n\r\n{'));
      } finally {
        [server.requestTimeout, server.headersTimeout] = saved;
        socket.end();
      }
      await closed;
      const text = Buffer.concat(received).toString();
      expect(text.split('\r\n')[0]).to.equal('HTTP/1.1 408 Request Timeout');
      expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).to.deep.equal({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'The request was not received in time.', data: { code: 'request_timeout' } } });
    });

    it('answers GET with 405', async () => {
      const res = await fetch(`${gw.url}/mcp`, { headers: { accept: 'text/event-stream', 'x-gateway-api-key': `Bearer ${ACME_KEY}` } });
      expect(res.status).to.equal(405);
      expect(res.headers.get('allow')).to.equal('POST');
    });

    it('serves /mcp/ (a client configured with the trailing slash) as /mcp: its POST is answered, not refused with 405', async () => {
      const res = await fetch(`${gw.url}/mcp/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'x-gateway-api-key': `Bearer ${ACME_KEY}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).to.equal(200);
      expect(await res.json()).to.deep.equal((await rpc(gw, ACME_KEY, 'tools/list')).body);
      const client = new Client({ name: 'e2e', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp/`), { requestInit: { headers: { 'x-gateway-api-key': `Bearer ${ACME_KEY}` } } }));
      try {
        expect(await client.callTool({ name: 'weather-forecast', arguments: { day: 'mon' } })).to.deep.equal({ content: [{ type: 'text', text: '{"day":"mon"}' }] });
      } finally {
        await client.close();
      }
    });

    it('refuses a request from an Origin that is not allowed (DNS rebinding)', async () => {
      const res = await rpc(gw, ACME_KEY, 'tools/list', undefined, { origin: 'http://evil.example' });
      expect(res.status).to.equal(403);
      expect(res.body.error.message).to.equal('Origin "http://evil.example" is not allowed.');
    });

    it('proxies prompts and resources', async () => {
      const prompts = await rpc(gw, ACME_KEY, 'prompts/list');
      expect(prompts.body.result.prompts.map((p: any) => p.name)).to.deep.equal(['docs-summarize']);
      const prompt = await rpc(gw, ACME_KEY, 'prompts/get', { name: 'docs-summarize', arguments: { topic: 'keys' } });
      expect(prompt.body.result).to.deep.equal({ messages: [{ role: 'user', content: { type: 'text', text: 'Summarize keys' } }] });
      const resources = await rpc(gw, ACME_KEY, 'resources/list');
      expect(resources.body.result.resources).to.deep.equal([{ uri: 'docs://readme', name: 'README', mimeType: 'text/plain' }]);
      const read = await rpc(gw, ACME_KEY, 'resources/read', { uri: 'docs://readme' });
      expect(read.body.result).to.deep.equal({ contents: [{ uri: 'docs://readme', mimeType: 'text/plain', text: 'read me' }] });
      const templates = await rpc(gw, ACME_KEY, 'resources/templates/list');
      expect(templates.body.result).to.deep.equal({ resourceTemplates: [] });
    });

    it('logs each tools/call as "MCP: <tool>" with its fee, counted in spend', async () => {
      await rpc(gw, ACME_KEY, 'tools/call', { name: 'docs-search', arguments: { q: 'fee' } });
      await rpc(gw, ACME_KEY, 'tools/call', { name: 'docs-whoami', arguments: {} });
      const logs = await fetch(`${gw.url}/admin/v1/logs?key=acme-bot&limit=2`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } }).then((r) => r.json() as Promise<any>);
      expect(logs.data.map((e: any) => [e.model, e.cost, e.status, e.endpoint, e.org, e.details.server])).to.deep.equal([
        ['MCP: docs-whoami', 0.01, 200, 'mcp', 'acme', 'docs'],
        ['MCP: docs-search', 0.05, 200, 'mcp', 'acme', 'docs'],
      ]);
      const spend = await fetch(`${gw.url}/admin/v1/spend?groupBy=model`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } }).then((r) => r.json() as Promise<any>);
      expect(spend.data.find((r: any) => r.group === 'MCP: docs-search').cost).to.be.greaterThan(0);
    });
  });

  describe('the MCP SDK client', () => {
    async function connect(key: string, headers: Record<string, string> = {}) {
      const client = new Client({ name: 'e2e', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { 'x-gateway-api-key': `Bearer ${key}`, ...headers } } }));
      return client;
    }

    it('connects, lists and calls tools, prompts and resources', async () => {
      const client = await connect(ACME_KEY);
      try {
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).to.include.members(['docs-search', 'sales-lookup', 'weather-forecast']);
        const result = await client.callTool({ name: 'sales-lookup', arguments: { id: 7 } });
        expect(result).to.deep.equal({ content: [{ type: 'text', text: '{"id":7}' }] });
        const { prompts } = await client.listPrompts();
        expect(prompts.map((p) => p.name)).to.deep.equal(['docs-summarize']);
        const read = await client.readResource({ uri: 'docs://readme' });
        expect(read.contents[0]).to.deep.include({ text: 'read me' });
        await client.ping();
      } finally {
        await client.close();
      }
    });

    it('sees plain names when x-mcp-servers narrows the request to one server', async () => {
      const client = await connect(ACME_KEY, { 'x-mcp-servers': 'weather' });
      try {
        expect((await client.listTools()).tools.map((t) => t.name)).to.deep.equal(['forecast']);
        expect(await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' } })).to.deep.equal({ content: [{ type: 'text', text: '{"city":"Oslo"}' }] });
      } finally {
        await client.close();
      }
    });
  });

  describe('restrictions and organisation scoping', () => {
    it("never shows or calls another organisation's private server (list, prefixed name, plain name with x-mcp-servers)", async () => {
      const list = await rpc(gw, ACME_KEY, 'tools/list');
      expect(JSON.stringify(list.body)).to.not.include('salaries');
      const prefixed = await rpc(gw, ACME_KEY, 'tools/call', { name: 'hr-salaries', arguments: {} });
      expect(prefixed.body.error).to.deep.equal({ code: -32602, message: 'Unknown tool: hr-salaries', data: { code: 'mcp_tool_not_found' } });
      const plain = await rpc(gw, ACME_KEY, 'tools/call', { name: 'salaries', arguments: {} }, { 'x-mcp-servers': 'hr' });
      expect(plain.body.error).to.deep.equal({ code: -32602, message: 'x-mcp-servers: no MCP server named "hr" is available to this key.', data: { code: 'mcp_server_not_found' } });
      expect(hr.requestsFor('tools/call')).to.have.length(0);
      // the owner sees it
      const own = await rpc(gw, GLOBEX_KEY, 'tools/call', { name: 'hr-salaries', arguments: {} });
      expect(own.body.result).to.deep.equal({ content: [{ type: 'text', text: 'CONFIDENTIAL' }] });
    });

    it('shows the platform admin key public servers only on /mcp', async () => {
      const list = await rpc(gw, ADMIN_KEY, 'tools/list');
      expect(list.body.result.tools.map((t: any) => t.name)).to.deep.equal(['forecast']);
      const call = await rpc(gw, ADMIN_KEY, 'tools/call', { name: 'salaries', arguments: {} }, { 'x-mcp-servers': 'hr' });
      expect(call.body.error.data.code).to.equal('mcp_server_not_found');
    });

    it("applies the key's server set and per-tool whitelist to list and call alike", async () => {
      const list = await rpc(gw, ACME_NARROW, 'tools/list');
      expect(list.body.result.tools.map((t: any) => t.name)).to.deep.equal(['search']);
      const allowed = await rpc(gw, ACME_NARROW, 'tools/call', { name: 'search', arguments: { q: 'x' } });
      expect(allowed.body.result.content[0].text).to.equal('{"q":"x"}');
      for (const name of ['whoami', 'docs-whoami', 'lookup', 'forecast']) {
        const denied = await rpc(gw, ACME_NARROW, 'tools/call', { name, arguments: {} });
        expect(denied.body.error, name).to.deep.equal({ code: -32602, message: `Unknown tool: ${name}`, data: { code: 'mcp_tool_not_found' } });
      }
      const header = await rpc(gw, ACME_NARROW, 'tools/list', undefined, { 'x-mcp-servers': 'weather' });
      expect(header.body.error.message).to.equal('x-mcp-servers: no MCP server named "weather" is available to this key.');
    });

    it('sends a per-user credential to its own server only', async () => {
      const headers = { 'x-mcp-docs-authorization': 'Bearer alice-docs', 'x-mcp-sales-authorization': 'Bearer alice-crm' };
      const docsWho = await rpc(gw, ACME_KEY, 'tools/call', { name: 'docs-whoami', arguments: {} }, headers);
      const crmWho = await rpc(gw, ACME_KEY, 'tools/call', { name: 'sales-whoami', arguments: {} }, headers);
      expect(docsWho.body.result.content[0].text).to.equal('Bearer alice-docs');
      expect(crmWho.body.result.content[0].text).to.equal('Bearer alice-crm');
      const noUser = await rpc(gw, ACME_KEY, 'tools/call', { name: 'sales-whoami', arguments: {} });
      expect(noUser.body.result.content[0].text).to.equal('nobody');
      for (const r of [...docs.requests, ...crm.requests, ...weather.requests]) {
        expect(r.headers['x-mcp-docs-authorization']).to.equal(undefined);
        expect(r.headers['x-mcp-sales-authorization']).to.equal(undefined);
      }
      expect(weather.requests.some((r) => JSON.stringify(r.headers).includes('alice'))).to.equal(false);
    });

    it("ends the stateful upstream's session of each per-user call (DELETE), so the calls leave no sessions behind", async () => {
      // the pooled connection's session (discovery, calls without a per-user credential) is the one that stays
      await rpc(gw, ACME_KEY, 'tools/call', { name: 'sales-lookup', arguments: {} });
      const before = crm.sessionCount;
      const deletes = crm.requests.filter((r) => r.method === 'DELETE').length;
      for (const user of ['alice', 'bob', 'carol']) {
        const who = await rpc(gw, ACME_KEY, 'tools/call', { name: 'sales-whoami', arguments: {} }, { 'x-mcp-sales-authorization': `Bearer ${user}` });
        expect(who.body.result.content[0].text).to.equal(`Bearer ${user}`);
      }
      await eventually(() => crm.requests.filter((r) => r.method === 'DELETE').length === deletes + 3);
      const ended = crm.requests.filter((r) => r.method === 'DELETE').slice(-3);
      // each DELETE names its own session, with the credential of the user it was opened for
      expect(new Set(ended.map((r) => r.headers['mcp-session-id'])).size).to.equal(3);
      expect(ended.map((r) => r.headers.authorization)).to.have.members(['Bearer alice', 'Bearer bob', 'Bearer carol']);
      expect(crm.sessionCount).to.equal(before);
    });
  });

  it('never shows a canary credential in a response, a log entry or the gateway output', async () => {
    const responses: string[] = [];
    for (const key of [ACME_KEY, GLOBEX_KEY, ADMIN_KEY]) {
      responses.push((await rpc(gw, key, 'tools/list')).text);
      responses.push((await rpc(gw, key, 'tools/call', { name: 'docs-search', arguments: {} })).text);
    }
    for (const path of ['/admin/v1/mcp/servers', '/admin/v1/logs?limit=1000']) {
      responses.push(await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } }).then((r) => r.text()));
    }
    const everything = responses.join('\n') + gw.logLines.join('\n');
    for (const canary of CANARIES) expect(everything, canary).to.not.include(canary);
  });
});

describe('/mcp resources/read against an upstream resource template', () => {
  let files: FakeMcpServer;
  let gw: TestGateway;

  before(async () => {
    files = await FakeMcpServer.start({ resourceTemplates: [{ uriTemplate: 'files:///{name}.{ext}', name: 'File', read: (uri) => `contents of ${uri}` }] });
    gw = await testConfig().withKey(ACME_KEY, { id: 'acme-bot' }).withMcpServer('files', files.url, { visibility: 'public' }).with({ mcp: { healthCheckIntervalSeconds: 0 } }).start();
  });
  after(async () => {
    await gw.close();
    await files.close();
  });

  it('routes a URI the template matches to its server', async () => {
    const read = await rpc(gw, ACME_KEY, 'resources/read', { uri: 'files:///report.txt' });
    expect(read.body.result.contents).to.deep.equal([{ uri: 'files:///report.txt', text: 'contents of files:///report.txt' }]);
    const unknown = await rpc(gw, ACME_KEY, 'resources/read', { uri: 'files:///dir/report.txt' });
    expect(unknown.body.error.message).to.equal('Unknown resource: files:///dir/report.txt');
  });

  it('answers a 300 KB URI crafted against the template at once, not after a minute of backtracking', async () => {
    // "{name}.{ext}" as a backtracking regex tries every dot as the split, each to the end: quadratic in
    // the URI, which any key may send
    const uri = `files:///${'a.'.repeat(150_000)}/`;
    const read = await rpc(gw, ACME_KEY, 'resources/read', { uri });
    expect(read.status).to.equal(200);
    expect(read.body.error.message).to.match(/^Unknown resource: files:\/\/\/a\.a\.a\./);
  });
});

describe('/mcp: a 2025-11-25 client (SDK 1.x) that cancels a tool call', () => {
  let slow: FakeMcpServer;
  let gw: TestGateway;
  let release: () => void = () => undefined;

  before(async () => {
    slow = await FakeMcpServer.start({
      tools: { wait: { handler: () => new Promise((resolve) => (release = () => resolve({ content: [{ type: 'text', text: 'finished' }] }))) }, quick: {} },
    });
    gw = await testConfig().withKey(ACME_KEY, { id: 'acme-bot' }).withMcpServer('slow', slow.url, { org: 'acme' }).with({ adminKey: ADMIN_KEY, mcp: { healthCheckIntervalSeconds: 0 } }).start();
  });
  after(async () => {
    release();
    await gw.close();
    await slow.close();
  });

  it('stops the call upstream (its request closed, notifications/cancelled sent) and charges nothing', async () => {
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { 'x-gateway-api-key': `Bearer ${ACME_KEY}` } } }));
    try {
      const abort = new AbortController();
      const pending = client.callTool({ name: 'wait', arguments: {} }, undefined, { signal: abort.signal }).then(
        () => 'answered',
        (err: Error) => err.message,
      );
      const upstreamCall = await eventually(() => slow.requestsFor('tools/call').at(-1));
      abort.abort('the user gave up');
      expect(await pending).to.include('the user gave up');
      // the SDK 1.x client leaves its POST open and says so in a notification of its own: the gateway acts on it
      await eventually(() => !upstreamCall.open && slow.requestsFor('notifications/cancelled').length === 1);
      const entry = await eventually(async () => {
        const page = (await fetch(`${gw.url}/admin/v1/logs?model=${encodeURIComponent('MCP: wait')}&limit=1`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } }).then((r) => r.json())) as any;
        return page.data[0];
      });
      expect(entry).to.deep.include({ status: 499, cost: 0 });
      // the client goes on as before
      expect(await client.callTool({ name: 'quick', arguments: { n: 1 } })).to.deep.equal({ content: [{ type: 'text', text: '{"n":1}' }] });
    } finally {
      await client.close();
    }
  });
});

describe('/mcp with two servers in one scope listing the same resource URI', () => {
  let archive: FakeMcpServer;
  let notes: FakeMcpServer;
  let gw: TestGateway;

  before(async () => {
    archive = await FakeMcpServer.start({
      resources: { 'shared://notes': { name: 'archived notes', text: 'from the public archive' } },
      resourceTemplates: [{ uriTemplate: 'shared://files/{name}', name: 'archived file', read: (uri) => `archived ${uri}` }],
    });
    notes = await FakeMcpServer.start({
      resources: { 'shared://notes': { name: 'acme notes', text: "from acme's own server" } },
      resourceTemplates: [{ uriTemplate: 'shared://files/{name}', name: 'acme file', read: (uri) => `acme's ${uri}` }],
    });
    gw = await testConfig()
      .withKey(ACME_KEY, { id: 'acme-bot' })
      .withMcpServer('archive', archive.url, { visibility: 'public' })
      .withMcpServer('notes', notes.url, { org: 'acme', visibility: 'private' })
      .with({ adminKey: ADMIN_KEY, mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await Promise.all([archive.close(), notes.close()]);
  });

  it('lists a resource template two servers share once, as the server a read of its URIs goes to lists it (SDK 1.x client)', async () => {
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { 'x-gateway-api-key': `Bearer ${ACME_KEY}` } } }));
    try {
      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates).to.deep.equal([{ uriTemplate: 'shared://files/{name}', name: 'acme file' }]);
      const read = await client.readResource({ uri: 'shared://files/plan' });
      expect(read.contents).to.deep.equal([{ uri: 'shared://files/plan', text: "acme's shared://files/plan" }]);
    } finally {
      await client.close();
    }
  });

  it("lists the URI once, as the server a read goes to lists it: the organisation's own, else the first healthy one", async () => {
    const listed = await rpc(gw, ACME_KEY, 'resources/list');
    expect(listed.body.result.resources).to.deep.equal([{ uri: 'shared://notes', name: 'acme notes' }]);
    const read = await rpc(gw, ACME_KEY, 'resources/read', { uri: 'shared://notes' });
    expect(read.body.result.contents).to.deep.equal([{ uri: 'shared://notes', text: "from acme's own server" }]);

    // acme's server goes down: its resource is no longer listed, and the URI is read where it is listed now
    await notes.close();
    const servers = (await fetch(`${gw.url}/admin/v1/mcp/servers`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } }).then((r) => r.json())) as any;
    const id = servers.data.find((s: any) => s.name === 'notes').id;
    const checked = (await fetch(`${gw.url}/admin/v1/mcp/servers/${id}/health`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}` } }).then((r) => r.json())) as any;
    expect(checked.health.status).to.equal('unhealthy');
    const relisted = await rpc(gw, ACME_KEY, 'resources/list');
    expect(relisted.body.result.resources).to.deep.equal([{ uri: 'shared://notes', name: 'archived notes' }]);
    const reread = await rpc(gw, ACME_KEY, 'resources/read', { uri: 'shared://notes' });
    expect(reread.body.result.contents).to.deep.equal([{ uri: 'shared://notes', text: 'from the public archive' }]);
  });
});

describe('/mcp with two servers whose different resource templates match one URI', () => {
  let archive: FakeMcpServer;
  let notes: FakeMcpServer;
  let gw: TestGateway;
  /** while set, the archive holds its answers until it is resolved */
  let archiveHold: { reached: () => void; release: Promise<void> } | undefined;

  before(async () => {
    // acme's own server is tried first; its broad template also matches the archive's report URIs
    notes = await FakeMcpServer.start({
      resourceTemplates: [{ uriTemplate: 'kb://{section}/{id}', name: 'acme kb', read: (uri) => (uri.startsWith('kb://notes/') ? `acme's ${uri}` : undefined) }],
    });
    archive = await FakeMcpServer.start({ resourceTemplates: [{ uriTemplate: 'kb://reports/{id}', name: 'report', read: async (uri) => {
      const hold = archiveHold;
      if (hold) {
        hold.reached();
        await hold.release;
      }
      return `archived ${uri}`;
    } }] });
    gw = await testConfig()
      .withKey(ACME_KEY, { id: 'acme-bot' })
      .withKey(ACME_NARROW, { id: 'acme-tight', maxBudget: 0.015 })
      .withMcpServer('archive', archive.url, { visibility: 'public', pricePerCall: 0.02 })
      .withMcpServer('notes', notes.url, { org: 'acme', visibility: 'private', pricePerCall: 0.01 })
      .with({ adminKey: ADMIN_KEY, mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await Promise.all([archive.close(), notes.close()]);
  });

  it('reads a URI from the server that has it, whichever listed template it was made from (SDK 1.x client)', async () => {
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { 'x-gateway-api-key': `Bearer ${ACME_KEY}` } } }));
    try {
      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates).to.deep.equal([
        { uriTemplate: 'kb://{section}/{id}', name: 'acme kb' },
        { uriTemplate: 'kb://reports/{id}', name: 'report' },
      ]);
      expect((await client.readResource({ uri: 'kb://notes/7' })).contents).to.deep.equal([{ uri: 'kb://notes/7', text: "acme's kb://notes/7" }]);
      expect((await client.readResource({ uri: 'kb://reports/q3' })).contents).to.deep.equal([{ uri: 'kb://reports/q3', text: 'archived kb://reports/q3' }]);
      const gone = await client.readResource({ uri: 'kb://drafts/1' }).catch((e) => e);
      expect(gone.message).to.equal('MCP error -32002: MCP server notes returned an error: MCP error -32602: Resource kb://drafts/1 not found');
    } finally {
      await client.close();
    }
    // charged and logged as the server that answered
    const logs = await fetch(`${gw.url}/admin/v1/logs?key=acme-bot&limit=3`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } }).then((r) => r.json() as Promise<any>);
    expect(logs.data.map((e: any) => [e.model, e.cost, e.details?.server])).to.deep.equal([
      ['MCP: resource kb://drafts/1', 0, 'notes'],
      ['MCP: resource kb://reports/q3', 0.02, 'archive'],
      ['MCP: resource kb://notes/7', 0.01, 'notes'],
    ]);
  });
  it('answers a 2026-07-28 client (SDK 2.x) a resource no server has as that revision\'s not-found (-32602, data: the URI)', async () => {
    const client = new ModernClient({ name: 'e2e-modern', version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } } as any);
    await client.connect(new ModernTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { 'x-gateway-api-key': `Bearer ${ACME_KEY}` } } }));
    try {
      expect(client.getNegotiatedProtocolVersion()).to.equal('2026-07-28');
      // a URI a listed template makes, which every server asked says it does not have
      const gone = await client.readResource({ uri: 'kb://drafts/1' }).catch((e: unknown) => e);
      expect(ResourceNotFoundError.isInstance(gone), String(gone)).to.equal(true);
      expect(gone).to.deep.include({ code: -32602, data: { uri: 'kb://drafts/1' } });
      expect((gone as Error).message).to.equal('MCP server notes returned an error: MCP error -32602: Resource kb://drafts/1 not found');
      // a URI no server in scope lists or matches
      const unknown = await client.readResource({ uri: 'nowhere://x' }).catch((e: unknown) => e);
      expect(ResourceNotFoundError.isInstance(unknown), String(unknown)).to.equal(true);
      expect(unknown).to.deep.include({ code: -32602, data: { uri: 'nowhere://x' } });
      expect((await client.readResource({ uri: 'kb://notes/7' })).contents).to.deep.equal([{ uri: 'kb://notes/7', text: "acme's kb://notes/7" }]);
    } finally {
      await client.close();
    }
  });

  it("reserves the dearest fee of the servers a read may fall through to, so a budget is not overrun beside it", async () => {
    // notes (0.01) is tried first and has no report; archive (0.02) answers, and holds it for now
    let reached!: () => void;
    const atArchive = new Promise<void>((r) => (reached = r));
    let release!: () => void;
    archiveHold = { reached, release: new Promise<void>((r) => (release = r)) };
    const report = rpc(gw, ACME_NARROW, 'resources/read', { uri: 'kb://reports/q3' });
    try {
      await atArchive;
      // the report's 0.02 is held against the 0.015 budget: nothing is left for another read meanwhile
      const beside = await rpc(gw, ACME_NARROW, 'resources/read', { uri: 'kb://notes/1' }, {}, 2);
      expect(beside.body.error?.code, beside.text).to.equal(-32004);
    } finally {
      release();
      archiveHold = undefined;
    }
    expect((await report).body.result.contents).to.deep.equal([{ uri: 'kb://reports/q3', text: 'archived kb://reports/q3' }]);
  });
});

describe('/mcp: two organisations each with a key named bot', () => {
  let slow: FakeMcpServer;
  let gw: TestGateway;
  let release: () => void = () => undefined;

  before(async () => {
    slow = await FakeMcpServer.start({
      tools: { wait: { handler: () => new Promise((resolve) => (release = () => resolve({ content: [{ type: 'text', text: 'finished' }] }))) } },
    });
    gw = await testConfig()
      .withOrg('acme')
      .withOrg('globex')
      .withKey(ACME_KEY, { id: 'bot' })
      .withKey(GLOBEX_KEY, { org: 'globex', id: 'bot' })
      .withMcpServer('slow', slow.url, { visibility: 'public' })
      .with({ mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
  });
  after(async () => {
    release();
    await gw.close();
    await slow.close();
  });

  it("one organisation's notifications/cancelled does not stop the other's call of the same JSON-RPC id", async () => {
    const pending = rpc(gw, GLOBEX_KEY, 'tools/call', { name: 'wait', arguments: {} }, {}, 7);
    await eventually(() => slow.requestsFor('tools/call').at(-1));
    // acme's bot guesses globex's request id (SDK clients count from 0)
    const notified = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-gateway-api-key': `Bearer ${ACME_KEY}` },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'not yours' } }),
    });
    expect(notified.status).to.equal(202);
    release();
    const answered = await pending;
    expect(answered.status).to.equal(200);
    expect(answered.body.result).to.deep.equal({ content: [{ type: 'text', text: 'finished' }] });
  });
});

describe('/mcp while the store cannot be reached', () => {
  let redis: RedisServer;
  let gw: TestGateway;

  before(async () => {
    redis = await startRedis();
    gw = await testConfig()
      .withKey(ACME_KEY, { id: 'bot' })
      .with({ store: { url: redis.url, sweepIntervalSeconds: 0 }, mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
  });
  after(async () => {
    redis?.resume();
    await gw?.close();
    await redis?.stop();
  });

  it('answers a key it cannot look up with 503 store_unavailable and Retry-After, never as an invalid key (401)', async () => {
    const unknown = 'sk-mcp-never-issued-CANARY-99ee';
    redis.pause();
    let refused: Awaited<ReturnType<typeof rpc>>;
    try {
      refused = await rpc(gw, unknown, 'tools/list', undefined, {}, 4);
    } finally {
      redis.resume();
    }
    expect(refused.status, refused.text).to.equal(503);
    expect(refused.headers.get('retry-after')).to.equal('1');
    expect(refused.body.id).to.equal(4);
    expect(refused.body.error.data.code).to.equal('store_unavailable');
    expect(refused.text).to.not.include(unknown);
    // the store back: the same key is the unknown key it is
    const after = await rpc(gw, unknown, 'tools/list');
    expect([after.status, after.body.error.message]).to.deep.equal([401, 'Invalid API key.']);
  });

  it('answers a body it cannot read from a key it cannot look up with 503 store_unavailable too, not 401', async () => {
    const unknown = 'sk-mcp-never-issued-CANARY-99ff';
    const send = () => fetch(`${gw.url}/mcp`, { method: 'POST', headers: { 'content-type': 'text/plain', accept: 'application/json', 'x-gateway-api-key': `Bearer ${unknown}` }, body: 'hello' });
    redis.pause();
    let refused: Response;
    try {
      refused = await send();
    } finally {
      redis.resume();
    }
    const text = await refused.text();
    expect(refused.status, text).to.equal(503);
    expect(refused.headers.get('retry-after')).to.equal('1');
    expect(JSON.parse(text).error.data.code).to.equal('store_unavailable');
    expect((await send()).status).to.equal(401);
  });
});
