/**
 * /mcp takes the key as `Authorization: Bearer <key>` too, the one header many MCP clients can set
 * (issue 14); `x-gateway-api-key` wins when both are sent. Driven by the MCP SDK client and plain fetch.
 */
import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FakeMcpServer } from '../support/fake-mcp-server';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const KEY = 'sk-mcp-bearer-0001';
const OTHER_KEY = 'sk-mcp-bearer-0002';

describe('/mcp with Authorization: Bearer (MCP SDK client and fetch)', () => {
  let docs: FakeMcpServer;
  let gw: TestGateway;

  const rpc = async (headers: Record<string, string>) => {
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  before(async () => {
    docs = await FakeMcpServer.start({ tools: { search: { handler: () => ({ content: [{ type: 'text', text: 'found' }] }) } } });
    gw = await testConfig()
      .withOrg('acme')
      .withOrg('globex')
      .withKey(KEY, { id: 'reader', org: 'acme' })
      // a key of another organisation: its tools/list is empty, so which key signed in shows
      .withKey(OTHER_KEY, { id: 'outsider', org: 'globex' })
      .withMcpServer('docs', docs.url, { org: 'acme' })
      .start();
  });
  after(async () => {
    await gw.close();
    await docs.close();
  });

  it('lists and calls tools for a standard MCP client that sends only Authorization: Bearer', async () => {
    const client = new Client({ name: 'bearer-only', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${KEY}` } } }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).to.deep.equal(['search']);
      const result = await client.callTool({ name: 'search', arguments: {} });
      expect(result.content).to.deep.equal([{ type: 'text', text: 'found' }]);
    } finally {
      await client.close();
    }
    const page = await gw.gateway.services.requestLog.query({ limit: 1 });
    expect(page.data[0]).to.include({ keyId: 'reader', model: 'MCP: search', status: 200 });
  });

  it('refuses an unknown Bearer key with a JSON-RPC 401', async () => {
    const res = await rpc({ authorization: 'Bearer sk-unknown' });
    expect(res.status).to.equal(401);
    expect(res.body).to.deep.equal({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'Invalid API key.', data: { code: 'invalid_api_key' } } });
  });

  it('signs in with x-gateway-api-key when both headers are sent, even when the Bearer key is valid too', async () => {
    const gatewayWins = await rpc({ 'x-gateway-api-key': `Bearer ${KEY}`, authorization: `Bearer ${OTHER_KEY}` });
    expect(gatewayWins.status).to.equal(200);
    expect(gatewayWins.body.result.tools.map((t: { name: string }) => t.name)).to.deep.equal(['search']);
    const otherWins = await rpc({ 'x-gateway-api-key': `Bearer ${OTHER_KEY}`, authorization: `Bearer ${KEY}` });
    expect(otherWins.body.result.tools).to.deep.equal([]);

    const wrongGatewayKey = await rpc({ 'x-gateway-api-key': 'Bearer sk-unknown', authorization: `Bearer ${KEY}` });
    expect(wrongGatewayKey.status).to.equal(401);
    expect(wrongGatewayKey.body.error.code).to.equal(-32001);
  });
});
