import { expect } from 'chai';
import OpenAI from 'openai';
import { FakeMcpServer } from '../support/fake-mcp-server';
import { chatCompletion, FakeOpenAI } from '../support/fake-openai';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const ADMIN = 'sk-admin-API-1';
const ACME_ADMIN = 'sk-acme-admin-API-2';
const ACME_DEV = 'sk-acme-dev-API-3';
const ACME_STRICT = 'sk-acme-strict-API-4';
const GLOBEX_BOT = 'sk-globex-bot-API-5';

/** The management API reads the console is built on: who am I, log filters and detail, daily spend, models, guardrails, the tool tester. */
describe('management API for the admin console', function () {
  this.timeout(30_000);
  let upstream: FakeOpenAI;
  let mcp: FakeMcpServer;
  let gw: TestGateway;

  async function api(key: string, method: string, path: string, body?: unknown) {
    const res = await fetch(`${gw.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as any };
  }
  const chat = (key: string, content: string) =>
    new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 }).chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content }] }).catch((e: unknown) => e);

  before(async () => {
    upstream = await new FakeOpenAI().start();
    upstream.script = { kind: 'json', body: chatCompletion('hi', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
    mcp = await FakeMcpServer.start({ tools: { search: { description: 'Search' }, fetch: { description: 'Fetch' } } });
    gw = await testConfig()
      .withOrg('acme')
      .withOrg('globex', { maxBudget: 10 })
      .withKey(ACME_ADMIN, { role: 'admin', id: 'acme-admin', name: 'Acme ops' })
      .withKey(ACME_DEV, { id: 'acme-dev', maxBudget: 1, budgetDuration: '1d' })
      .withKey(ACME_STRICT, { id: 'acme-strict', guardrails: ['house-rules'] })
      .withKey(GLOBEX_BOT, { org: 'globex', id: 'globex-bot', guardrails: ['house-rules'] })
      .withOpenAI('oai', upstream, 'sk-provider-SECRET-9')
      .withModel('gpt', { model: 'up', id: 'gpt-1', price: { inputPerMTok: 1, outputPerMTok: 2 }, fallbacks: [] })
      .withMcpServer('docs', mcp.url, { org: 'acme', allowedTools: ['search'] })
      .with({
        adminKey: ADMIN,
        mcp: { healthCheckIntervalSeconds: 0 },
        guardrails: [{ id: 'house-rules', engine: 'block', options: { words: ['falcon'] } }],
      })
      .start();
    await chat(ACME_DEV, 'hello');
    await chat(ACME_STRICT, 'falcon plans');
    await chat(GLOBEX_BOT, 'falcon too');
    await chat(GLOBEX_BOT, 'hello');
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
    await mcp.close();
  });

  it('says who the management key is', async () => {
    expect((await api(ADMIN, 'GET', '/admin/v1/me')).body).to.deep.include({ role: 'platform_admin', org: null });
    expect((await api(ACME_ADMIN, 'GET', '/admin/v1/me')).body).to.deep.include({ role: 'admin', org: 'acme', keyId: 'acme-admin', keyName: 'Acme ops' });
    expect((await api(ACME_DEV, 'GET', '/admin/v1/me')).status).to.equal(403);
  });

  it('filters the log by status and time range and reads one entry, scoped to the organisation', async () => {
    const errors = (await api(ADMIN, 'GET', '/admin/v1/logs?status=error')).body.data;
    expect(errors.map((e: any) => e.keyId).sort()).to.deep.equal(['acme-strict', 'globex-bot']);
    expect((await api(ADMIN, 'GET', '/admin/v1/logs?status=4xx')).body.data).to.have.length(2);
    expect((await api(ADMIN, 'GET', '/admin/v1/logs?status=200')).body.data).to.have.length(2);
    expect((await api(ACME_ADMIN, 'GET', '/admin/v1/logs?status=error')).body.data.map((e: any) => e.keyId)).to.deep.equal(['acme-strict']);
    const all = (await api(ADMIN, 'GET', '/admin/v1/logs')).body.data;
    const oldest = all[all.length - 1];
    const before = (await api(ADMIN, 'GET', `/admin/v1/logs?until=${encodeURIComponent(all[0].time)}`)).body.data;
    expect(before.every((e: any) => e.time < all[0].time)).to.equal(true);
    expect((await api(ADMIN, 'GET', `/admin/v1/logs?since=${encodeURIComponent(oldest.time)}&until=${encodeURIComponent(oldest.time)}`)).status).to.equal(400);
    for (const bad of ['status=ok', 'status=600', 'until=yesterday']) {
      const r = await api(ADMIN, 'GET', `/admin/v1/logs?${bad}`);
      expect(r.status, bad).to.equal(400);
      expect(r.body.error.param, bad).to.equal(bad.split('=')[0]);
    }

    const blocked = errors.find((e: any) => e.keyId === 'globex-bot');
    const read = await api(ADMIN, 'GET', `/admin/v1/logs/${blocked.id}`);
    expect(read.body).to.deep.include({ object: 'log_entry', id: blocked.id, keyId: 'globex-bot', status: blocked.status });
    expect(read.body.details.guardrails[0]).to.deep.include({ id: 'house-rules', verdict: 'block' });
    const hidden = await api(ACME_ADMIN, 'GET', `/admin/v1/logs/${blocked.id}`);
    expect(hidden.status).to.equal(404);
    expect(hidden.body.error.code).to.equal('log_entry_not_found');
  });

  it('answers spend by day with totals equal to /admin/v1/spend over the same range', async () => {
    const since = new Date(Date.now() - 86_400_000).toISOString();
    const until = new Date(Date.now() + 60_000).toISOString();
    const range = `since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}`;
    const daily = (await api(ADMIN, 'GET', `/admin/v1/spend/daily?${range}&splitBy=org&tz=Pacific/Auckland`)).body;
    const spend = (await api(ADMIN, 'GET', `/admin/v1/spend?groupBy=org&${range}`)).body;
    expect(daily).to.deep.include({ object: 'spend_by_day', split_by: 'org', time_zone: 'Pacific/Auckland' });
    expect(daily.totals.cost).to.be.closeTo(spend.total_cost, 1e-12);
    expect(daily.totals.requests).to.equal(4);
    for (const row of spend.data) {
      const series = daily.series.find((s: any) => s.group === row.group);
      expect(series.cost.reduce((a: number, b: number) => a + b, 0), row.group).to.be.closeTo(row.cost, 1e-12);
    }
    // an organisation admin sees its own organisation only
    const acme = (await api(ACME_ADMIN, 'GET', `/admin/v1/spend/daily?${range}&splitBy=key`)).body;
    expect(acme.series.map((s: any) => s.group).sort()).to.deep.equal(['acme-dev', 'acme-strict']);
    expect(acme.top.keys.map((k: any) => k.group)).to.not.include('globex-bot');
    for (const [query, param] of [['tz=Mars/Olympus', 'tz'], ['splitBy=server', 'splitBy'], ['since=2020-01-01', 'since']]) {
      const r = await api(ADMIN, 'GET', `/admin/v1/spend/daily?${query}`);
      expect(r.status, query).to.equal(400);
      expect(r.body.error.param, query).to.equal(param);
    }
  });

  it('lists models with deployments, prices and live health, and never the provider URL or key', async () => {
    const r = await api(ACME_ADMIN, 'GET', '/admin/v1/models');
    expect(r.status).to.equal(200);
    expect(r.body.data[0]).to.deep.include({ name: 'gpt', kind: 'chat' });
    expect(r.body.data[0].deployments[0]).to.deep.include({ id: 'gpt-1', provider: 'oai', providerType: 'openai', upstreamModel: 'up', weight: 1, share: 1, price: { inputPerMTok: 1, outputPerMTok: 2 } });
    expect(r.body.data[0].deployments[0].health).to.deep.include({ state: 'healthy', requests: 2 });
    expect(r.text).to.not.include('sk-provider-SECRET-9').and.not.include(upstream.url);
  });

  it('lists guardrails with the keys they apply to and verdict counts, per organisation', async () => {
    const all = (await api(ADMIN, 'GET', '/admin/v1/guardrails')).body.data[0];
    expect(all).to.deep.include({ id: 'house-rules', engine: 'block', phases: ['pre', 'post'], traffic: ['chat', 'mcp'], mode: 'enforce', default: false });
    expect(all.keys.map((k: any) => k.id)).to.deep.equal(['acme-strict', 'globex-bot']);
    expect(all.verdicts.block).to.equal(2);
    expect(all).to.not.have.property('options');
    const acme = (await api(ACME_ADMIN, 'GET', '/admin/v1/guardrails')).body.data[0];
    expect(acme.keys.map((k: any) => k.id)).to.deep.equal(['acme-strict']);
    expect(acme.verdicts.block).to.equal(1);
  });

  it('shows the timeout the gateway applies to a guardrail that did not set one', async () => {
    const [guardrail] = (await api(ADMIN, 'GET', '/admin/v1/guardrails')).body.data;
    expect(guardrail).to.deep.include({ id: 'house-rules', onError: 'block', timeoutMs: 10_000 });
  });

  it('shows what each key and organisation used of its budget this period, from the counter the gateway checks', async () => {
    const all = (await api(ADMIN, 'GET', '/admin/v1/budgets')).body.data;
    expect(all.map((b: any) => `${b.kind}:${b.id}`)).to.deep.equal(['key:acme-dev', 'org:globex']);
    const dev = all[0];
    const logged = (await api(ADMIN, 'GET', '/admin/v1/logs?key=acme-dev&model=gpt')).body.data;
    expect(dev.spent).to.be.greaterThan(0);
    expect(dev.spent).to.be.closeTo(logged.reduce((sum: number, e: any) => sum + e.cost, 0), 1e-12);
    const day = Math.floor(Date.now() / 86_400_000) * 86_400_000;
    expect(dev).to.deep.include({ maxBudget: 1, budgetDuration: '1d', periodStart: new Date(day).toISOString(), periodEnd: new Date(day + 86_400_000).toISOString() });
    expect(all[1].spent).to.be.closeTo((await api(ADMIN, 'GET', '/admin/v1/spend?groupBy=org')).body.data.find((r: any) => r.group === 'globex').cost, 1e-12);
    expect((await api(ACME_ADMIN, 'GET', '/admin/v1/budgets')).body.data.map((b: any) => b.id)).to.deep.equal(['acme-dev']);
  });

  it('narrows the budgets to the organisation ?org= names, and refuses an organisation admin naming another (it answered every organisation\'s)', async () => {
    const globex = await api(ADMIN, 'GET', '/admin/v1/budgets?org=globex');
    expect(globex.body.data.map((b: any) => `${b.kind}:${b.id}`)).to.deep.equal(['org:globex']);
    const acme = await api(ADMIN, 'GET', '/admin/v1/budgets?org=acme');
    expect(acme.body.data.map((b: any) => `${b.kind}:${b.id}`)).to.deep.equal(['key:acme-dev']);
    const other = await api(ACME_ADMIN, 'GET', '/admin/v1/budgets?org=globex');
    expect(other.status).to.equal(403);
    expect(other.body.error).to.include({ type: 'permission_error', code: 'cross_org_denied' });
    const twice = await api(ADMIN, 'GET', '/admin/v1/budgets?org=acme&org=globex');
    expect([twice.status, twice.body.error.param]).to.deep.equal([400, 'org']);
  });

  it('clears a key field with null', async () => {
    const created = (await api(ADMIN, 'POST', '/admin/v1/keys', { org: 'acme', name: 'tmp', maxBudget: 5, rpm: 10 })).body;
    const patched = await api(ADMIN, 'PATCH', `/admin/v1/keys/${created.id}`, { maxBudget: null, rpm: 20, role: null });
    expect(patched.status).to.equal(200);
    expect(patched.body).to.not.have.property('maxBudget');
    expect(patched.body.rpm).to.equal(20);
    expect((await api(ADMIN, 'GET', `/admin/v1/keys/${created.id}`)).body).to.not.have.property('maxBudget');
  });

  it('keeps the MCP restrictions a key PATCH does not name (a partial mcp opened every server, or every tool of a server)', async () => {
    const created = (await api(ADMIN, 'POST', '/admin/v1/keys', { org: 'acme', name: 'mcp-narrow', mcp: { servers: ['docs'], tools: { docs: ['search'], gateway_proxy: ['gpt'] } } })).body;
    const tools = await api(ADMIN, 'PATCH', `/admin/v1/keys/${created.id}`, { mcp: { tools: { docs: ['search', 'fetch'] } } });
    expect(tools.status).to.equal(200);
    expect(tools.body.mcp).to.deep.equal({ servers: ['docs'], tools: { docs: ['search', 'fetch'], gateway_proxy: ['gpt'] } });
    const servers = await api(ADMIN, 'PATCH', `/admin/v1/keys/${created.id}`, { mcp: { servers: ['docs', 'gateway_proxy'] } });
    expect(servers.body.mcp).to.deep.equal({ servers: ['docs', 'gateway_proxy'], tools: { docs: ['search', 'fetch'], gateway_proxy: ['gpt'] } });
    expect((await api(ADMIN, 'GET', `/admin/v1/keys/${created.id}`)).body.mcp).to.deep.equal(servers.body.mcp);
    const cleared = await api(ADMIN, 'PATCH', `/admin/v1/keys/${created.id}`, { mcp: null });
    expect(cleared.body).to.not.have.property('mcp');
  });

  it('removes one server\'s tool list from a key with mcp.tools.<server>: null, keeping the other restrictions', async () => {
    const created = (await api(ADMIN, 'POST', '/admin/v1/keys', { org: 'acme', name: 'mcp-unlist', mcp: { servers: ['docs', 'gateway_proxy'], tools: { docs: ['search'], gateway_proxy: ['gpt'] } } })).body;
    const one = await api(ADMIN, 'PATCH', `/admin/v1/keys/${created.id}`, { mcp: { tools: { gateway_proxy: null } } });
    expect(one.status, one.text).to.equal(200);
    expect(one.body.mcp).to.deep.equal({ servers: ['docs', 'gateway_proxy'], tools: { docs: ['search'] } });
    // the last list goes too (a name without a list, even __proto__, changes nothing)
    const last = await api(ADMIN, 'PATCH', `/admin/v1/keys/${created.id}`, JSON.parse('{"mcp":{"tools":{"docs":null,"__proto__":null}}}'));
    expect(last.status, last.text).to.equal(200);
    expect(last.body.mcp).to.deep.equal({ servers: ['docs', 'gateway_proxy'] });
    expect((await api(ADMIN, 'GET', `/admin/v1/keys/${created.id}`)).body.mcp).to.deep.equal({ servers: ['docs', 'gateway_proxy'] });
    // null removes a list in a PATCH only: a new key states its lists
    const refused = await api(ADMIN, 'POST', '/admin/v1/keys', { org: 'acme', name: 'mcp-null', mcp: { tools: { docs: null } } });
    expect(refused.status).to.equal(400);
  });

  it('removes a key\'s server list with mcp.servers: null, keeping its tool lists', async () => {
    const created = (await api(ADMIN, 'POST', '/admin/v1/keys', { org: 'acme', name: 'mcp-servers-null', mcp: { servers: ['docs'], tools: { docs: ['search'] } } })).body;
    const open = await api(ADMIN, 'PATCH', `/admin/v1/keys/${created.id}`, { mcp: { servers: null } });
    expect(open.status, open.text).to.equal(200);
    expect(open.body.mcp).to.deep.equal({ tools: { docs: ['search'] } });
    expect((await api(ADMIN, 'GET', `/admin/v1/keys/${created.id}`)).body.mcp).to.deep.equal({ tools: { docs: ['search'] } });
    // both at once: nothing is left to restrict
    const none = await api(ADMIN, 'PATCH', `/admin/v1/keys/${created.id}`, { mcp: { servers: null, tools: { docs: null } } });
    expect(none.status, none.text).to.equal(200);
    expect(none.body).to.not.have.property('mcp');
    // null removes a list in a PATCH only: a new key states its lists
    const refused = await api(ADMIN, 'POST', '/admin/v1/keys', { org: 'acme', name: 'mcp-servers-null', mcp: { servers: null } });
    expect(refused.status).to.equal(400);
  });

  it('stores and shows an mcp that lists nothing (an empty tool map) as no mcp, on create and on update', async () => {
    const created = await api(ADMIN, 'POST', '/admin/v1/keys', { org: 'acme', name: 'mcp-empty', mcp: { tools: {} } });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.not.have.property('mcp');
    const listed = (await api(ADMIN, 'GET', '/admin/v1/keys')).body.data.find((k: { id: string }) => k.id === created.body.id);
    expect(listed).to.not.have.property('mcp');
    const narrowed = await api(ADMIN, 'POST', '/admin/v1/keys', { org: 'acme', name: 'mcp-servers-only', mcp: { servers: ['docs'], tools: {} } });
    expect(narrowed.body.mcp).to.deep.equal({ servers: ['docs'] });
    const patched = await api(ADMIN, 'PATCH', `/admin/v1/keys/${created.body.id}`, { mcp: { tools: {} } });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.body).to.not.have.property('mcp');
    expect((await api(ADMIN, 'GET', `/admin/v1/keys/${created.body.id}`)).body).to.not.have.property('mcp');
    const servers = await api(ADMIN, 'PATCH', `/admin/v1/keys/${narrowed.body.id}`, { mcp: { servers: ['docs', 'gateway_proxy'], tools: {} } });
    expect(servers.body.mcp).to.deep.equal({ servers: ['docs', 'gateway_proxy'] });
  });

  it('runs the tool tester through /mcp with the pasted key, and explains what it cannot run', async () => {
    const server = (await api(ACME_ADMIN, 'GET', '/admin/v1/mcp/servers')).body.data[0];
    const ok = await api(ACME_ADMIN, 'POST', `/admin/v1/mcp/servers/${server.id}/tools/search/call`, { key: ACME_DEV, arguments: { q: 'x' } });
    expect(ok.status).to.equal(200);
    // the key reaches docs and the built-in gateway_proxy: names carry the alias
    expect(ok.body).to.deep.include({ object: 'tool_test', tool: 'docs-search', status: 200, error: null });
    expect(ok.body.result.content[0].text).to.include('"q":"x"');
    expect(ok.body.log_entry).to.deep.include({ id: ok.body.request_id, keyId: 'acme-dev', model: 'MCP: docs-search', endpoint: 'mcp' });
    expect(ok.text).to.not.include(ACME_DEV);
    expect(mcp.requestsFor('tools/call')).to.have.length(1);

    const wrongKey = await api(ACME_ADMIN, 'POST', `/admin/v1/mcp/servers/${server.id}/tools/search/call`, { key: 'sk-not-a-key-API' });
    expect(wrongKey.status).to.equal(400);
    expect(wrongKey.body.error.code).to.equal('invalid_test_key');
    expect(wrongKey.text).to.not.include('sk-not-a-key-API');
    for (const unsendable of ['sk-line\r\nx-injected: 1', 'sk-clé-non-ascii', 'sk with spaces']) {
      const refused = await api(ACME_ADMIN, 'POST', `/admin/v1/mcp/servers/${server.id}/tools/search/call`, { key: unsendable });
      expect(refused.status, refused.text).to.equal(400);
      expect(refused.body.error.code).to.equal('invalid_test_key');
      expect(refused.text).to.not.include(unsendable);
    }
    const hidden = await api(ACME_ADMIN, 'POST', `/admin/v1/mcp/servers/${server.id}/tools/fetch/call`, { key: ACME_DEV });
    expect(hidden.body.error.code).to.equal('tool_not_visible');
    expect(hidden.body.error.message).to.include('enable it first');
    const missing = await api(ACME_ADMIN, 'POST', `/admin/v1/mcp/servers/${server.id}/tools/nope/call`, { key: ACME_DEV });
    expect(missing.status).to.equal(404);
    expect((await api(ACME_ADMIN, 'POST', `/admin/v1/mcp/servers/${server.id}/tools/search/call`, { key: ACME_DEV, arguments: [1] })).body.error.param).to.equal('arguments');
    expect(mcp.requestsFor('tools/call')).to.have.length(1);
    expect(gw.logLines.join('\n')).to.not.include('sk-not-a-key-API');
  });

  it("never runs another server's tool of the same name when the pasted key sees that server alone", async () => {
    const wiki = await FakeMcpServer.start({ tools: { search: { description: 'Wiki search' } } });
    try {
      const registered = await api(ADMIN, 'POST', '/admin/v1/mcp/servers', { name: 'wiki', url: wiki.url, org: 'acme' });
      expect(registered.status, registered.text).to.equal(201);
      // a key that reaches wiki only: /mcp lists its tools without the alias
      const wikiOnly = (await api(ADMIN, 'POST', '/admin/v1/keys', { org: 'acme', mcp: { servers: ['wiki'] } })).body;
      const docs = (await api(ACME_ADMIN, 'GET', '/admin/v1/mcp/servers')).body.data.find((s: any) => s.name === 'docs');
      const docsCalls = mcp.requestsFor('tools/call').length;
      const tested = await api(ACME_ADMIN, 'POST', `/admin/v1/mcp/servers/${docs.id}/tools/search/call`, { key: wikiOnly.key, arguments: { q: 'x' } });
      expect(wiki.requestsFor('tools/call'), 'wiki was called for a test of docs').to.have.length(0);
      expect(mcp.requestsFor('tools/call')).to.have.length(docsCalls);
      expect(tested.status, tested.text).to.equal(400);
      expect(tested.body.error.code).to.equal('tool_not_visible');
      // the same key does test wiki's own tool
      const own = await api(ACME_ADMIN, 'POST', `/admin/v1/mcp/servers/${registered.body.id}/tools/search/call`, { key: wikiOnly.key, arguments: { q: 'y' } });
      expect(own.body).to.deep.include({ object: 'tool_test', server: 'wiki', tool: 'search', status: 200, error: null });
      expect(wiki.requestsFor('tools/call')).to.have.length(1);
    } finally {
      await wiki.close();
    }
  });
});

describe('management API: spend by day split by MCP tool', () => {
  it('charts tool calls only, not prompt gets or resource reads (they showed as tools named "prompt ..." and "resource ...")', async () => {
    const docs = await FakeMcpServer.start({
      tools: { search: { description: 'Search', handler: () => ({ content: [{ type: 'text', text: 'found' }] }) } },
      prompts: { greet: { text: () => 'hello' } },
      resources: { 'docs://readme': { name: 'Readme', text: 'read me' } },
    });
    const gw = await testConfig()
      .withKey(ACME_DEV, { id: 'acme-dev' })
      .withMcpServer('docs', docs.url, { pricePerCall: 0.01 })
      .with({ adminKey: ADMIN, mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
    try {
      const rpc = async (method: string, params: unknown) => {
        const res = await fetch(`${gw.url}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': `Bearer ${ACME_DEV}` },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        });
        const body = (await res.json()) as { result?: unknown; error?: unknown };
        expect(body.error, `${method}: ${JSON.stringify(body.error)}`).to.equal(undefined);
      };
      // one server: its tools and prompts go by their own names
      await eventuallyListed(gw.url, ACME_DEV, 'search');
      await rpc('tools/call', { name: 'search', arguments: {} });
      await rpc('prompts/get', { name: 'greet', arguments: {} });
      await rpc('resources/read', { uri: 'docs://readme' });
      await gw.gateway.services.pipeline.whenSettled(5_000);
      const res = await fetch(`${gw.url}/admin/v1/spend/daily?splitBy=tool`, { headers: { authorization: `Bearer ${ADMIN}` } });
      const daily = (await res.json()) as { series: { group: string; requests: number[] }[]; totals: { requests: number } };
      expect(daily.totals.requests).to.equal(3);
      expect(daily.series.map((s) => [s.group, s.requests.reduce((a, b) => a + b, 0)])).to.deep.equal([['search', 1]]);
    } finally {
      await gw.close();
      await docs.close();
    }
  });
});

/** Waits until the key's tools/list names `tool` (the gateway discovers its servers just after it starts). */
async function eventuallyListed(url: string, key: string, tool: string): Promise<void> {
  for (const until = Date.now() + 5_000; ; ) {
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': `Bearer ${key}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const names = (((await res.json()) as { result?: { tools?: { name: string }[] } }).result?.tools ?? []).map((t) => t.name);
    if (names.includes(tool)) return;
    if (Date.now() > until) expect.fail(`${tool} not listed: ${names.join(', ')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
