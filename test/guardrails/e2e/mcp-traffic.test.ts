import path from 'node:path';
import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FakeMcpServer } from '../../support/fake-mcp-server';
import { eventually } from '../../support/eventually';
import { guardrailGate } from '../fixtures/gated-guardrail';
import type { TestGateway } from '../../support/start-gateway';
import { testConfig } from '../../support/test-config';

const EMAIL = 'jane.roe@example.org';
const CARD = '4111 1111 1111 1111';
const PHONE = '+44 20 7946 0958';
const KEYS = { plain: 'sk-mcp-plain-0001', strict: 'sk-mcp-strict-0002', fragile: 'sk-mcp-fragile-0003', lenient: 'sk-mcp-lenient-0004' };

describe('guardrails on MCP traffic (MCP SDK client and raw JSON-RPC, SDK-built upstream)', () => {
  let crm: FakeMcpServer;
  let gw: TestGateway;
  /** what the upstream tools were called with */
  const seen: Record<string, unknown>[] = [];
  /** upstream tool -> the name the gateway lists it under */
  const names: Record<string, string> = {};

  const rpcCall = async (key: keyof typeof KEYS, name: string, args: Record<string, unknown>) => {
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-gateway-api-key': `Bearer ${KEYS[key]}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  async function sdkClient(key: keyof typeof KEYS): Promise<Client> {
    const client = new Client({ name: 'guardrail-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { 'x-gateway-api-key': `Bearer ${KEYS[key]}` } } }));
    return client;
  }

  before(async () => {
    crm = await FakeMcpServer.start({
      tools: {
        lookup: {
          handler: (args) => {
            seen.push(args);
            return {
              content: [{ type: 'text', text: `Customer: Jane Roe <${EMAIL}>, card ${CARD}` }],
              structuredContent: { name: 'Jane Roe', contact: { email: EMAIL, phones: [PHONE] }, orders: 3 },
            };
          },
        },
        echo: {
          handler: (args) => {
            seen.push(args);
            return { content: [{ type: 'text', text: JSON.stringify(args) }] };
          },
        },
        memo: { handler: () => ({ content: [{ type: 'text', text: 'Quarterly numbers. INTERNAL USE ONLY. Do not share.' }] }) },
        profile: {
          handler: () => {
            const profile = { note: `Hi,\n${EMAIL}`, visits: 3 };
            return { content: [{ type: 'text', text: JSON.stringify(profile) }], structuredContent: profile };
          },
        },
        card: {
          handler: () => ({
            content: [
              { type: 'text', text: 'Found one customer.', _meta: { 'example.com/source': `crm row of ${EMAIL}` } },
              { type: 'resource_link', uri: 'crm://customers/42', name: 'customer-42', title: `Jane Roe <${EMAIL}>`, description: `Call ${PHONE}` },
            ],
            _meta: { 'example.com/contact': { email: EMAIL, phones: [PHONE] }, 'example.com/rows': 1 },
          }),
        },
      },
      prompts: {
        followup: {
          text: () => 'Write a follow-up to the customer.',
          getExtra: { description: `Follow-up to ${EMAIL}`, _meta: { 'example.com/owner': EMAIL } },
        },
      },
      resources: {
        'crm://notes/42': { name: 'notes', mimeType: 'text/plain', text: `Call back on ${PHONE} or mail ${EMAIL}.`, asBlob: true },
      },
    });
    gw = await testConfig()
      .withKey(KEYS.plain, { id: 'plain' })
      .withKey(KEYS.strict, { id: 'strict', guardrails: ['no-drop', 'no-internal'] })
      .withKey(KEYS.fragile, { id: 'fragile', guardrails: ['broken-closed'] })
      .withKey(KEYS.lenient, { id: 'lenient', guardrails: ['broken-open'] })
      .withMcpServer('crm', crm.url, { org: 'acme', visibility: 'private', pricePerCall: 0.01 })
      .with({
        mcp: { healthCheckIntervalSeconds: 0, allowPrivateUpstreams: true },
        plugins: [path.join(__dirname, '..', 'fixtures', 'failing-guardrail.js')],
        guardrails: [
          { id: 'mask-pii', engine: 'pii-mask', default: true, on: ['mcp'] },
          { id: 'no-drop', engine: 'block', phase: 'pre', on: ['mcp'], options: { patterns: ['drop\\s+table'] } },
          { id: 'no-internal', engine: 'block', phase: 'post', on: ['mcp'], options: { words: ['internal use only'] } },
          { id: 'broken-closed', engine: 'always-fails', on: ['mcp'], onError: 'block' },
          { id: 'broken-open', engine: 'always-fails', on: ['mcp'], onError: 'allow' },
        ],
      })
      .start();
    // discovery runs in the background at boot: wait until the tools are listed
    for (;;) {
      const res = await fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'x-gateway-api-key': `Bearer ${KEYS.plain}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      const tools: { name: string }[] = ((await res.json()) as any).result?.tools ?? [];
      if (tools.length === 5) {
        // with a single server the gateway may list bare names; use whatever it lists
        for (const t of tools) names[t.name.replace(/^crm-/, '')] = t.name;
        break;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  });
  after(async () => {
    await gw.close();
    await crm.close();
  });
  let seenLogId: string | undefined;
  beforeEach(async () => {
    seen.length = 0;
    seenLogId = (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0]?.id;
  });
  /** the entry of the call just made (written when the call settles, just after the answer) */
  const lastLog = async () => {
    for (;;) {
      const entry = (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0];
      if (entry && entry.id !== seenLogId) return entry;
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  it('masks personal data in a tool result, text and structuredContent, for an MCP SDK client', async () => {
    const client = await sdkClient('plain');
    try {
      const result = await client.callTool({ name: names.lookup, arguments: { id: 42 } });
      expect(result).to.deep.equal({
        content: [{ type: 'text', text: 'Customer: Jane Roe <[EMAIL]>, card [CREDIT_CARD]' }],
        structuredContent: { name: 'Jane Roe', contact: { email: '[EMAIL]', phones: ['[PHONE]'] }, orders: 3 },
      });
    } finally {
      await client.close();
    }
    const entry = await lastLog();
    expect(entry.model).to.equal(`MCP: ${names.lookup}`);
    expect(entry.details!.guardrails).to.deep.equal([
      { id: 'mask-pii', phase: 'pre', verdict: 'allow' },
      { id: 'mask-pii', phase: 'post', verdict: 'mask', findings: ['CREDIT_CARD', 'EMAIL', 'PHONE'] },
    ]);
    expect(JSON.stringify(entry)).to.not.include(EMAIL);
  });

  it("masks personal data in a tool result's _meta, its content items' _meta and a resource link's title and description, which SDK clients hand to the application", async () => {
    const client = await sdkClient('plain');
    try {
      const result = await client.callTool({ name: names.card, arguments: {} });
      expect(result).to.deep.equal({
        content: [
          { type: 'text', text: 'Found one customer.', _meta: { 'example.com/source': 'crm row of [EMAIL]' } },
          { type: 'resource_link', uri: 'crm://customers/42', name: 'customer-42', title: 'Jane Roe <[EMAIL]>', description: 'Call [PHONE]' },
        ],
        _meta: { 'example.com/contact': { email: '[EMAIL]', phones: ['[PHONE]'] }, 'example.com/rows': 1 },
      });
    } finally {
      await client.close();
    }
    const entry = await lastLog();
    expect(entry.details!.guardrails).to.deep.include({ id: 'mask-pii', phase: 'post', verdict: 'mask', findings: ['EMAIL', 'PHONE'] });
  });

  it("masks personal data in a prompt's description and _meta as in its messages (prompts/get)", async () => {
    const client = await sdkClient('plain');
    try {
      const { prompts } = await client.listPrompts();
      const result = await client.getPrompt({ name: prompts[0].name });
      expect(result).to.deep.equal({
        description: 'Follow-up to [EMAIL]',
        _meta: { 'example.com/owner': '[EMAIL]' },
        messages: [{ role: 'user', content: { type: 'text', text: 'Write a follow-up to the customer.' } }],
      });
      expect(JSON.stringify(result)).to.not.include(EMAIL);
    } finally {
      await client.close();
    }
  });

  it('masks personal data in a text resource read as a base64 blob, as in one read as text', async () => {
    const client = await sdkClient('plain');
    try {
      const result = await client.readResource({ uri: 'crm://notes/42' });
      expect(result.contents).to.have.length(1);
      const [item] = result.contents as { uri: string; mimeType: string; blob: string }[];
      expect(item).to.include({ uri: 'crm://notes/42', mimeType: 'text/plain' });
      expect(Buffer.from(item.blob, 'base64').toString('utf8')).to.equal('Call back on [PHONE] or mail [EMAIL].');
    } finally {
      await client.close();
    }
  });

  it('keeps a text result that serialises the structured content JSON when it masks a value after an escape', async () => {
    const client = await sdkClient('plain');
    try {
      const result = (await client.callTool({ name: names.profile, arguments: {} })) as { content: { type: string; text: string }[]; structuredContent: unknown };
      expect(result.structuredContent).to.deep.equal({ note: 'Hi,\n[EMAIL]', visits: 3 });
      expect(JSON.parse(result.content[0].text)).to.deep.equal(result.structuredContent);
    } finally {
      await client.close();
    }
  });

  it('masks tool arguments before the upstream server sees them', async () => {
    const { body } = await rpcCall('plain', names.echo, { note: `call ${PHONE}`, nested: { to: [EMAIL] }, n: 1 });
    expect(seen).to.deep.equal([{ note: 'call [PHONE]', nested: { to: ['[EMAIL]'] }, n: 1 }]);
    expect(body.result.content[0].text).to.equal('{"note":"call [PHONE]","nested":{"to":["[EMAIL]"]},"n":1}');
  });

  it('masks tool arguments nested deeper than 64 levels, as it masks shallow ones', async () => {
    const nest = (depth: number, leaf: unknown) => Array.from({ length: depth }).reduce<unknown>((inner) => ({ next: inner }), leaf);
    const { body } = await rpcCall('plain', names.echo, { deep: nest(80, `mail ${EMAIL}`) });
    expect(body.result.isError).to.equal(undefined);
    expect(seen).to.deep.equal([{ deep: nest(80, 'mail [EMAIL]') }]);
    expect(JSON.stringify(body)).to.not.include(EMAIL);
  });

  it('blocks a tool call before it reaches the upstream, as a tool error without the blocked text', async () => {
    const { status, body } = await rpcCall('strict', names.echo, { sql: 'DROP   TABLE customers;' });
    expect(status).to.equal(200);
    expect(body).to.deep.equal({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'The request matched pattern 1 of a content guardrail.' }], isError: true } });
    expect(seen).to.have.length(0);
    const entry = await lastLog();
    expect(entry).to.include({ model: `MCP: ${names.echo}`, errorCode: 'guardrail_blocked', cost: 0 });
    expect(entry.details!.guardrails).to.deep.include({ id: 'no-drop', phase: 'pre', verdict: 'block' });
  });

  it('blocks a tool result after the call, and the call is still logged and charged', async () => {
    const client = await sdkClient('strict');
    try {
      const result = await client.callTool({ name: names.memo, arguments: {} });
      expect(result).to.deep.equal({ content: [{ type: 'text', text: 'The tool result matched a blocked word of a content guardrail.' }], isError: true });
      expect(JSON.stringify(result).toLowerCase()).to.not.include('internal');
    } finally {
      await client.close();
    }
    const entry = await lastLog();
    expect(entry).to.include({ model: `MCP: ${names.memo}`, errorCode: 'guardrail_blocked', cost: 0.01 });
    expect(entry.details!.guardrails).to.deep.include({ id: 'no-internal', phase: 'post', verdict: 'block' });
  });

  it('fails the call when an engine throws and onError is "block"', async () => {
    const { body } = await rpcCall('fragile', names.echo, { q: 'hello' });
    expect(body.result).to.deep.equal({ content: [{ type: 'text', text: 'The guardrail "broken-closed" could not check the tool call arguments, so it was blocked.' }], isError: true });
    expect(seen).to.have.length(0);
    expect(gw.logLines.join('\n')).to.not.include('engine crashed');
  });

  it('lets the call through when an engine throws and onError is "allow"', async () => {
    const { body } = await rpcCall('lenient', names.echo, { q: 'hello' });
    expect(body.result).to.deep.equal({ content: [{ type: 'text', text: '{"q":"hello"}' }] });
    const entry = await lastLog();
    expect(entry.details!.guardrails).to.deep.include({ id: 'broken-open', phase: 'pre', verdict: 'error' });
    expect(entry.details!.guardrails).to.deep.include({ id: 'broken-open', phase: 'post', verdict: 'error' });
  });
});

describe('MCP post guardrails on the progress of a call, with a slow engine', function () {
  this.timeout(60_000);
  const KEY = 'sk-mcp-progress-0005';
  const NOTIFICATIONS = 40;
  const gate = guardrailGate();
  let upstream: FakeMcpServer;
  let gw: TestGateway;
  let reported = false;

  before(async () => {
    upstream = await FakeMcpServer.start({ sseResponses: true });
    upstream.setTool('busy', {
      handler: async (_args, _headers, progress) => {
        for (let i = 1; i <= NOTIFICATIONS; i++) await progress(i, NOTIFICATIONS, `step ${i}`);
        reported = true;
        return { content: [{ type: 'text', text: 'busy done' }] };
      },
    });
    gw = await testConfig()
      .withKey(KEY, { id: 'progress' })
      .withMcpServer('work', upstream.url, { visibility: 'public' })
      .with({
        mcp: { healthCheckIntervalSeconds: 0, allowPrivateUpstreams: true },
        plugins: [path.join(__dirname, '..', 'fixtures', 'gated-guardrail.js')],
        guardrails: [{ id: 'slow-check', engine: 'gated', phase: 'post', on: ['mcp'], default: true, timeoutMs: 30_000 }],
      })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('keeps only a few notifications waiting for the engine, the newest last, and still answers the result', async () => {
    const client = new Client({ name: 'guardrail-progress', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { 'x-gateway-api-key': `Bearer ${KEY}` } } }));
    const seen: string[] = [];
    // discovery runs in the background at boot
    const name = await eventually(async () => (await client.listTools()).tools.find((t) => t.name.endsWith('busy'))?.name, 20_000);
    gate.hold();
    try {
      const call = client.callTool({ name, arguments: {} }, undefined, { onprogress: (p: any) => seen.push(p.message) });
      // the engine holds the first notification's check while the upstream reports all the others
      await eventually(() => reported || undefined, 20_000);
      await eventually(() => gate.checked.length > 0 || undefined, 20_000);
      await new Promise((r) => setTimeout(r, 300));
      gate.open();
      const result: any = await call;
      expect(result.content).to.deep.equal([{ type: 'text', text: 'busy done' }]);
    } finally {
      gate.open();
      await client.close();
    }
    const progressChecks = gate.checked.filter((t) => t.startsWith('step '));
    // one checked while the others arrived, then at most the few kept waiting: not all forty
    expect(progressChecks.length).to.be.at.most(10);
    expect(seen).to.deep.equal(progressChecks);
    expect(seen[0]).to.equal('step 1');
    expect(seen.at(-1)).to.equal(`step ${NOTIFICATIONS}`);
  });
});
