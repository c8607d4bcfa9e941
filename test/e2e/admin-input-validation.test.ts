import { expect } from 'chai';
import OpenAI from 'openai';
import { startPostgres } from '../support/postgres-server';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const ADMIN = 'sk-admin-SCHEMA-7731';

async function api(gw: TestGateway, method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
}

type Case = [what: string, body: Record<string, unknown>, param: string, message: string];

/** Every case answers 400 in the OpenAI error shape, `param` naming the field and the message saying why. */
async function expectRefused(gw: TestGateway, method: string, path: string, cases: Case[], key = ADMIN): Promise<void> {
  for (const [what, body, param, message] of cases) {
    const res = await api(gw, method, path, key, body);
    expect(res.status, `${what}: ${res.text}`).to.equal(400);
    expect(res.body.error, what).to.include({ type: 'invalid_request_error', param });
    expect(res.body.error.message, what).to.include(message);
  }
}

describe('management API input is checked by the config file schemas', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await testConfig()
      .withKey('sk-acme-admin-SCHEMA', { id: 'acme-admin', role: 'admin' })
      .withProvider({ id: 'echo', type: 'echo' })
      .withModel('echo')
      .with({ adminKey: ADMIN })
      .start();
  });
  after(() => gw.close());

  it('refuses bad key fields on create with a 400 naming the field, and stores nothing', async () => {
    await expectRefused(gw, 'POST', '/admin/v1/keys', [
      ['models as a string', { org: 'acme', models: 'gpt-*' }, 'models', 'models: must be array'],
      ['a budget that is not a number', { org: 'acme', maxBudget: 'lots' }, 'maxBudget', 'maxBudget: must be number'],
      ['a negative rpm', { org: 'acme', rpm: -5 }, 'rpm', 'rpm: must be >= 1'],
      ['a fractional tpm', { org: 'acme', tpm: 1.5 }, 'tpm', 'tpm: must be integer'],
      ['a negative budget', { org: 'acme', maxBudget: -1 }, 'maxBudget', 'maxBudget: must be >= 0'],
      ['a budget duration without a unit', { org: 'acme', budgetDuration: 'monthly' }, 'budgetDuration', 'must be a number from 1 to 9999999 followed by s, m, h or d'],
      ['a role that would open every organisation', { org: 'acme', role: 'platform_admin' }, 'role', 'role: must be one of "member", "admin"'],
      ['a non-string model pattern', { org: 'acme', models: ['echo', 7] }, 'models[1]', 'models[1]: must be string'],
      ['an unknown field', { org: 'acme', colour: 'red' }, 'colour', 'colour: unknown field'],
      ['a misspelt field', { org: 'acme', mdoels: ['echo'] }, 'mdoels', 'mdoels: unknown field (did you mean "models"?)'],
      ['mcp servers as a string', { org: 'acme', mcp: { servers: 'docs' } }, 'mcp.servers', 'mcp.servers: must be array'],
      ['a guardrail that does not exist', { org: 'acme', guardrails: ['nope'] }, 'guardrails[0]', 'guardrails[0]: unknown guardrail "nope"'],
      ['an MCP server that does not exist', { org: 'acme', mcp: { servers: ['nope'] } }, 'mcp.servers[0]', 'mcp.servers[0]: unknown MCP server "nope"'],
    ]);
    const list = await api(gw, 'GET', '/admin/v1/keys', ADMIN);
    expect(list.body.data.map((k: { id: string }) => k.id)).to.deep.equal(['acme-admin']);
  });

  it('refuses bad key fields on update, keeps the key as it was, and the key keeps working', async () => {
    const created = await api(gw, 'POST', '/admin/v1/keys', ADMIN, { org: 'acme', name: 'bot', models: ['echo'], rpm: 100 });
    expect(created.status).to.equal(201);
    const path = `/admin/v1/keys/${created.body.id}`;
    await expectRefused(gw, 'PATCH', path, [
      ['models as a string', { models: 'gpt-*' }, 'models', 'models: must be array'],
      ['a budget that is not a number', { maxBudget: 'lots' }, 'maxBudget', 'maxBudget: must be number'],
      ['a negative rpm', { rpm: -5 }, 'rpm', 'rpm: must be >= 1'],
      ['a zero tpm', { tpm: 0 }, 'tpm', 'tpm: must be >= 1'],
      ['a move to another organisation', { org: 'globex' }, 'org', 'org: cannot be changed'],
      ['a new id', { id: 'other' }, 'id', 'id: cannot be changed'],
      ['an unknown field', { rmp: 5 }, 'rmp', 'rmp: unknown field (did you mean "rpm"?)'],
    ]);
    const read = await api(gw, 'GET', path, ADMIN);
    expect(read.body).to.include({ org: 'acme', name: 'bot', rpm: 100 });
    expect(read.body.models).to.deep.equal(['echo']);
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: created.body.key, maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'still here' }] });
    expect(answer.choices[0].message.content).to.equal('still here');

    const good = await api(gw, 'PATCH', path, ADMIN, { rpm: 5, models: ['ech*'] });
    expect(good.status).to.equal(200);
    expect(good.body).to.include({ rpm: 5 });
    // null removes a restriction; it is not stored as a value the key would then trip over
    const cleared = await api(gw, 'PATCH', path, ADMIN, { rpm: null, models: null });
    expect(cleared.status).to.equal(200);
    expect(cleared.body).to.not.have.any.keys('rpm', 'models');
    expect((await api(gw, 'GET', path, ADMIN)).body).to.not.have.any.keys('rpm', 'models');
    await expectRefused(gw, 'PATCH', path, [
      ['null for an unknown field', { colour: null }, 'colour', 'colour: unknown field'],
      ['null for the organisation', { org: null }, 'org', 'org: cannot be changed'],
    ]);
  });

  it('applies the same rules to an organisation admin', async () => {
    await expectRefused(gw, 'POST', '/admin/v1/keys', [['a negative rpm', { rpm: -5 }, 'rpm', 'rpm: must be >= 1']], 'sk-acme-admin-SCHEMA');
  });

  it('refuses a budget period of no length or past the dates a budget can reset on, which made its key\'s requests and the budgets view a 500', async () => {
    await expectRefused(gw, 'POST', '/admin/v1/keys', [
      ['a period that never ends before the year 275760', { org: 'acme', maxBudget: 1, budgetDuration: '200000000d' }, 'budgetDuration', 'budgetDuration: must be a number from 1 to 9999999 followed by s, m, h or d'],
      ['a period of no length', { org: 'acme', maxBudget: 1, budgetDuration: '0d' }, 'budgetDuration', 'budgetDuration: must be a number from 1 to 9999999'],
    ]);
    await expectRefused(gw, 'POST', '/admin/v1/organizations', [['a period of no length', { id: 'o2', maxBudget: 1, budgetDuration: '000h' }, 'budgetDuration', 'budgetDuration: must be a number from 1']]);
    const longest = await api(gw, 'POST', '/admin/v1/keys', ADMIN, { org: 'acme', maxBudget: 0, budgetDuration: '9999999d' });
    expect(longest.status).to.equal(201);
    const refused = await new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: longest.body.key, maxRetries: 0 }).chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
    expect(refused.status).to.equal(429);
    expect(refused.code).to.equal('budget_exceeded');
    const budgets = await api(gw, 'GET', '/admin/v1/budgets', ADMIN);
    expect(budgets.status).to.equal(200);
    expect(budgets.body.data.find((b: { id: string }) => b.id === longest.body.id)).to.include({ periodStart: '1970-01-01T00:00:00.000Z' });
    expect((await api(gw, 'DELETE', `/admin/v1/keys/${longest.body.id}`, ADMIN)).status).to.equal(200);
  });

  it('refuses bad organisation fields on create and update', async () => {
    await expectRefused(gw, 'POST', '/admin/v1/organizations', [
      ['a negative budget', { id: 'o1', maxBudget: -1 }, 'maxBudget', 'maxBudget: must be >= 0'],
      ['an rpm that is not a number', { id: 'o1', rpm: 'many' }, 'rpm', 'rpm: must be integer'],
      ['an unknown field', { id: 'o1', budjet: 5 }, 'budjet', 'budjet: unknown field'],
      ['no id', { name: 'Nameless' }, 'id', 'id: is required'],
    ]);
    expect((await api(gw, 'POST', '/admin/v1/organizations', ADMIN, { id: 'initech', maxBudget: 10 })).status).to.equal(201);
    await expectRefused(gw, 'PATCH', '/admin/v1/organizations/initech', [
      ['a negative rpm', { rpm: -5 }, 'rpm', 'rpm: must be >= 1'],
      ['a new id', { id: 'x' }, 'id', 'id: cannot be changed'],
    ]);
    const changed = await api(gw, 'PATCH', '/admin/v1/organizations/initech', ADMIN, { rpm: 60, name: 'Initech' });
    expect(changed.status).to.equal(200);
    expect(changed.body).to.deep.equal({ id: 'initech', name: 'Initech', maxBudget: 10, rpm: 60 });
    const fromFile = await api(gw, 'PATCH', '/admin/v1/organizations/acme', ADMIN, { rpm: 60 });
    expect(fromFile.status).to.equal(400);
    expect(fromFile.body.error.code).to.equal('config_organization_read_only');
  });

  it('refuses bad MCP server fields on register and update', async () => {
    const server = { name: 'docs', url: 'https://docs.example.com/mcp' };
    await expectRefused(gw, 'POST', '/admin/v1/mcp/servers', [
      ['a dash in the alias', { ...server, alias: 'my-docs' }, 'alias', '"my-docs" contains "-"'],
      ['a dash in the name', { ...server, name: 'docs-search' }, 'name', '"docs-search" contains "-"'],
      ['a misspelt field', { ...server, transprt: 'streamable-http' }, 'transprt', 'transprt: unknown field (did you mean "transport"?)'],
      ['a description that is not text', { ...server, description: 5 }, 'description', 'description: must be string'],
      ['a visibility that does not exist', { ...server, visibility: 'secret' }, 'visibility', 'visibility: must be one of "private", "public"'],
      ['a negative price', { ...server, pricePerCall: -1 }, 'pricePerCall', 'pricePerCall: must be >= 0'],
      ['an env marker as a secret (it would read the gateway environment)', { ...server, auth: { type: 'bearer', token: { $env: 'HOME' } } }, 'auth', 'auth: must be one of'],
      ['a URL that is not http', { ...server, url: 'ftp://docs.example.com/mcp' }, 'url', 'url: must be an http(s) URL'],
    ]);
    await expectRefused(gw, 'PATCH', '/admin/v1/mcp/servers/nope', [['an unknown field', { colour: 'red' }, 'colour', 'colour: unknown field']]);
    // the refusal names the field, never echoes a value that may hold a credential
    const withPassword = await api(gw, 'POST', '/admin/v1/mcp/servers', ADMIN, { ...server, url: 'ftp://user:CANARY-pw-991@docs.example.com/mcp' });
    expect(withPassword.status).to.equal(400);
    expect(withPassword.text).to.not.include('CANARY-pw-991');
  });

  it('refuses a log cursor that no page gave with a 400 naming it, and pages with the ones it gives', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-acme-admin-SCHEMA', maxRetries: 0 });
    for (let i = 0; i < 3; i++) await client.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: `row ${i}` }] });
    await gw.gateway.services.pipeline.whenSettled(5_000);
    await gw.gateway.services.requestLog.writer.settled();
    for (const cursor of ['abc', '-1', '1e3', '9'.repeat(40)]) {
      const res = await api(gw, 'GET', `/admin/v1/logs?limit=1&cursor=${encodeURIComponent(cursor)}`, ADMIN);
      expect(res.status, `${cursor}: ${res.text}`).to.equal(400);
      expect(res.body.error).to.include({ type: 'invalid_request_error', code: 'invalid_value', param: 'cursor' });
    }
    const seen: string[] = [];
    let path = '/admin/v1/logs?limit=1';
    for (let page = 0; page < 3; page++) {
      const res = await api(gw, 'GET', path, ADMIN);
      expect(res.status).to.equal(200);
      seen.push(...res.body.data.map((e: { id: string }) => e.id));
      path = `/admin/v1/logs?limit=1&cursor=${res.body.next_cursor}`;
    }
    expect(new Set(seen).size).to.equal(3);
  });

  it('refuses a log or spend filter given twice with a 400 naming it; it was ignored, and every row answered', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-acme-admin-SCHEMA', maxRetries: 0 });
    await client.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'a row' }] });
    await gw.gateway.services.pipeline.whenSettled(5_000);
    const cases: [path: string, param: string][] = [
      ['/admin/v1/logs?key=someone-else&key=nobody', 'key'],
      ['/admin/v1/logs?model=gpt-none&model=gpt-nil', 'model'],
      ['/admin/v1/logs?org=globex&org=initech', 'org'],
      ['/admin/v1/spend?org=globex&org=initech', 'org'],
      ['/admin/v1/spend/daily?org=acme&org=acme', 'org'],
      ['/admin/v1/guardrails?org=globex&org=initech', 'org'],
    ];
    for (const [path, param] of cases) {
      const res = await api(gw, 'GET', path, ADMIN);
      expect(res.status, `${path}: ${res.text}`).to.equal(400);
      expect(res.body.error, path).to.include({ type: 'invalid_request_error', code: 'invalid_value', param });
    }
    // given once, the same filters still select
    expect((await api(gw, 'GET', '/admin/v1/logs?key=someone-else', ADMIN)).body.data).to.deep.equal([]);
    expect((await api(gw, 'GET', '/admin/v1/logs?key=acme-admin&model=echo', ADMIN)).body.data).to.not.be.empty;
  });
});

