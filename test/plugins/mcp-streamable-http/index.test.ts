import { expect } from 'chai';
import Ajv from 'ajv';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import plugin, { createStreamableHttpFactory } from '../../../plugins/mcp-streamable-http';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { FakeMcpServer } from '../../support/fake-mcp-server';
import { ModernMcpServer } from '../../support/modern-mcp-server';

describe('plugins/mcp-streamable-http', () => {
  let server: FakeMcpServer;
  afterEach(async () => server?.close());

  it('is an mcp-transport plugin with id mcp-streamable-http and API version 1', () => {
    expect(plugin.kind).to.equal('mcp-transport');
    expect(plugin.id).to.equal('mcp-streamable-http');
    expect(plugin.apiVersion).to.equal(1);
  });

  it('has an options schema that accepts its options and rejects unknown or bad ones', () => {
    const validate = new Ajv({ allErrors: true }).compile(plugin.optionsSchema);
    expect(validate({})).to.equal(true);
    expect(validate({ sseMaxRetries: 0, sseInitialDelayMs: 500 })).to.equal(true);
    expect(validate({ httpClient: 'fetch' })).to.equal(true);
    expect(validate({ httpClient: 'curl' })).to.equal(false);
    expect(validate({ sseMaxRetries: -1 })).to.equal(false);
    expect(validate({ retries: 3 })).to.equal(false);
    expect(validate.errors?.[0]?.keyword).to.equal('additionalProperties');
  });

  it('gives the SDK client a transport that sends the target headers on every request (stateless upstream)', async () => {
    server = await FakeMcpServer.start({ tools: { echo: { description: 'Echo back' } } });
    const factory = await plugin.create({}, { fetch } as any);
    const client = new Client({ name: 't', version: '1' });
    await client.connect(await factory.connect({ url: server.url, headers: { authorization: 'Bearer upstream-token', 'x-team': 'blue' } }));
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).to.deep.equal(['echo']);
    await client.close();
    const posts = server.requests.filter((r) => r.method === 'POST');
    expect(posts.map((r) => r.rpcMethods[0])).to.deep.equal(['initialize', 'notifications/initialized', 'tools/list']);
    for (const r of posts) {
      expect(r.headers.authorization).to.equal('Bearer upstream-token');
      expect(r.headers['x-team']).to.equal('blue');
      expect(r.headers['mcp-session-id']).to.equal(undefined);
    }
  });

  it('works over the gateway\'s shared WHATWG fetch too (httpClient: "fetch")', async () => {
    server = await FakeMcpServer.start({ stateful: true, tools: { echo: {} } });
    let used = 0;
    const counting: typeof fetch = (input, init) => {
      used++;
      return fetch(input, init);
    };
    const factory = await plugin.create({ httpClient: 'fetch' }, { fetch: counting } as any);
    const client = new Client({ name: 't', version: '1' });
    await client.connect(await factory.connect({ url: server.url, headers: { 'x-api-key': 'k' } }));
    expect(await client.callTool({ name: 'echo', arguments: { a: 1 } })).to.deep.equal({ content: [{ type: 'text', text: '{"a":1}' }] });
    await client.close();
    expect(used).to.be.greaterThan(2);
    expect(server.requestsFor('tools/call')[0].headers['x-api-key']).to.equal('k');
  });

  it('refuses, as the socket connects, a publicOnly target whose name resolves to an internal address', async () => {
    server = await FakeMcpServer.start({ tools: { echo: {} } });
    const factory = createStreamableHttpFactory({}, { fetch });
    const viaName = server.url.replace('127.0.0.1', 'localhost');
    for (const url of [viaName, server.url]) {
      const client = new Client({ name: 't', version: '1' });
      const err = await client.connect(await factory.connect({ url, headers: {}, publicOnly: true })).catch((e) => e);
      expect(err, url).to.be.instanceOf(Error);
      expect(String(err.message) + String(err.cause?.message ?? ''), url).to.include('is not a public address');
    }
    expect(server.requests).to.have.length(0);
    // the same name is fine for a trusted (config or platform admin) server
    const trusted = new Client({ name: 't', version: '1' });
    await trusted.connect(await factory.connect({ url: viaName, headers: {} }));
    expect((await trusted.listTools()).tools.map((t) => t.name)).to.deep.equal(['echo']);
    await trusted.close();
    await factory.close?.();
  });

  it('gives an SDK 2.x client a 2026-07-28 transport (connectModern) with the target headers, and the same egress rule', async () => {
    const modern = await ModernMcpServer.start();
    const factory = createStreamableHttpFactory({}, { fetch });
    try {
      const client = new ModernClient({ name: 't', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } } as any);
      await client.connect(await factory.connectModern!({ url: modern.url, headers: { authorization: 'Bearer upstream-token' } }));
      expect((await client.listTools()).tools.map((t) => t.name)).to.include('echo');
      await client.close();
      for (const r of modern.received) {
        expect(r.headers.authorization).to.equal('Bearer upstream-token');
        expect(r.headers['mcp-protocol-version']).to.equal('2026-07-28');
        expect(r.headers['mcp-method']).to.equal(r.body.method);
      }
      const before = modern.received.length;
      const refused = new ModernClient({ name: 't', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } } as any);
      const err = await refused.connect(await factory.connectModern!({ url: modern.url.replace('127.0.0.1', 'localhost'), headers: {}, publicOnly: true })).catch((e) => e);
      expect(err).to.be.instanceOf(Error);
      expect(modern.received.length).to.equal(before);
    } finally {
      await factory.close?.();
      await modern.close();
    }
  });

  it('keeps the Mcp-Session-Id a stateful upstream issues and sends it back', async () => {
    server = await FakeMcpServer.start({ stateful: true, tools: { echo: {} } });
    const client = new Client({ name: 't', version: '1' });
    await client.connect(createStreamableHttpFactory({}, { fetch }).connect({ url: server.url, headers: {} }) as any);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(result).to.deep.equal({ content: [{ type: 'text', text: '{"text":"hi"}' }] });
    await client.close();
    const [init, ...rest] = server.requests.filter((r) => r.method === 'POST');
    expect(init.headers['mcp-session-id']).to.equal(undefined);
    const session = rest[0].headers['mcp-session-id'];
    expect(session).to.be.a('string').with.length.greaterThan(10);
    for (const r of rest) expect(r.headers['mcp-session-id']).to.equal(session);
    expect(server.sessionCount).to.equal(1);
  });
});
