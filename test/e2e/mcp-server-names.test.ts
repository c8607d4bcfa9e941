import { expect } from 'chai';
import { FakeMcpServer } from '../support/fake-mcp-server';
import { FakeOpenAI, chatCompletion } from '../support/fake-openai';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const ACME_KEY = 'sk-review-acme-CANARY-1a2b';

const whoami = { handler: (_a: unknown, h: Record<string, unknown>) => ({ content: [{ type: 'text' as const, text: String(h.authorization ?? 'nobody') }] }) };

async function post(gw: TestGateway, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${gw.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', 'x-gateway-api-key': `Bearer ${ACME_KEY}`, ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('/mcp server aliases across tenants, and batches', () => {
  let own: FakeMcpServer;
  let shared: FakeMcpServer;
  let gw: TestGateway;

  before(async () => {
    own = await FakeMcpServer.start({ tools: { whoami, ping: {} } });
    shared = await FakeMcpServer.start({ tools: { whoami } });
    gw = await testConfig()
      .withKey(ACME_KEY, { id: 'acme-bot' })
      // the organisation's own server and a public one whose aliases differ only in case: HTTP header
      // names are case-insensitive, so both would read the same x-mcp-docs-authorization header
      .withMcpServer('Docs', own.url, { org: 'acme', visibility: 'private', forwardHeaders: ['authorization'] })
      .withMcpServer('docs', shared.url, { visibility: 'public', forwardHeaders: ['authorization'] })
      .with({ mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await Promise.all([own.close(), shared.close()]);
  });

  it("sends a per-user credential to the organisation's own server only, never to a public server whose alias differs only in case", async () => {
    const headers = { 'x-mcp-Docs-authorization': 'Bearer alice-own-docs' };
    const list = await post(gw, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers);
    const names: string[] = list.body.result.tools.map((t: { name: string }) => t.name);
    for (const name of names.filter((n) => n.toLowerCase().endsWith('whoami'))) {
      await post(gw, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: {} } }, headers);
    }
    expect(shared.requests.some((r) => JSON.stringify(r.headers).includes('alice-own-docs'))).to.equal(false);
    expect(own.requests.some((r) => JSON.stringify(r.headers).includes('alice-own-docs'))).to.equal(true);
  });

  it('refuses to boot with two servers of one organisation whose aliases differ only in case', async () => {
    let error: unknown;
    try {
      const other = await testConfig()
        .withKey(ACME_KEY, { id: 'acme-bot' })
        .withMcpServer('Docs', own.url, { org: 'acme' })
        .withMcpServer('docs', shared.url, { org: 'acme' })
        .with({ mcp: { healthCheckIntervalSeconds: 0 } })
        .start();
      await other.close();
    } catch (err) {
      error = err;
    }
    expect(String(error)).to.match(/mcpServers\[1\].*already used by MCP server "Docs"/);
  });

  it('answers a batch of many tool calls without piling abort listeners on the request (no MaxListenersExceededWarning)', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const batch = Array.from({ length: 20 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'ping', arguments: {} } }));
      const res = await post(gw, batch, { 'x-mcp-servers': 'Docs' });
      expect(res.status).to.equal(200);
      expect(res.body).to.have.length(20);
      for (const reply of res.body) expect(reply.result, JSON.stringify(reply)).to.not.equal(undefined);
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.map((w) => w.name)).to.not.include('MaxListenersExceededWarning');
  });
});

