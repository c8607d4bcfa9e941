import { expect } from 'chai';
import { McpUpstreamPool, type UpstreamTarget } from '../../../../core/apis/mcp/upstream-pool';
import { createStreamableHttpFactory } from '../../../../plugins/mcp-streamable-http';
import { DEFAULT_MCP_TRANSPORT } from '../../../../core/apis/mcp/transports';
import { eventually } from '../../../support/eventually';
import { FakeMcpServer } from '../../../support/fake-mcp-server';
import { GatewayError } from '../../../../core/errors/gateway-error';
import { UpstreamRpcError } from '../../../../core/apis/mcp/upstream-errors';
import { EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js';

const opts = { timeoutMs: 5000 };

describe('core/apis/mcp/upstream-pool', () => {
  let server: FakeMcpServer;
  let pool: McpUpstreamPool;
  const target = (headers: Record<string, string> = {}): UpstreamTarget => ({ id: 's1', name: 'docs', url: server.url, headers });

  beforeEach(() => {
    pool = new McpUpstreamPool(new Map([[DEFAULT_MCP_TRANSPORT, createStreamableHttpFactory({}, { fetch })]]));
  });
  afterEach(async () => {
    await pool.closeAll();
    await server?.close();
  });

  for (const stateful of [false, true]) {
    it(`initializes once and reuses the connection for later calls (${stateful ? 'stateful' : 'stateless'} upstream)`, async () => {
      server = await FakeMcpServer.start({ stateful, tools: { echo: {} } });
      await pool.request(target(), 'tools/list', undefined, opts);
      await pool.request(target(), 'tools/call', { name: 'echo', arguments: { n: 1 } }, opts);
      await pool.request(target(), 'tools/call', { name: 'echo', arguments: { n: 2 } }, opts);
      expect(server.requestsFor('initialize')).to.have.length(1);
      expect(server.requestsFor('tools/call')).to.have.length(2);
    });
  }

  it('shares one connect between concurrent first requests', async () => {
    server = await FakeMcpServer.start({ tools: { echo: {} } });
    await Promise.all([1, 2, 3, 4].map((n) => pool.request(target(), 'tools/call', { name: 'echo', arguments: { n } }, opts)));
    expect(server.requestsFor('initialize')).to.have.length(1);
  });

  it('opens a new session and retries once when a stateful upstream expired the old one (404)', async () => {
    server = await FakeMcpServer.start({ stateful: true, tools: { echo: {} } });
    await pool.request(target(), 'tools/call', { name: 'echo', arguments: { n: 1 } }, opts);
    const firstSession = server.requestsFor('tools/call')[0].headers['mcp-session-id'];
    server.expireSessions();
    const result = await pool.request(target(), 'tools/call', { name: 'echo', arguments: { n: 2 } }, opts);
    expect(result).to.deep.equal({ content: [{ type: 'text', text: '{"n":2}' }] });
    const calls = server.requestsFor('tools/call');
    expect(calls).to.have.length(3); // the refused one, then the retry
    expect(calls[1].headers['mcp-session-id']).to.equal(firstSession);
    expect(calls[2].headers['mcp-session-id']).to.not.equal(firstSession);
    expect(server.requestsFor('initialize')).to.have.length(2);
  });

  it('returns the upstream result as it was sent, including fields the SDK does not know', async () => {
    server = await FakeMcpServer.start({
      tools: { rich: { handler: () => ({ content: [{ type: 'text', text: 'x' }], structuredContent: { a: 1 }, customField: { kept: true } }) as any } },
    });
    const result = await pool.request(target(), 'tools/call', { name: 'rich', arguments: {} }, opts);
    expect(result).to.deep.equal({ content: [{ type: 'text', text: 'x' }], structuredContent: { a: 1 }, customField: { kept: true } });
  });

  it('reports an upstream JSON-RPC error as UpstreamRpcError with the upstream message', async () => {
    server = await FakeMcpServer.start({ tools: {} });
    const err = await pool.request(target(), 'tools/call', { name: 'missing', arguments: {} }, opts).catch((e) => e);
    expect(err).to.be.instanceOf(UpstreamRpcError);
    expect(err.rpcCode).to.equal(-32602);
    // the SDK server itself puts "MCP error <code>: " in the message it sends; we keep the upstream's words
    expect(err.rpcMessage).to.equal('MCP error -32602: Tool missing not found');
  });

  it('names the server, not its URL or credentials, when the upstream is unreachable', async () => {
    server = await FakeMcpServer.start();
    const url = server.url;
    await server.close();
    const err = await pool
      .request({ id: 'x', name: 'docs', url: url.replace('http://', 'http://user:canary-pass@'), headers: { authorization: 'Bearer canary-token' } }, 'tools/list', undefined, opts)
      .catch((e) => e);
    expect(err).to.be.instanceOf(GatewayError);
    expect(err.code).to.equal('mcp_upstream_unreachable');
    expect(err.message).to.equal('MCP server docs is unreachable.');
  });

  it('reports refused credentials (401) with a clear code', async () => {
    server = await FakeMcpServer.start();
    server.failWithStatus = 401;
    const err = await pool.request(target(), 'tools/list', undefined, opts).catch((e) => e);
    expect(err.code).to.equal('mcp_upstream_unauthorized');
    expect(err.status).to.equal(502);
  });

  it('times out a call the upstream does not answer, with mcp_upstream_timeout', async () => {
    server = await FakeMcpServer.start({ tools: { slow: {} } });
    await pool.request(target(), 'tools/list', undefined, opts);
    server.hang = true;
    const err = await pool.request(target(), 'tools/call', { name: 'slow', arguments: {} }, { timeoutMs: 100 }).catch((e) => e);
    expect(err.code).to.equal('mcp_upstream_timeout');
    expect(err.status).to.equal(504);
    // the call's HTTP request is closed, not left holding one of the pool's connections
    await eventually(() => server.requestsFor('tools/call').every((r) => !r.open));
    server.releaseHeld();
  });

  it('lets a long tool call that reports progress run past the call timeout', async () => {
    server = await FakeMcpServer.start({
      sseResponses: true,
      tools: {
        crunch: {
          handler: async (_args, _headers, progress) => {
            // 5 x 400 ms: twice the call timeout in all, each step well inside it
            for (let i = 1; i <= 5; i++) {
              await new Promise((r) => setTimeout(r, 400));
              await progress(i, 5);
            }
            return { content: [{ type: 'text', text: 'done' }] };
          },
        },
      },
    });
    const result = await pool.request(target(), 'tools/call', { name: 'crunch', arguments: {} }, { timeoutMs: 1000 });
    expect(result).to.deep.equal({ content: [{ type: 'text', text: 'done' }] });
  });

  it('stops a call the caller gives up on (499 client_abort) and keeps the connection for the next call', async () => {
    server = await FakeMcpServer.start({ tools: { slow: {}, echo: {} } });
    await pool.request(target(), 'tools/list', undefined, opts);
    server.hang = true;
    const abort = new AbortController();
    const pending = pool.request(target(), 'tools/call', { name: 'slow', arguments: {} }, { ...opts, signal: abort.signal }).catch((e) => e);
    await eventually(() => server.requestsFor('tools/call').length === 1);
    abort.abort();
    const err = await pending;
    await eventually(() => server.requestsFor('tools/call').every((r) => !r.open));
    server.releaseHeld();
    expect(err.code).to.equal('client_abort');
    expect(err.status).to.equal(499);
    await pool.request(target(), 'tools/call', { name: 'echo', arguments: {} }, opts);
    expect(server.requestsFor('initialize')).to.have.length(1);
    expect(server.requestsFor('notifications/cancelled')).to.have.length(1);
  });

  it('closes the event stream of a call the caller gives up on while its tool still runs', async () => {
    server = await FakeMcpServer.start({ sseResponses: true, tools: { stuck: { handler: () => new Promise(() => undefined) }, echo: {} } });
    await pool.request(target(), 'tools/list', undefined, opts);
    const abort = new AbortController();
    const pending = pool.request(target(), 'tools/call', { name: 'stuck', arguments: {} }, { ...opts, signal: abort.signal }).catch((e) => e);
    await eventually(() => server.requestsFor('tools/call').length === 1);
    abort.abort();
    expect((await pending).code).to.equal('client_abort');
    await eventually(() => server.requestsFor('tools/call').every((r) => !r.open));
    expect(await pool.request(target(), 'tools/call', { name: 'echo', arguments: { n: 1 } }, opts)).to.deep.equal({ content: [{ type: 'text', text: '{"n":1}' }] });
  });

  it("closes the event stream of a given-up call whose tool asked the client something under the call's own id (the client's answer is no request of ours)", async () => {
    // a stateful upstream numbers its own requests to the client (a ping, sampling, roots) from 0, as the
    // gateway's client numbers its requests: the answer the client posts carries the upstream's id
    let asked = false;
    server = await FakeMcpServer.start({
      stateful: true,
      sseResponses: true,
      tools: {
        stuck: {
          handler: async (_args, _headers, _progress, extra) => {
            for (let ping = 0; ping <= Number(extra.requestId); ping++) await extra.sendRequest({ method: 'ping' }, EmptyResultSchema);
            asked = true;
            return new Promise(() => undefined);
          },
        },
      },
    });
    await pool.request(target(), 'tools/list', undefined, opts);
    const abort = new AbortController();
    const pending = pool.request(target(), 'tools/call', { name: 'stuck', arguments: {} }, { ...opts, signal: abort.signal }).catch((e) => e);
    const call = await eventually(() => server.requestsFor('tools/call')[0]);
    // every ping answered (the last under the call's id), and each answer's POST done
    await eventually(() => asked && server.requests.every((r) => r.method !== 'POST' || r.rpcMethods.length > 0 || !r.open));
    abort.abort();
    expect((await pending).code).to.equal('client_abort');
    await eventually(() => server.requestsFor('notifications/cancelled').length === 1);
    await eventually(() => !call.open);
  });

  it('still serves a server after more given-up calls to a tool that never answers than its pool has connections', async () => {
    server = await FakeMcpServer.start({ tools: { stuck: { handler: () => new Promise(() => undefined) }, echo: {} } });
    await pool.request(target(), 'tools/list', undefined, opts);
    // 130 > the 128 connections the transport keeps to one server; each call times out
    const given = await Promise.all(Array.from({ length: 130 }, () => pool.request(target(), 'tools/call', { name: 'stuck', arguments: {} }, { timeoutMs: 300 }).catch((e) => e)));
    expect(new Set(given.map((e) => e.code))).to.deep.equal(new Set(['mcp_upstream_timeout']));
    expect(await pool.request(target(), 'tools/call', { name: 'echo', arguments: { n: 2 } }, opts)).to.deep.equal({ content: [{ type: 'text', text: '{"n":2}' }] });
    await eventually(() => server.requestsFor('tools/call').every((r) => !r.open));
  });

  it('sends per-user forwarded headers on a short-lived connection of their own, never on the pooled one', async () => {
    server = await FakeMcpServer.start({ tools: { echo: {} } });
    await pool.request(target({ 'x-api-key': 'stored' }), 'tools/call', { name: 'echo', arguments: {} }, opts);
    await pool.request(target({ 'x-api-key': 'stored' }), 'tools/call', { name: 'echo', arguments: {} }, { ...opts, forwarded: { authorization: 'Bearer alice' } });
    await pool.request(target({ 'x-api-key': 'stored' }), 'tools/call', { name: 'echo', arguments: {} }, opts);
    const calls = server.requestsFor('tools/call');
    expect(calls.map((c) => c.headers.authorization ?? null)).to.deep.equal([null, 'Bearer alice', null]);
    expect(calls.map((c) => c.headers['x-api-key'])).to.deep.equal(['stored', 'stored', 'stored']);
    expect(server.requestsFor('initialize')).to.have.length(2);
  });

  it('reconnects when the server record changes (new headers)', async () => {
    server = await FakeMcpServer.start({ tools: { echo: {} } });
    await pool.request(target({ 'x-api-key': 'old' }), 'tools/call', { name: 'echo', arguments: {} }, opts);
    await pool.request(target({ 'x-api-key': 'new' }), 'tools/call', { name: 'echo', arguments: {} }, opts);
    expect(server.requestsFor('tools/call').map((c) => c.headers['x-api-key'])).to.deep.equal(['old', 'new']);
  });

  it('refuses to connect when the egress guard says no', async () => {
    server = await FakeMcpServer.start();
    const err = await pool.request({ ...target(), beforeConnect: async () => 'url host "127.0.0.1" is a loopback address' }, 'tools/list', undefined, opts).catch((e) => e);
    expect(err.code).to.equal('mcp_egress_refused');
    expect(server.requests).to.have.length(0);
  });
});
