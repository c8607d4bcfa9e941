/**
 * MCP 2026-07-28 beside 2025-11-25, on both sides of the gateway. Three upstreams registered at once: one
 * built with the SDK 2.x that speaks only 2026-07-28, one built with the SDK 1.x (2025-11-25 only) and
 * `@modelcontextprotocol/server-everything`. A 2026-07-28 client (SDK 2.x) and a legacy client (SDK 1.x)
 * go through /mcp to all three, under the same rules.
 */
import { expect } from 'chai';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { FakeMcpServer } from '../support/fake-mcp-server';
import { ModernMcpServer } from '../support/modern-mcp-server';
import { PushyMcpServer } from '../support/pushy-mcp-server';
import { startEverythingServer, type EverythingServer } from '../support/everything-server';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const ADMIN = 'sk-revisions-admin-CANARY-01';
const ACME = 'sk-revisions-acme-CANARY-02';
const ACME_OTHER = 'sk-revisions-acme2-CANARY-03';
const NARROW = 'sk-revisions-narrow-CANARY-04';
const GLOBEX = 'sk-revisions-globex-CANARY-05';
const MODERN = '2026-07-28';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
};

type AnyClient = { kind: 'modern' | 'legacy'; client: any; close(): Promise<void> };

describe('/mcp serves MCP 2026-07-28 and 2025-11-25 to clients and upstreams of either revision', () => {
  let modern: ModernMcpServer;
  let legacy: FakeMcpServer;
  let everything: EverythingServer;
  let pushy: PushyMcpServer;
  let gw: TestGateway;

  before(async () => {
    modern = await ModernMcpServer.start();
    legacy = await FakeMcpServer.start({
      tools: { lookup: { description: 'Look a word up' } },
      prompts: { brief: { description: 'A brief', arguments: [{ name: 'topic', required: true }], text: (a) => `Brief on ${a.topic}` } },
      resources: { 'legacy://readme': { name: 'readme', mimeType: 'text/plain', text: 'legacy readme' } },
    });
    everything = await startEverythingServer();
    pushy = await PushyMcpServer.start();
    gw = await testConfig()
      .withOrg('acme')
      .withOrg('globex')
      .withKey(ACME, { id: 'acme-bot' })
      .withKey(ACME_OTHER, { id: 'acme-other' })
      .withKey(NARROW, { id: 'acme-narrow', mcp: { servers: ['modern', 'legacy'], tools: { modern: ['echo'] } } })
      .withKey(GLOBEX, { org: 'globex', id: 'globex-bot' })
      .withMcpServer('modern', modern.url, { org: 'acme', visibility: 'private', pricePerCall: 0.25 })
      .withMcpServer('legacy', legacy.url, { org: 'acme', visibility: 'private', pricePerCall: 0.1 })
      .withMcpServer('everything', everything.url, { alias: 'ev', visibility: 'public' })
      .withMcpServer('pushy', pushy.url, { org: 'acme', visibility: 'private' })
      .with({
        adminKey: ADMIN,
        mcp: { healthCheckIntervalSeconds: 0 },
        guardrails: [
          { id: 'mask-results', engine: 'pii-mask', phase: 'post', on: ['mcp'], default: true },
          { id: 'no-falcon', engine: 'block', phase: 'pre', on: ['mcp'], default: true, options: { words: ['falcon'] } },
          { id: 'no-condor', engine: 'block', phase: 'post', on: ['mcp'], default: true, options: { words: ['condor'] } },
        ],
      })
      .start();
    // the first listing waits for every server's first discovery
    await raw(ACME, { jsonrpc: '2.0', id: 0, method: 'tools/list' });
  });
  after(async () => {
    await gw?.close();
    await Promise.all([modern?.close(), legacy?.close(), everything?.stop(), pushy?.close()]);
  });

  async function modernClient(key: string, capabilities: Record<string, unknown> = { elicitation: {} }): Promise<AnyClient> {
    const client = new ModernClient({ name: 'modern-e2e', version: '1' }, { capabilities, versionNegotiation: { mode: 'auto' } } as any);
    await client.connect(new ModernTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { 'x-gateway-api-key': `Bearer ${key}` } } }));
    return { kind: 'modern', client, close: () => client.close() };
  }
  async function legacyClient(key: string): Promise<AnyClient> {
    const client = new LegacyClient({ name: 'legacy-e2e', version: '1' });
    await client.connect(new LegacyTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { 'x-gateway-api-key': `Bearer ${key}` } } }));
    return { kind: 'legacy', client, close: () => client.close() };
  }
  const clients = { modern: modernClient, legacy: legacyClient };

  async function raw(key: string | undefined, message: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...(key ? { 'x-gateway-api-key': `Bearer ${key}` } : {}), ...headers },
      body: JSON.stringify(message),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as any) : undefined };
  }
  const modernCall = (id: number, name: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args, _meta: ENVELOPE, ...extra },
  });
  const modernHeaders = (method = 'tools/call') => ({ 'mcp-protocol-version': MODERN, 'mcp-method': method });

  async function logs(model: string) {
    await gw.gateway.services.pipeline.whenSettled(5000);
    return (await gw.gateway.services.requestLog.query({ limit: 500 })).data.filter((e) => e.model === model);
  }

  describe('server/discover', () => {
    it('answers without a key and with one, the same: both revisions, the capabilities, instructions that say it is a gateway', async () => {
      const anonymous = await raw(undefined, { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: ENVELOPE } }, modernHeaders('server/discover'));
      expect(anonymous.status).to.equal(200);
      const result = anonymous.body.result;
      expect(result.supportedVersions).to.deep.equal([MODERN, '2025-11-25']);
      expect(result.capabilities).to.have.keys('tools', 'prompts', 'resources');
      expect(result.instructions).to.match(/MCP gateway/);
      expect(result.resultType).to.equal('complete');
      expect(result._meta['io.modelcontextprotocol/serverInfo']).to.deep.equal({ name: 'model-gateway', version: '0.1.0' });
      const keyed = await raw(ACME, { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: ENVELOPE } }, modernHeaders('server/discover'));
      expect(keyed.body).to.deep.equal(anonymous.body);
      // a key that is sent must still be good, and nothing else is answered without one
      expect((await raw('sk-not-a-key', { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: ENVELOPE } })).status).to.equal(401);
      expect((await raw(undefined, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: ENVELOPE } }, modernHeaders('tools/list'))).status).to.equal(401);
    });

    it('refuses a revision it does not serve with -32022 and the list it does, and a header that contradicts the body with -32020', async () => {
      const envelope = { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' };
      const res = await raw(ACME, { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: envelope } }, { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal(-32022);
      expect(res.body.error.data).to.deep.equal({ supported: [MODERN, '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'], requested: '2099-01-01' });
      const mismatch = await raw(ACME, { jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: ENVELOPE } }, { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call' });
      expect(mismatch.status).to.equal(400);
      expect(mismatch.body.error).to.deep.include({ code: -32020, message: 'The Mcp-Method header (tools/call) does not match the request\'s method (tools/list).' });
    });
  });

  it('refuses a call whose Mcp-Name header names another tool, prompt or resource than its body (-32020), and reaches no upstream', async () => {
    const before = modern.requestsFor('tools/call').length;
    const call = (id: number, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { message: 'routed by name' }, _meta: ENVELOPE } });
    const other = await raw(ACME, call(5, 'modern-echo'), { ...modernHeaders(), 'mcp-name': 'ev-echo' });
    expect(other.status).to.equal(400);
    expect(other.body.error).to.deep.include({ code: -32020, message: "The Mcp-Name header (ev-echo) does not match the request's name (modern-echo)." });
    expect(modern.requestsFor('tools/call').length).to.equal(before);
    const prompt = await raw(ACME, { jsonrpc: '2.0', id: 6, method: 'prompts/get', params: { name: 'modern-greet', arguments: { who: 'x' }, _meta: ENVELOPE } }, { ...modernHeaders('prompts/get'), 'mcp-name': 'legacy-brief' });
    expect(prompt.body.error.code).to.equal(-32020);
    const resource = await raw(ACME, { jsonrpc: '2.0', id: 7, method: 'resources/read', params: { uri: 'modern://notes', _meta: ENVELOPE } }, { ...modernHeaders('resources/read'), 'mcp-name': 'modern://bulletin' });
    expect(resource.body.error.code).to.equal(-32020);
    // the header that agrees, plain or Base64-wrapped as the spec allows, is served
    const plain = await raw(ACME, call(8, 'modern-echo'), { ...modernHeaders(), 'mcp-name': 'modern-echo' });
    expect(plain.body.result.content).to.deep.equal([{ type: 'text', text: 'modern echo: routed by name' }]);
    const wrapped = await raw(ACME, call(9, 'modern-echo'), { ...modernHeaders(), 'mcp-name': `=?base64?${Buffer.from('modern-echo').toString('base64')}?=` });
    expect(wrapped.body.result.content).to.deep.equal([{ type: 'text', text: 'modern echo: routed by name' }]);
  });

  it('refuses a call whose Mcp-Param header disagrees with the argument the tool mirrors in it (-32020), and reaches no upstream', async () => {
    const before = modern.requestsFor('tools/call').length;
    const locate = (id: number, region: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'modern-locate', arguments: { region }, _meta: ENVELOPE } });
    const other = await raw(ACME, locate(10, 'us-east'), { ...modernHeaders(), 'mcp-name': 'modern-locate', 'mcp-param-region': 'eu-west' });
    expect(other.status).to.equal(400);
    expect(other.body.error).to.deep.include({ code: -32020, message: 'The Mcp-Param-Region header (eu-west) does not match the argument region (us-east).' });
    expect(modern.requestsFor('tools/call').length).to.equal(before);
    // the header that agrees, plain or Base64-wrapped, is served
    const plain = await raw(ACME, locate(11, 'eu-west'), { ...modernHeaders(), 'mcp-param-region': 'eu-west' });
    expect(plain.body.result.content).to.deep.equal([{ type: 'text', text: 'located in eu-west' }]);
    const wrapped = await raw(ACME, locate(12, 'eu-west'), { ...modernHeaders(), 'Mcp-Param-Region': `=?base64?${Buffer.from('eu-west').toString('base64')}?=` });
    expect(wrapped.body.result.content).to.deep.equal([{ type: 'text', text: 'located in eu-west' }]);
  });

  it('learns each upstream\'s revision and shows it on the server record', async () => {
    const servers = (await fetch(`${gw.url}/admin/v1/mcp/servers`, { headers: { authorization: `Bearer ${ADMIN}` } }).then((r) => r.json())) as any;
    const revision = (name: string) => servers.data.find((s: any) => s.name === name).health.protocolVersion;
    expect(revision('modern')).to.equal(MODERN);
    expect(revision('legacy')).to.equal('2025-11-25');
    expect(revision('everything')).to.equal('2025-11-25');
    // the modern upstream was spoken to in 2026-07-28 only: discover, then enveloped requests
    expect(modern.requestsFor('initialize')).to.have.length(0);
    const listed = modern.requestsFor('tools/list')[0];
    expect(listed.headers['mcp-protocol-version']).to.equal(MODERN);
    expect(listed.body.params._meta['io.modelcontextprotocol/protocolVersion']).to.equal(MODERN);
  });

  for (const kind of ['modern', 'legacy'] as const) {
    describe(`a ${kind === 'modern' ? '2026-07-28 client (SDK 2.x)' : '2025-11-25 client (SDK 1.x)'}`, () => {
      it('lists and calls tools on all three upstreams, reads resources and gets prompts', async () => {
        const c = await clients[kind](ACME);
        try {
          if (kind === 'modern') expect(c.client.getNegotiatedProtocolVersion()).to.equal(MODERN);
          const { tools } = await c.client.listTools();
          const names = tools.map((t: any) => t.name);
          expect(names).to.include.members(['modern-echo', 'modern-ask', 'legacy-lookup', 'ev-echo']);
          const modernEcho = await c.client.callTool({ name: 'modern-echo', arguments: { message: `hello from ${kind}` } });
          expect(modernEcho.content).to.deep.equal([{ type: 'text', text: `modern echo: hello from ${kind}` }]);
          const legacyLookup = await c.client.callTool({ name: 'legacy-lookup', arguments: { word: kind } });
          expect(legacyLookup.content).to.deep.equal([{ type: 'text', text: JSON.stringify({ word: kind }) }]);
          const evEcho = await c.client.callTool({ name: 'ev-echo', arguments: { message: kind } });
          expect(evEcho.content).to.deep.equal([{ type: 'text', text: `Echo: ${kind}` }]);

          const { resources } = await c.client.listResources();
          const uris = resources.map((r: any) => r.uri);
          expect(uris).to.include.members(['modern://notes', 'legacy://readme']);
          expect((await c.client.readResource({ uri: 'modern://notes' })).contents[0].text).to.equal('modern notes');
          expect((await c.client.readResource({ uri: 'legacy://readme' })).contents[0].text).to.equal('legacy readme');
          const evResource = uris.find((u: string) => !u.startsWith('modern://') && u !== 'legacy://readme');
          expect((await c.client.readResource({ uri: evResource })).contents[0].uri).to.equal(evResource);

          const { prompts } = await c.client.listPrompts();
          expect(prompts.map((p: any) => p.name)).to.include.members(['modern-greet', 'legacy-brief']);
          expect((await c.client.getPrompt({ name: 'modern-greet', arguments: { who: kind } })).messages[0].content.text).to.equal(`Hello ${kind} from the modern server`);
          expect((await c.client.getPrompt({ name: 'legacy-brief', arguments: { topic: kind } })).messages[0].content.text).to.equal(`Brief on ${kind}`);
          const evPrompt = prompts.find((p: any) => p.name.startsWith('ev-') && !(p.arguments ?? []).some((a: any) => a.required));
          expect((await c.client.getPrompt({ name: evPrompt.name, arguments: {} })).messages.length).to.be.greaterThan(0);
        } finally {
          await c.close();
        }
      });

      it("calls a 2026-07-28 upstream's tool whose argument its schema mirrors as a header (x-mcp-header: Mcp-Param-Region)", async () => {
        const c = await clients[kind](ACME);
        try {
          const located = await c.client.callTool({ name: 'modern-locate', arguments: { region: `eu-${kind}` } });
          expect(located.isError).to.not.equal(true);
          expect(located.content).to.deep.equal([{ type: 'text', text: `located in eu-${kind}` }]);
          const received = modern.requestsFor('tools/call').filter((r) => r.body.params.name === 'locate').at(-1);
          expect(received?.headers['mcp-param-region']).to.equal(`eu-${kind}`);
        } finally {
          await c.close();
        }
      });

      it(kind === 'modern' ? 'lists a 2026-07-28 tool whose structured output is a list, and calls it' : 'lists every tool but a 2026-07-28 one whose structured output is a list, which 2025-11-25 cannot carry', async () => {
        const c = await clients[kind](ACME);
        try {
          const names = (await c.client.listTools()).tools.map((t: any) => t.name);
          expect(names).to.include.members(['modern-echo', 'legacy-lookup', 'ev-echo']);
          if (kind === 'legacy') {
            expect(names).to.not.include('modern-tags');
            // nor called by name: it would answer a result this client refuses, charged all the same
            const charged = async () => (await logs('MCP: modern-tags')).filter((e) => e.cost > 0).length;
            const before = await charged();
            const refused = await c.client.callTool({ name: 'modern-tags', arguments: {} }).then(
              (r: any) => r,
              (e: any) => e,
            );
            expect(String(refused.message ?? JSON.stringify(refused))).to.include('Unknown tool: modern-tags');
            expect(await charged()).to.equal(before);
            return;
          }
          expect(names).to.include('modern-tags');
          expect((await c.client.callTool({ name: 'modern-tags', arguments: {} })).structuredContent).to.deep.equal(['red', 'blue']);
        } finally {
          await c.close();
        }
      });

      it('keeps organisation scope and key restrictions', async () => {
        const globex = await clients[kind](GLOBEX);
        try {
          const names = (await globex.client.listTools()).tools.map((t: any) => t.name);
          expect(names).to.include('echo'); // server-everything alone: plain names
          expect(names.some((n: string) => n.includes('modern') || n.includes('lookup'))).to.equal(false);
          const refused = await globex.client.callTool({ name: 'modern-echo', arguments: { message: 'x' } }).then(
            (r: any) => r,
            (e: any) => e,
          );
          expect(String(refused.message ?? JSON.stringify(refused))).to.include('Unknown tool: modern-echo');
        } finally {
          await globex.close();
        }
        const narrow = await clients[kind](NARROW);
        try {
          const names = (await narrow.client.listTools()).tools.map((t: any) => t.name);
          expect(names).to.include.members(['modern-echo', 'legacy-lookup']);
          expect(names).to.not.include('modern-ask');
          expect(names.some((n: string) => n.startsWith('ev-'))).to.equal(false);
          const refused = await narrow.client.callTool({ name: 'modern-ask', arguments: {} }).then(
            (r: any) => r,
            (e: any) => e,
          );
          expect(String(refused.message ?? JSON.stringify(refused))).to.include('Unknown tool: modern-ask');
        } finally {
          await narrow.close();
        }
      });

      it('runs the guardrails and charges the fee, logged like any tool call', async () => {
        const c = await clients[kind](ACME);
        try {
          const blocked = await c.client.callTool({ name: 'modern-echo', arguments: { message: `project falcon ${kind}` } });
          expect(blocked.isError).to.equal(true);
          expect(blocked.content[0].text).to.match(/blocked/i);
          const masked = await c.client.callTool({ name: 'modern-echo', arguments: { message: `mail ${kind}@example.com` } });
          expect(masked.content[0].text).to.equal('modern echo: mail [EMAIL]');
          const legacyMasked = await c.client.callTool({ name: 'legacy-lookup', arguments: { mail: `${kind}@example.com` } });
          expect(legacyMasked.content[0].text).to.equal('{"mail":"[EMAIL]"}');
        } finally {
          await c.close();
        }
        // the upstream never saw the blocked text
        expect(JSON.stringify(modern.requestsFor('tools/call').map((r) => r.body))).to.not.include(`falcon ${kind}`);
        const entries = (await logs('MCP: modern-echo')).filter((e) => e.keyId === 'acme-bot');
        expect(entries.some((e) => e.status === 200 && e.cost === 0.25)).to.equal(true);
        expect(entries.some((e) => e.errorCode === 'guardrail_blocked' && e.cost === 0)).to.equal(true);
        expect((await logs('MCP: legacy-lookup')).some((e) => e.cost === 0.1)).to.equal(true);
      });

      it('relays progress notifications while the tool runs, before the result', async () => {
        const c = await clients[kind](ACME);
        const seen: string[] = [];
        const onprogress = (p: any) => {
          seen.push(`progress ${p.progress}/${p.total} ${p.message}`);
          // the tool waits after its first notification until this client has seen it
          if (p.progress === 1) modern.releaseCrunch();
        };
        try {
          const params = { name: 'modern-crunch', arguments: {} };
          const result = kind === 'modern' ? await c.client.callTool(params, { onprogress }) : await c.client.callTool(params, undefined, { onprogress });
          seen.push(`result ${result.content[0].text}`);
        } finally {
          await c.close();
        }
        expect(seen).to.deep.equal(['progress 1/3 step 1', 'progress 2/3 step 2', 'progress 3/3 step 3', 'result crunched']);
      });

      it('runs the result guardrails on progress messages: a masked one goes out masked, a blocked one fails the call', async () => {
        const c = await clients[kind](ACME);
        const seen: string[] = [];
        const onprogress = (p: any) => seen.push(`${p.progress}/${p.total} ${p.message}`);
        const report = (messages: string[]) => {
          const params = { name: 'modern-report', arguments: { messages } };
          return kind === 'modern' ? c.client.callTool(params, { onprogress }) : c.client.callTool(params, undefined, { onprogress });
        };
        try {
          const masked = await report([`mailing ${kind}@example.com`, 'done']);
          expect(masked.content).to.deep.equal([{ type: 'text', text: 'reported' }]);
          expect(seen).to.deep.equal(['1/2 mailing [EMAIL]', '2/2 done']);
          seen.length = 0;
          const blocked = await report(['starting', `project condor ${kind}`, 'after']);
          expect(blocked.isError).to.equal(true);
          expect(blocked.content[0].text).to.match(/blocked/i);
          expect(JSON.stringify(blocked)).to.not.include('condor');
          expect(seen).to.deep.equal(['1/3 starting']);
        } finally {
          await c.close();
        }
        const entries = (await logs('MCP: modern-report')).filter((e) => e.keyId === 'acme-bot');
        expect(entries.some((e) => e.errorCode === 'guardrail_blocked')).to.equal(true);
        // the progress and the result were checked under one record per guardrail
        const ok = entries.find((e) => e.status === 200) as any;
        expect(ok.details.guardrails.filter((g: any) => g.id === 'mask-results')).to.deep.equal([{ id: 'mask-results', phase: 'post', verdict: 'mask', findings: ['EMAIL'] }]);
      });
    });
  }

  describe('input requests (elicitation) from a 2026-07-28 upstream', () => {
    it('round-trips an elicitation to a 2026-07-28 client and back to the same upstream, charging the call once', async () => {
      const before = modern.requestsFor('tools/call').length;
      const c = await modernClient(ACME_OTHER);
      const asked: any[] = [];
      c.client.setRequestHandler('elicitation/create', async (request: any) => {
        asked.push(request.params);
        return { action: 'accept', content: { colour: 'teal' } };
      });
      try {
        const result = await c.client.callTool({ name: 'modern-ask', arguments: {} });
        expect(result.content).to.deep.equal([{ type: 'text', text: 'you chose teal' }]);
      } finally {
        await c.close();
      }
      expect(asked).to.have.length(1);
      expect(asked[0].message).to.equal('Which colour?');
      const calls = modern.requestsFor('tools/call').slice(before);
      expect(calls).to.have.length(2);
      // the upstream got its own state back, not the gateway's
      const upstreamState = calls[1].body.params.requestState as string;
      expect(calls[1].body.params.inputResponses).to.deep.equal({ colour: { action: 'accept', content: { colour: 'teal' } } });
      expect(JSON.parse(Buffer.from(upstreamState.split('.')[1], 'base64url').toString()).p).to.deep.equal({ step: 'asked' });
      const entries = (await logs('MCP: modern-ask')).filter((e) => e.keyId === 'acme-other');
      expect(entries).to.have.length(2);
      expect(entries.reduce((sum, e) => sum + e.cost, 0)).to.equal(0.25);
    });

    it('hands the client a state signed by the gateway, and refuses a forged, altered or borrowed one', async () => {
      const first = await raw(ACME, modernCall(10, 'modern-ask', {}), modernHeaders());
      expect(first.body.result.resultType).to.equal('input_required');
      expect(first.body.result.inputRequests.colour.method).to.equal('elicitation/create');
      const state = first.body.result.requestState as string;
      const upstreamCalls = modern.requestsFor('tools/call').length;
      const answers = { inputResponses: { colour: { action: 'accept', content: { colour: 'red' } } } };

      const forged = await raw(ACME, modernCall(11, 'modern-ask', {}, { ...answers, requestState: 'v1.eyJwIjp7fX0.forged' }), modernHeaders());
      expect(forged.body.error).to.deep.include({ code: -32602, message: 'params.requestState was not issued by this gateway (or has expired): call the tool again without it.' });
      const [v, payload, mac] = state.split('.');
      const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString());
      decoded.p.serverId = 'another-server';
      const altered = `${v}.${Buffer.from(JSON.stringify(decoded)).toString('base64url')}.${mac}`;
      const alteredRes = await raw(ACME, modernCall(12, 'modern-ask', {}, { ...answers, requestState: altered }), modernHeaders());
      expect(alteredRes.body.error.message).to.equal('params.requestState was not issued by this gateway (or has expired): call the tool again without it.');
      const borrowed = await raw(ACME_OTHER, modernCall(13, 'modern-ask', {}, { ...answers, requestState: state }), modernHeaders());
      expect(borrowed.body.error.message).to.equal('params.requestState was issued for another call, not tools/call modern-ask with this key.');
      const redirected = await raw(ACME, modernCall(14, 'modern-echo', { message: 'x' }, { ...answers, requestState: state }), modernHeaders());
      expect(redirected.body.error.message).to.equal('params.requestState was issued for another call, not tools/call modern-echo with this key.');
      const unsigned = await raw(ACME, modernCall(15, 'modern-ask', {}, answers), modernHeaders());
      expect(unsigned.body.error.message).to.equal('params.inputResponses needs the requestState the gateway returned with the input requests.');
      expect(modern.requestsFor('tools/call').length).to.equal(upstreamCalls); // none reached the upstream

      const good = await raw(ACME, modernCall(16, 'modern-ask', {}, { ...answers, requestState: state }), modernHeaders());
      expect(good.body.result).to.deep.include({ resultType: 'complete', content: [{ type: 'text', text: 'you chose red' }] });
    });

    it('runs the result guardrails on the input requests it relays: a masked message goes out masked, a blocked one fails the call', async () => {
      const c = await modernClient(ACME_OTHER);
      const asked: string[] = [];
      c.client.setRequestHandler('elicitation/create', async (request: any) => {
        asked.push(request.params.message, request.params.requestedSchema.properties.ok.description);
        return { action: 'accept', content: { ok: true } };
      });
      try {
        const masked = await c.client.callTool({ name: 'modern-confide', arguments: { message: 'Send the report to ann@example.com?' } });
        expect(masked.content).to.deep.equal([{ type: 'text', text: 'confided: accept' }]);
        expect(asked).to.deep.equal(['Send the report to [EMAIL]?', 'Confirm: Send the report to [EMAIL]?']);
        const blocked = await c.client.callTool({ name: 'modern-confide', arguments: { message: 'Approve project condor?' } });
        expect(blocked.isError).to.equal(true);
        expect(blocked.content[0].text).to.match(/blocked/i);
        expect(asked).to.have.length(2);
      } finally {
        await c.close();
      }
    });

    it("runs the result guardrails on the titles of a relayed elicitation's options (oneOf, items.anyOf, enumNames)", async () => {
      const c = await modernClient(ACME_OTHER);
      const shown: any[] = [];
      c.client.setRequestHandler('elicitation/create', async (request: any) => {
        shown.push(request.params.requestedSchema.properties);
        return { action: 'decline' };
      });
      try {
        const masked = await c.client.callTool({ name: 'modern-choose', arguments: { label: 'ann@example.com' } });
        expect(masked.content).to.deep.equal([{ type: 'text', text: 'picked: decline' }]);
        expect(shown).to.have.length(1);
        expect(shown[0].one.oneOf).to.deep.equal([{ const: 'a', title: 'Send to [EMAIL]' }, { const: 'b', title: 'Keep it' }]);
        expect(shown[0].many.items.anyOf).to.deep.equal([{ const: 'c', title: 'Copy [EMAIL]' }, { const: 'd', title: 'Drop it' }]);
        expect(shown[0].old).to.deep.include({ enum: ['e', 'f'], enumNames: ['Email [EMAIL]', 'Forget it'] });
        const blocked = await c.client.callTool({ name: 'modern-choose', arguments: { label: 'project condor' } });
        expect(blocked.isError).to.equal(true);
        expect(blocked.content[0].text).to.match(/blocked/i);
        expect(shown).to.have.length(1);
      } finally {
        await c.close();
      }
    });

    it('runs the request guardrails on the answers a client sends back, as on tool arguments: a blocked answer never reaches the upstream', async () => {
      const c = await modernClient(ACME_OTHER);
      c.client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { colour: 'falcon blue' } }));
      try {
        const blocked = await c.client.callTool({ name: 'modern-ask', arguments: {} });
        expect(blocked.isError).to.equal(true);
        expect(blocked.content[0].text).to.match(/blocked/i);
      } finally {
        await c.close();
      }
      expect(JSON.stringify(modern.requestsFor('tools/call').map((r) => r.body))).to.not.include('falcon blue');
    });

    it('declares to the upstream only what the client can answer, so a client that cannot gets a tool error saying what was asked', async () => {
      const noCapability = await modernClient(ACME, {});
      const old = await legacyClient(ACME);
      const asked = "Cannot request input 'colour' (elicitation/create): the request's client capabilities do not declare the required capability";
      try {
        const modernResult = await noCapability.client.callTool({ name: 'modern-ask', arguments: {} });
        expect(modernResult.isError).to.equal(true);
        expect(modernResult.content[0].text).to.equal(asked);
        const legacyResult = await old.client.callTool({ name: 'modern-ask', arguments: {} });
        expect(legacyResult.isError).to.equal(true);
        expect(legacyResult.content[0].text).to.equal(asked);
        // an upstream that asks anyway: the gateway says what was asked
        const pushedModern = await noCapability.client.callTool({ name: 'pushy-confirm', arguments: {} });
        expect(pushedModern).to.deep.include({ isError: true });
        expect(pushedModern.content[0].text).to.equal('The MCP server pushy asked for input before it can answer (elicitation/create: Proceed?), and this client did not declare the capability to answer it.');
        const pushedLegacy = await old.client.callTool({ name: 'pushy-confirm', arguments: {} });
        expect(pushedLegacy.content[0].text).to.equal('The MCP server pushy asked for input before it can answer (elicitation/create: Proceed?), and this client speaks an MCP revision older than 2026-07-28.');
        // a prompt's is a JSON-RPC error, whose quoted question passes the result guardrails too
        const prompt = await old.client.getPrompt({ name: 'pushy-release', arguments: { owner: 'ann@example.com' } }).then(
          (r: any) => r,
          (e: any) => e,
        );
        expect(prompt.message).to.equal('MCP error -32602: The MCP server pushy asked for input before it can answer (elicitation/create: Release for [EMAIL]?), and this client speaks an MCP revision older than 2026-07-28.');
      } finally {
        await Promise.all([noCapability.close(), old.close()]);
      }
    });
  });

  it('marks a resource read private and uncached whatever cache hints the upstream gave it (what a key reads depends on the key)', async () => {
    const read = await raw(ACME, { jsonrpc: '2.0', id: 30, method: 'resources/read', params: { uri: 'modern://bulletin', _meta: ENVELOPE } }, modernHeaders('resources/read'));
    expect(read.body.result.contents).to.deep.equal([{ uri: 'modern://bulletin', text: 'write to [EMAIL]' }]);
    expect(read.body.result).to.deep.include({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
  });

  it('runs the result guardrails on structured output that is a bare string (2026-07-28 allows any JSON value)', async () => {
    const called = await raw(ACME, modernCall(36, 'modern-motto', {}), modernHeaders());
    expect(called.body.result.content).to.deep.equal([{ type: 'text', text: 'write to [EMAIL]' }]);
    expect(called.body.result.structuredContent).to.equal('write to [EMAIL]');
  });

  it("never relays an upstream's public cache hints on a tool result or a prompt (one key's guarded answer)", async () => {
    const called = await raw(ACME, modernCall(33, 'modern-quote', {}), modernHeaders());
    expect(called.body.result.content).to.deep.equal([{ type: 'text', text: 'your price: 42' }]);
    expect(called.body.result.resultType).to.equal('complete');
    expect(called.body.result).to.not.have.any.keys('ttlMs', 'cacheScope');
    const prompt = await raw(ACME, { jsonrpc: '2.0', id: 34, method: 'prompts/get', params: { name: 'modern-offer', arguments: {}, _meta: ENVELOPE } }, modernHeaders('prompts/get'));
    expect(prompt.body.result.messages).to.deep.equal([{ role: 'user', content: { type: 'text', text: 'your offer: 42' } }]);
    expect(prompt.body.result).to.not.have.any.keys('ttlMs', 'cacheScope');
  });

  it("gives a 2025-11-25 client none of a 2026-07-28 upstream's cache hints or server info (a public hour on one key's answer)", async () => {
    const read = await raw(ACME, { jsonrpc: '2.0', id: 31, method: 'resources/read', params: { uri: 'modern://bulletin' } });
    expect(read.body.result.contents).to.deep.equal([{ uri: 'modern://bulletin', text: 'write to [EMAIL]' }]);
    expect(read.body.result).to.not.have.any.keys('ttlMs', 'cacheScope', 'resultType');
    expect(read.body.result._meta?.['io.modelcontextprotocol/serverInfo']).to.equal(undefined);
    const called = await raw(ACME, { jsonrpc: '2.0', id: 32, method: 'tools/call', params: { name: 'modern-echo', arguments: { message: 'hi' } } });
    expect(called.body.result.content).to.deep.equal([{ type: 'text', text: 'modern echo: hi' }]);
    expect(called.body.result._meta?.['io.modelcontextprotocol/serverInfo']).to.equal(undefined);
    // a prompt that calls itself public for an hour: exactly the 2025-11-25 result, nothing of 2026-07-28
    const prompt = await raw(ACME, { jsonrpc: '2.0', id: 35, method: 'prompts/get', params: { name: 'modern-offer', arguments: {} } });
    expect(prompt.body.result).to.deep.equal({ messages: [{ role: 'user', content: { type: 'text', text: 'your offer: 42' } }] });
  });

  it('streams progress as SSE to a raw client that sent a token, the result last', async () => {
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': `Bearer ${ACME}`, ...modernHeaders() },
      body: JSON.stringify(modernCall(20, 'modern-crunch', {}, { _meta: { ...ENVELOPE, progressToken: 'tok-1' } })),
    });
    expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
    // read the stream as it comes: the tool only finishes once the first notification reached us
    let text = '';
    const decoder = new TextDecoder();
    for await (const chunk of res.body as any) {
      text += decoder.decode(chunk, { stream: true });
      if (text.includes('"progress":1')) modern.releaseCrunch();
    }
    const events = text
      .split('\n\n')
      .filter((e) => e.startsWith('event: message'))
      .map((e) => JSON.parse(e.split('\ndata: ')[1]));
    expect(events.map((e) => e.method ?? `result ${e.result.content[0].text}`)).to.deep.equal(['notifications/progress', 'notifications/progress', 'notifications/progress', 'result crunched']);
    expect(events[0].params).to.deep.equal({ progressToken: 'tok-1', progress: 1, total: 3, message: 'step 1' });
  });
});

