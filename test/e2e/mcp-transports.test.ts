import path from 'node:path';
import { expect } from 'chai';
import { FakeMcpServer } from '../support/fake-mcp-server';
import type { McpServerConfig } from '../../core/config/types';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const TRANSPORT_PLUGIN = path.join(__dirname, '..', 'support', 'tagging-transport-plugin.js');
const ADMIN_KEY = 'sk-admin-transports';
const MEMBER_KEY = 'sk-member-transports';

async function rpc(gw: TestGateway, method: string, params?: unknown) {
  const res = await fetch(`${gw.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', 'x-gateway-api-key': MEMBER_KEY },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as any;
}

async function admin(gw: TestGateway, method: string, url: string, body?: unknown) {
  const res = await fetch(`${gw.url}${url}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** the x-transport header of every request the upstream received (undefined: the built-in transport) */
const transportsSeen = (server: FakeMcpServer) => [...new Set(server.requests.map((r) => r.headers['x-transport']))];

describe('MCP transports chosen by config (mcpServers[].transport names a transport plugin)', () => {
  let tagged: FakeMcpServer;
  let plain: FakeMcpServer;
  let gw: TestGateway | undefined;

  beforeEach(async () => {
    tagged = await FakeMcpServer.start({ tools: { search: {} } });
    plain = await FakeMcpServer.start({ tools: { fetch: {} } });
  });
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
    await tagged.close();
    await plain.close();
  });

  const boot = (servers: McpServerConfig[]) =>
    testConfig()
      .withKey(MEMBER_KEY)
      .with({ adminKey: ADMIN_KEY, plugins: [TRANSPORT_PLUGIN], mcpServers: servers, mcp: { healthCheckIntervalSeconds: 0 } })
      .start();

  it('sends each server through the transport plugin it names, the built-in one by default', async () => {
    gw = await boot([
      { name: 'docs', url: tagged.url, transport: 'tagging-http' },
      { name: 'web', url: plain.url },
    ]);
    const called = await rpc(gw, 'tools/call', { name: 'docs-search', arguments: { q: 'x' } });
    expect(called.result.isError ?? false).to.equal(false);
    await rpc(gw, 'tools/call', { name: 'web-fetch', arguments: {} });
    expect(transportsSeen(tagged)).to.deep.equal(['tagging-http']);
    expect(transportsSeen(plain)).to.deep.equal([undefined]);
  });

  it('still accepts "streamable-http", the value the field took before transports were plugins', async () => {
    gw = await boot([{ name: 'web', url: plain.url, transport: 'streamable-http' }]);
    expect((await rpc(gw, 'tools/list')).result.tools.map((t: { name: string }) => t.name)).to.deep.equal(['fetch']);
    const view = await admin(gw, 'GET', '/admin/v1/mcp/servers');
    expect(view.body.data[0].transport).to.equal('mcp-streamable-http');
  });

  it('refuses to boot with an unknown transport id, naming its path and the loaded transports', async () => {
    let error: Error | undefined;
    try {
      gw = await boot([{ name: 'web', url: plain.url }, { name: 'local', url: tagged.url, transport: 'stdio' }]);
    } catch (err) {
      error = err as Error;
    }
    expect(error?.name).to.equal('ConfigError');
    expect(error?.message).to.include('mcpServers[1].transport: unknown MCP transport "stdio" (transport plugins: mcp-streamable-http, mcp-demo, tagging-http)');
  });

  it('lets the management API register, show and change a server transport, and refuses an unknown one', async () => {
    gw = await boot([]);
    const created = await admin(gw, 'POST', '/admin/v1/mcp/servers', { name: 'docs', url: tagged.url, transport: 'tagging-http' });
    expect(created.status).to.equal(201);
    expect(created.body.transport).to.equal('tagging-http');
    await rpc(gw, 'tools/call', { name: 'search', arguments: {} });
    expect(transportsSeen(tagged)).to.deep.equal(['tagging-http']);

    const moved = await admin(gw, 'PATCH', `/admin/v1/mcp/servers/${created.body.id}`, { transport: 'mcp-streamable-http' });
    expect(moved.status).to.equal(200);
    expect(moved.body.transport).to.equal('mcp-streamable-http');
    tagged.requests.length = 0;
    await rpc(gw, 'tools/call', { name: 'search', arguments: {} });
    expect(transportsSeen(tagged)).to.deep.equal([undefined]);

    const refused = await admin(gw, 'POST', '/admin/v1/mcp/servers', { name: 'cli', url: plain.url, transport: 'stdio' });
    expect(refused.status).to.equal(400);
    expect(refused.body.error.param).to.equal('transport');
    expect(refused.body.error.message).to.include('unknown MCP transport "stdio"');
  });
});