describe('the built-in gateway_proxy name', () => {
  const ADMIN = 'sk-review-admin-CANARY-9f8e';
  let upstream: FakeMcpServer;
  let gw: TestGateway;

  before(async () => {
    upstream = await FakeMcpServer.start({ tools: { m: {} } });
    gw = await testConfig()
      .withKey(ACME_KEY, { id: 'acme-bot' })
      .with({ adminKey: ADMIN, mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('refuses to register an upstream server named or aliased gateway_proxy (x-mcp-servers and <alias>-<tool> would mean two servers)', async () => {
    for (const body of [
      { name: 'gateway_proxy', url: upstream.url, visibility: 'public' },
      { name: 'proxy', alias: 'Gateway_Proxy', url: upstream.url, org: 'acme' },
    ]) {
      const res = await fetch(`${gw.url}/admin/v1/mcp/servers`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const json = (await res.json()) as any;
      expect(res.status, JSON.stringify(json)).to.equal(400);
      expect(json.error.param).to.be.oneOf(['name', 'alias']);
      expect(json.error.message).to.include('gateway_proxy');
    }
  });
});

describe('discovery of a paginated upstream', () => {
  const PAGES = 15;
  let server: import('node:http').Server;
  let url: string;
  let gw: TestGateway;

  before(async () => {
    const http = await import('node:http');
    // a stateless upstream answering raw JSON-RPC, with tools/list in PAGES pages of one tool
    server = http.createServer((req, res) => {
      let text = '';
      req.on('data', (c) => (text += c));
      req.on('end', () => {
        if (req.method !== 'POST') return res.writeHead(405).end();
        const msg = JSON.parse(text);
        if (msg.id === undefined) return res.writeHead(202).end();
        const reply = (result: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
        if (msg.method === 'initialize') return reply({ protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'paged', version: '1' } });
        if (msg.method === 'tools/list') {
          const page = Number(msg.params?.cursor ?? 0);
          return reply({ tools: [{ name: `t${page}`, inputSchema: { type: 'object' } }], ...(page + 1 < PAGES ? { nextCursor: String(page + 1) } : {}) });
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'no' } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}/mcp`;
  });
  after(async () => {
    await gw?.close();
    await new Promise((r) => server.close(r));
  });

  it('follows every page without piling abort listeners on the discovery signal (no MaxListenersExceededWarning)', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      gw = await testConfig().withKey(ACME_KEY, { id: 'acme-bot' }).withMcpServer('paged', url, { org: 'acme' }).with({ mcp: { healthCheckIntervalSeconds: 0 } }).start();
      const list = await post(gw, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'x-mcp-servers': 'paged' });
      expect(list.body.result.tools.map((t: { name: string }) => t.name)).to.deep.equal(Array.from({ length: PAGES }, (_, i) => `t${i}`));
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.map((w) => w.name)).to.not.include('MaxListenersExceededWarning');
  });
});

describe('gateway_proxy beside an upstream server that went down', () => {
  const ADMIN = 'sk-review-admin2-CANARY-7d6c';
  let model: FakeOpenAI;
  let clash: FakeMcpServer;
  let gw: TestGateway;

  before(async () => {
    model = await new FakeOpenAI().start();
    model.script = { kind: 'json', body: chatCompletion('model answer') };
    clash = await FakeMcpServer.start({ toolsOnly: true, tools: { summarize: { handler: () => ({ content: [{ type: 'text', text: 'upstream tool' }] }) } } });
    gw = await testConfig()
      .withKey(ACME_KEY, { id: 'k' })
      .withOpenAI('oai', model, 'sk-provider')
      .withModel('summarize')
      .withMcpServer('tools', clash.url, { org: 'acme', visibility: 'private' })
      .with({ adminKey: ADMIN, mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await model.stop();
  });

  it('calls what tools/list shows: names stay prefixed while the other server is unhealthy (it is still in scope)', async () => {
    const before = await post(gw, { jsonrpc: '2.0', id: 0, method: 'tools/list' });
    expect(before.body.result.tools.map((t: { name: string }) => t.name)).to.deep.equal(['tools-summarize', 'gateway_proxy-summarize']);
    await clash.close();
    const admin = { authorization: `Bearer ${ADMIN}` };
    const servers = (await (await fetch(`${gw.url}/admin/v1/mcp/servers`, { headers: admin })).json()) as any;
    const id = servers.data.find((s: { name: string }) => s.name === 'tools').id;
    const checked = (await (await fetch(`${gw.url}/admin/v1/mcp/servers/${id}/health`, { method: 'POST', headers: admin })).json()) as any;
    expect(checked.health.status).to.equal('unhealthy');
    const list = await post(gw, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(list.body.result.tools.map((t: { name: string }) => t.name)).to.deep.equal(['gateway_proxy-summarize']);
    const call = await post(gw, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'gateway_proxy-summarize', arguments: { prompt: 'x' } } });
    expect(call.body).to.deep.equal({ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'model answer' }] } });
  });
});

describe('a browser MCP client from an allowed origin', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await testConfig()
      .withKey(ACME_KEY, { id: 'k' })
      .with({ server: { allowedOrigins: ['https://app.example'] }, mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
  });
  after(() => gw.close());

  it('may send per-user credentials x-mcp-<alias>-<header> (the preflight allows them), and no other header it asks for', async () => {
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-gateway-api-key, x-mcp-docs-authorization, cookie-monster' },
    });
    expect(res.status).to.equal(204);
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').split(',').map((h) => h.trim());
    expect(allowed).to.include.members(['content-type', 'x-gateway-api-key', 'x-mcp-docs-authorization']);
    expect(allowed).to.not.include('cookie-monster');
  });

  it("may send a 2026-07-28 tool call's Mcp-Param-<Name> headers (the preflight allows them)", async () => {
    // what a browser asks before the 2.x client's tools/call of a tool whose schema marks x-mcp-header: Region
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,mcp-method,mcp-name,mcp-param-region,mcp-protocol-version,x-gateway-api-key' },
    });
    expect(res.status).to.equal(204);
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').split(',').map((h) => h.trim());
    expect(allowed).to.include.members(['content-type', 'mcp-method', 'mcp-name', 'mcp-param-region', 'mcp-protocol-version', 'x-gateway-api-key']);
  });
});