describe('management API reads on a PostgreSQL store: a value the database refuses is not a store failure', function () {
  this.timeout(30_000);
  let gw: TestGateway;
  before(async () => {
    const url = await (await startPostgres()).createDatabase();
    gw = await testConfig()
      .withOrg('acme')
      .withOrg('globex')
      .withKey('sk-acme-admin-TIMES', { id: 'acme-admin', role: 'admin' })
      .withProvider({ id: 'echo', type: 'echo' })
      .withModel('echo')
      // a long store timeout: on a loaded machine a read that is slow is not what these tests are about
      .with({ adminKey: ADMIN, store: { url, sweepIntervalSeconds: 0, timeoutMs: 10_000 } })
      .start();
  });
  after(() => gw?.close());

  it("refuses a time PostgreSQL cannot read (year 0, past 9999) with a 400 naming it: it was a 503, and five at once opened the store's breaker for every organisation", async () => {
    const created = await api(gw, 'POST', '/admin/v1/keys', ADMIN, { org: 'globex', name: 'bystander' });
    expect(created.status).to.equal(201);
    const cases: [path: string, param: string][] = [
      ['/admin/v1/logs?since=0000-01-01T00:00:00Z', 'since'],
      ['/admin/v1/logs?until=%2B010000-01-01T00:00:00Z', 'until'],
      ['/admin/v1/spend?since=0000-06-01', 'since'],
      ['/admin/v1/spend/daily?since=0000-06-01&until=0000-12-01', 'since'],
      ['/admin/v1/guardrails?since=-000001-01-01T00:00:00Z', 'since'],
    ];
    // an organisation admin's reads, all at once
    const answers = await Promise.all(cases.map(([path]) => api(gw, 'GET', path, 'sk-acme-admin-TIMES')));
    answers.forEach((res, i) => {
      const [path, param] = cases[i];
      expect(res.status, `${path}: ${res.text}`).to.equal(400);
      expect(res.body.error, path).to.include({ type: 'invalid_request_error', code: 'invalid_value', param });
    });
    // another organisation's key, never seen by this instance, is looked up in the store: it answers
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: created.body.key, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'still here' }] });
    expect(completion.choices[0].message.content).to.be.a('string');
    // the last years PostgreSQL reads are still filters
    const edge = await api(gw, 'GET', '/admin/v1/logs?since=0001-01-01T00:00:00Z&until=9999-12-31T23:59:59Z', ADMIN);
    expect(edge.status, edge.text).to.equal(200);
  });

  it("answers a key id holding a NUL (a%00b) like any unknown key: it was a 503, and five at once opened the store's breaker for every organisation", async () => {
    const created = await api(gw, 'POST', '/admin/v1/keys', ADMIN, { org: 'globex', name: 'bystander-2' });
    expect(created.status).to.equal(201);
    const answers = await Promise.all([
      ...Array.from({ length: 3 }, () => api(gw, 'GET', '/admin/v1/keys/a%00b', 'sk-acme-admin-TIMES')),
      api(gw, 'PATCH', '/admin/v1/keys/a%00b', 'sk-acme-admin-TIMES', { name: 'x' }),
      api(gw, 'DELETE', '/admin/v1/keys/a%00b', 'sk-acme-admin-TIMES'),
    ]);
    for (const res of answers) {
      expect(res.status, res.text).to.equal(404);
      expect(res.body.error).to.include({ type: 'not_found_error', code: 'key_not_found' });
    }
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: created.body.key, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'still here' }] });
    expect(completion.choices[0].message.content).to.be.a('string');
  });
});