describe('/mcp 2026-07-28 input requests: two organisations each with a key named bot', () => {
  const ACME_BOT = 'sk-revisions-acme-bot-CANARY-11';
  const GLOBEX_BOT = 'sk-revisions-globex-bot-CANARY-12';
  let modern: ModernMcpServer;
  let gw: TestGateway;

  before(async () => {
    modern = await ModernMcpServer.start();
    gw = await testConfig()
      .withOrg('acme')
      .withOrg('globex')
      .withKey(ACME_BOT, { id: 'bot' })
      .withKey(GLOBEX_BOT, { org: 'globex', id: 'bot' })
      .withMcpServer('modern', modern.url, { visibility: 'public' })
      .with({ mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
  });
  after(async () => {
    await gw?.close();
    await modern?.close();
  });

  async function call(key: string, id: number, extra: Record<string, unknown> = {}) {
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-gateway-api-key': `Bearer ${key}`, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'ask', arguments: {}, _meta: ENVELOPE, ...extra } }),
    });
    return (await res.json()) as any;
  }

  it("refuses one organisation's state when the other organisation's key of the same id echoes it", async () => {
    const first = await call(GLOBEX_BOT, 1);
    expect(first.result.resultType).to.equal('input_required');
    const state = first.result.requestState as string;
    const upstreamCalls = modern.requestsFor('tools/call').length;
    const answers = { inputResponses: { colour: { action: 'accept', content: { colour: 'red' } } } };

    const borrowed = await call(ACME_BOT, 2, { ...answers, requestState: state });
    expect(borrowed.error?.message).to.equal('params.requestState was issued for another call, not tools/call ask with this key.');
    expect(modern.requestsFor('tools/call').length).to.equal(upstreamCalls);

    const own = await call(GLOBEX_BOT, 3, { ...answers, requestState: state });
    expect(own.result).to.deep.include({ resultType: 'complete', content: [{ type: 'text', text: 'you chose red' }] });
  });
});
