import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createClient } from '@keyv/redis';
import OpenAI from 'openai';
import type { GatewayConfigInput } from '../../core/config/types';
import { FakeMcpServer } from '../support/fake-mcp-server';
import { FakeOpenAI, chatCompletion } from '../support/fake-openai';
import { eventually } from '../support/eventually';
import { startPostgres } from '../support/postgres-server';
import { startRedis, type RedisServer } from '../support/redis-server';
import { startGateway, type TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const ADMIN = 'sk-fleet-admin-1';
const BUDGETED = 'sk-fleet-budgeted-1';
/** 10 prompt tokens at $100/M + 5 completion tokens at $200/M */
const COST_PER_REQUEST = 0.002;

/**
 * Two gateway instances, each with its own connections, on one SQLite database for records and one real
 * redis-server beside it (`store: { url: sqlite://..., redis: redis://... }`), as a fleet runs.
 */
describe('a fleet: two gateway instances on SQLite records with Redis beside them', function () {
  let redis: RedisServer;
  let upstream: FakeOpenAI;
  let dir: string;
  let a: TestGateway;
  let b: TestGateway;

  before(async () => {
    redis = await startRedis();
    upstream = await new FakeOpenAI().start();
  });
  after(async () => {
    await upstream?.stop();
    await redis?.stop();
  });
  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'mg-fleet-'));
    upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
    const config: GatewayConfigInput = testConfig()
      .withKey(BUDGETED, { id: 'budgeted', maxBudget: 10 * COST_PER_REQUEST })
      .withProvider({ id: 'oai', type: 'openai', baseUrl: `${upstream.url}/v1` })
      .withModel('priced', { model: 'm', price: { inputPerMTok: 100, outputPerMTok: 200 } })
      .with({ adminKey: ADMIN, store: { url: `sqlite://${path.join(dir, 'gateway.db')}`, redis: redis.url, sweepIntervalSeconds: 0 } })
      .build();
    a = await startGateway(config);
    b = await startGateway(config);
  });
  afterEach(async () => {
    await a?.close();
    await b?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const chat = (gw: TestGateway, key: string) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'priced', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }),
    });

  it('refuses a key revoked on one instance on the other within a second (the other had it cached)', async () => {
    const created = await fetch(`${a.url}/admin/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ org: 'acme', name: 'leaving' }) });
    expect(created.status).to.equal(201);
    const { id, key } = (await created.json()) as { id: string; key: string };
    // both instances have seen the key work, so both have it in their key cache (5 s)
    expect((await chat(a, key)).status).to.equal(200);
    expect((await chat(b, key)).status).to.equal(200);

    const revoked = await fetch(`${a.url}/admin/v1/keys/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN}` } });
    expect(revoked.status).to.equal(200);
    const start = Date.now();
    let served = 0;
    let status = 200;
    while (Date.now() - start < 6000) {
      status = (await chat(b, key)).status;
      if (status !== 200) break;
      served++;
      await new Promise((r) => setTimeout(r, 20));
    }
    const elapsed = Date.now() - start;
    expect(status, 'the other instance refuses the revoked key').to.equal(401);
    expect(elapsed, `ms until instance b refused (served ${served} meanwhile)`).to.be.below(1000);
  });

  it('lets at most 11 of 50 concurrent requests, split over both, through a budget that fits 10: the counter is on Redis', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }), delayMs: 200 };
    const clients = [a, b].map((gw) => new OpenAI({ apiKey: BUDGETED, baseURL: `${gw.url}/v1`, maxRetries: 0 }));
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        clients[i % 2].chat.completions.create({ model: 'priced', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }).then(
          () => 200,
          (err: InstanceType<typeof OpenAI.APIError>) => `${err.status} ${err.code}`,
        ),
      ),
    );
    const passed = results.filter((r) => r === 200).length;
    expect(passed).to.be.within(1, 11);
    expect(results.filter((r) => r !== 200)).to.satisfy((refused: string[]) => refused.every((r) => r === '429 budget_exceeded'));

    // the budget counter lives on Redis, not in the SQLite file both instances share
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      const counters = await client.keys('mg:n:limits:budget:key:*budgeted*') // a config key's counters are named with its organisation;
      expect(counters, 'budget counter keys on Redis').to.have.length(1);
      expect(Number(await client.get(counters[0]))).to.be.above(0);
    } finally {
      await client.quit();
    }
  });

  it('Redis frozen: requests that need no counter, keys stored in SQLite and the management API keep working', async () => {
    const created = await fetch(`${a.url}/admin/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ org: 'acme', name: 'unlimited' }) });
    const { key } = (await created.json()) as { key: string };
    redis.pause();
    try {
      // budgeted requests at once: each waits out its counter command on Redis, and they all time out together
      const refused = await Promise.all(Array.from({ length: 20 }, () => chat(a, BUDGETED)));
      expect(refused.map((r) => r.status)).to.deep.equal(Array(20).fill(503));
      const listed = await fetch(`${a.url}/admin/v1/keys`, { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(listed.status, 'the management API reads SQLite, which answers').to.equal(200);
      expect((await chat(a, key)).status, 'a stored key without limits, not cached on this instance').to.equal(200);
      expect((await chat(a, BUDGETED)).status, 'a budgeted request still needs Redis').to.equal(503);
    } finally {
      redis.resume();
    }
    await eventually(async () => (await chat(a, BUDGETED)).status === 200, 5000);
  });
});