describe('a key refers only to MCP servers its organisation can see', () => {
  const ACME_ADMIN = 'sk-acme-admin-SERVERS-4410';
  let gw: TestGateway;
  before(async () => {
    gw = await testConfig()
      .withOrg('acme')
      .withOrg('globex')
      .withKey(ACME_ADMIN, { id: 'acme-admin', role: 'admin' })
      .withMcpServer('docs', 'http://127.0.0.1:1/mcp', { org: 'acme', visibility: 'private' })
      .withMcpServer('payroll', 'http://127.0.0.1:1/mcp', { org: 'globex', visibility: 'private' })
      .withMcpServer('weather', 'http://127.0.0.1:1/mcp', { visibility: 'public' })
      .with({ adminKey: ADMIN, mcp: { healthCheckIntervalSeconds: 0, discoveryTimeoutSeconds: 1 } })
      .start();
  });
  after(() => gw.close());

  it('refuses another organisation\'s private server exactly like one that does not exist, on create and update', async () => {
    // accepting it told an organisation admin which names another organisation's private servers have
    for (const key of [ACME_ADMIN, ADMIN]) {
      await expectRefused(gw, 'POST', '/admin/v1/keys', [
        ['a server that does not exist', { org: 'acme', mcp: { servers: ['nope'] } }, 'mcp.servers[0]', 'mcp.servers[0]: unknown MCP server "nope"'],
        ['globex\'s private server', { org: 'acme', mcp: { servers: ['payroll'] } }, 'mcp.servers[0]', 'mcp.servers[0]: unknown MCP server "payroll"'],
        ['globex\'s private server in a tool list', { org: 'acme', mcp: { tools: { payroll: ['salaries'] } } }, 'mcp.tools.payroll', 'mcp.tools.payroll: unknown MCP server "payroll"'],
      ], key);
    }
    const created = await api(gw, 'POST', '/admin/v1/keys', ACME_ADMIN, { mcp: { servers: ['docs', 'weather'] } });
    expect(created.status, created.text).to.equal(201);
    await expectRefused(gw, 'PATCH', `/admin/v1/keys/${created.body.id}`, [
      ['globex\'s private server', { mcp: { servers: ['docs', 'payroll'] } }, 'mcp.servers[1]', 'mcp.servers[1]: unknown MCP server "payroll"'],
    ], ACME_ADMIN);
    // globex's own keys may name it
    expect((await api(gw, 'POST', '/admin/v1/keys', ADMIN, { org: 'globex', mcp: { servers: ['payroll'] } })).status).to.equal(201);
  });
});