describe('a fleet: MCP servers and tool states changed on one instance reach the other within a second', function () {
  const MEMBER = 'sk-fleet-member-1';
  let redis: RedisServer;
  let upstream: FakeMcpServer;
  let dir: string;
  let a: TestGateway;
  let b: TestGateway;

  before(async () => {
    redis = await startRedis();
  });
  after(async () => redis?.stop());
  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'mg-fleet-mcp-'));
    upstream = await FakeMcpServer.start({ tools: { search: { description: 'Search' }, fetch: { description: 'Fetch' } } });
    // no periodic health check: only the change events can tell instance b
    const config = testConfig()
      .withKey(MEMBER, { id: 'member' })
      .with({ adminKey: ADMIN, mcp: { healthCheckIntervalSeconds: 0 }, store: { url: `sqlite://${path.join(dir, 'gateway.db')}`, redis: redis.url, sweepIntervalSeconds: 0 } })
      .build();
    a = await startGateway(config);
    b = await startGateway(config);
  });
  afterEach(async () => {
    await a?.close();
    await b?.close();
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const admin = (method: string, urlPath: string, body?: unknown) =>
    fetch(`${a.url}${urlPath}`, { method, headers: { authorization: `Bearer ${ADMIN}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });

  async function toolsOnB(): Promise<string[]> {
    const res = await fetch(`${b.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-gateway-api-key': `Bearer ${MEMBER}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    return ((await res.json()) as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name).sort();
  }

  /** ms until instance b lists `expected` (fails after 5 s, the old key-cache-like delay) */
  async function msUntilB(expected: string[]): Promise<number> {
    const start = Date.now();
    let seen: string[] = [];
    while (Date.now() - start < 5000) {
      seen = await toolsOnB();
      if (JSON.stringify(seen) === JSON.stringify(expected)) return Date.now() - start;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`instance b still lists ${JSON.stringify(seen)}, not ${JSON.stringify(expected)}`);
  }

  it('registration, tool disable and removal', async () => {
    expect(await toolsOnB()).to.deep.equal([]);
    const created = await admin('POST', '/admin/v1/mcp/servers', { name: 'docs', url: upstream.url });
    expect(created.status).to.equal(201);
    const { id } = (await created.json()) as { id: string };
    expect(await msUntilB(['fetch', 'search']), 'registered (ms)').to.be.below(1000);

    expect((await admin('POST', `/admin/v1/mcp/servers/${id}/tools/search/disable`)).status).to.equal(200);
    expect(await msUntilB(['fetch']), 'tool disabled (ms)').to.be.below(1000);

    expect((await admin('DELETE', `/admin/v1/mcp/servers/${id}`)).status).to.equal(200);
    expect(await msUntilB([]), 'removed (ms)').to.be.below(1000);
  });
});

describe('a fleet on PostgreSQL without Redis: changes travel by LISTEN/NOTIFY', function () {
  let upstream: FakeOpenAI;
  let a: TestGateway;
  let b: TestGateway;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    upstream.script = { kind: 'json', body: chatCompletion('ok') };
    const url = await (await startPostgres()).createDatabase();
    const config = testConfig()
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'm' })
      .with({ adminKey: ADMIN, store: { url, sweepIntervalSeconds: 0 } })
      .build();
    a = await startGateway(config);
    b = await startGateway(config);
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await upstream?.stop();
  });

  const chat = (gw: TestGateway, key: string) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }),
    });

  it('refuses a key revoked on one instance on the other within a second (the other had it cached)', async () => {
    const created = await fetch(`${a.url}/admin/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ org: 'acme', name: 'leaving' }) });
    const { id, key } = (await created.json()) as { id: string; key: string };
    expect((await chat(a, key)).status).to.equal(200);
    expect((await chat(b, key)).status).to.equal(200);
    expect((await fetch(`${a.url}/admin/v1/keys/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN}` } })).status).to.equal(200);
    const start = Date.now();
    let status = 200;
    while (Date.now() - start < 6000 && (status = (await chat(b, key)).status) === 200) await new Promise((r) => setTimeout(r, 20));
    expect(status).to.equal(401);
    expect(Date.now() - start, 'ms until instance b refused').to.be.below(1000);
  });
});

/**
 * A budget set through the management API on an organisation that has spent already: its empty counter is
 * given the logged spend by the first request to find it empty. Requests whose estimate is 0 (a model
 * without a price) leave it empty, so each instance's first one found it so, and each added the spend.
 */
describe('a fleet on PostgreSQL: a budget set on spend already logged counts that spend once', function () {
  let upstream: FakeOpenAI;
  let a: TestGateway;
  let b: TestGateway;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
    const url = await (await startPostgres()).createDatabase();
    const config = testConfig()
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('priced', { model: 'm', price: { inputPerMTok: 100, outputPerMTok: 200 } })
      .withModel('free', { model: 'm' })
      // a loaded machine's store answers late: a refusal (503) would not say how the budget counted
      .with({ adminKey: ADMIN, store: { url, sweepIntervalSeconds: 0, timeoutMs: 10_000 } })
      .build();
    a = await startGateway(config);
    b = await startGateway(config);
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await upstream?.stop();
  });

  const admin = async (method: string, path: string, body?: object) => {
    const res = await fetch(`${a.url}${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as any };
  };
  const chat = (gw: TestGateway, key: string, model: string) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }),
    });

  it('when both instances first see the counter at the same moment, with requests that cost nothing', async () => {
    expect((await admin('POST', '/admin/v1/organizations', { id: 'initech' })).status).to.equal(201);
    const { key } = (await admin('POST', '/admin/v1/keys', { org: 'initech' })).json as { key: string };
    for (let i = 0; i < 3; i++) expect((await chat(a, key, 'priced')).status).to.equal(200);
    // b knows the key too, so neither instance's next request waits on a read the other does not make
    expect((await chat(b, key, 'free')).status).to.equal(200);
    await eventually(async () => expect((await admin('GET', '/admin/v1/spend?groupBy=org')).json.total_cost).to.be.closeTo(3 * COST_PER_REQUEST, 1e-9));

    expect((await admin('PATCH', '/admin/v1/organizations/initech', { maxBudget: 10 * COST_PER_REQUEST })).status).to.equal(200);
    const statuses = await Promise.all(Array.from({ length: 8 }, (_, i) => chat(i % 2 ? b : a, key, 'free').then((r) => r.status)));
    expect(statuses).to.deep.equal(Array(8).fill(200));
    const budget = ((await admin('GET', '/admin/v1/budgets')).json.data as { id: string; spent: number }[]).find((r) => r.id === 'initech');
    expect(budget?.spent).to.be.closeTo(3 * COST_PER_REQUEST, 1e-9);
  });
});

/**
 * Two fleets on one redis-server, each in a database of its own (`redis://host:port/1` and `/2`, as
 * staging and production often share a server): Redis pub/sub ignores the database, so a change event
 * published on one was delivered to the other, and a deployment failing on staging was put in cooldown
 * on production too, where it was healthy.
 */
describe('two fleets on one Redis server in different databases: events stay in their fleet', function () {
  const MEMBER_KEY = 'sk-fleet-member-2';
  let redis: RedisServer;
  let failing: FakeOpenAI;
  let healthy: FakeOpenAI;
  let staging: TestGateway[] = [];
  let production: TestGateway;

  before(async () => {
    redis = await startRedis();
    failing = await new FakeOpenAI().start();
    failing.script = { kind: 'json', status: 500, body: { error: { message: 'down', type: 'server_error' } } };
    healthy = await new FakeOpenAI().start();
    healthy.script = { kind: 'json', body: chatCompletion('ok') };
    const fleet = (upstream: FakeOpenAI, db: number) =>
      testConfig()
        .withKey(MEMBER_KEY, { id: 'member' })
        .withOpenAI('oai', upstream, 'sk-provider')
        .withModel('gpt-test', { model: 'm' })
        .with({ adminKey: ADMIN, routing: { retries: 0, cooldown: { failures: 1, cooldownSeconds: 60 } }, store: { url: `${redis.url}/${db}`, sweepIntervalSeconds: 0 } })
        .build();
    staging = [await startGateway(fleet(failing, 1)), await startGateway(fleet(failing, 1))];
    production = await startGateway(fleet(healthy, 2));
  });
  after(async () => {
    for (const gw of [...staging, production]) await gw?.close();
    await failing?.stop();
    await healthy?.stop();
    await redis?.stop();
  });

  const state = async (gw: TestGateway) => {
    const res = await fetch(`${gw.url}/admin/v1/deployments`, { headers: { authorization: `Bearer ${ADMIN}` } });
    return ((await res.json()) as { data: { id: string; state: string }[] }).data.map((d) => `${d.id} ${d.state}`);
  };

  it('a cooldown on staging reaches the other staging instance, and not production', async () => {
    const res = await fetch(`${staging[0].url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MEMBER_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).to.equal(502);
    expect(await state(staging[0])).to.deep.equal(['oai/m cooling_down']);
    await eventually(async () => (await state(staging[1]))[0] === 'oai/m cooling_down', 2000);
    // the event has reached every subscriber of the channel it was published on by now
    await new Promise((r) => setTimeout(r, 300));
    expect(await state(production)).to.deep.equal(['oai/m healthy']);
  });
});
