import { expect } from 'chai';
import type { GatewayConfigInput } from '../../core/config/types';
import { FakeOpenAI, chatCompletion } from '../support/fake-openai';
import { startPostgres, type PostgresServer } from '../support/postgres-server';
import pg from 'pg';
import { PostgresBackend } from '../../core/store/postgres-backend';
import { RedisBackend } from '../../core/store/redis-backend';
import { eventually } from '../support/eventually';
import { FakeClock } from '../core/limits/fake-clock';
import { startRedis, type RedisServer } from '../support/redis-server';
import { startGateway, type TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const ADMIN = 'sk-faults-admin-1';
const CONFIG_KEY = 'sk-faults-config-1';
const UNKNOWN_KEY = 'sk-faults-never-issued';
/** the store timeout (250 ms) plus a margin far below the 8 s a frozen Redis cost before */
const BOUND_MS = 2000;

interface Outcome {
  who: string;
  status: number;
  code?: string;
  ms: number;
  requestId?: string;
}

interface FrozenStore {
  url: string;
  pause(): void;
  resume(): void;
  stop?(): Promise<void>;
}

/**
 * The store frozen with SIGSTOP (connections stay open, nothing answers: the worst case for a client
 * without timeouts) for 10 s under steady traffic, then thawed.
 */
function frozenStoreScenario(name: string, open: () => Promise<FrozenStore>) {
  describe(`store faults: ${name} frozen for 10 s under traffic`, function () {
    this.timeout(60_000);
    let store: FrozenStore;
    let upstream: FakeOpenAI;
    let gw: TestGateway;

    before(async () => {
      store = await open();
      upstream = await new FakeOpenAI().start();
      upstream.script = { kind: 'json', body: chatCompletion('ok') };
      const config: GatewayConfigInput = testConfig()
        .withKey(CONFIG_KEY, { id: 'from-config' })
        .withOpenAI('oai', upstream, 'sk-provider')
        .withModel('gpt-test', { model: 'm' })
        .with({ adminKey: ADMIN, store: { url: store.url, sweepIntervalSeconds: 0 } })
        .build();
      gw = await startGateway(config);
    });
    after(async () => {
      store?.resume();
      await gw?.close();
      await upstream?.stop();
      await store?.stop?.();
    });

    async function call(who: string, key: string, path = '/v1/chat/completions'): Promise<Outcome> {
      const start = Date.now();
      const init: RequestInit = path.startsWith('/admin')
        ? { headers: { authorization: `Bearer ${key}` } }
        : { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }) };
      const res = await fetch(`${gw.url}${path}`, { ...init, signal: AbortSignal.timeout(15_000) });
      const body = (await res.json()) as { error?: { code?: string } };
      return { who, status: res.status, code: body.error?.code, ms: Date.now() - start, requestId: res.headers.get('x-gateway-request-id') ?? undefined };
    }

    it('bounds every wait, serves known keys, answers 503 store_unavailable otherwise, and keeps every log row', async () => {
      const created = await fetch(`${gw.url}/admin/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ org: 'acme', name: 'stored' }) });
      const storedKey = ((await created.json()) as { key: string }).key;
      // seen once: from now on the gateway may serve it from its cache
      expect((await call('stored', storedKey)).status).to.equal(200);

      store.pause();
      const outcomes: Outcome[] = [];
      const until = Date.now() + 10_000;
      try {
        while (Date.now() < until) {
          outcomes.push(...(await Promise.all([call('stored', storedKey), call('config', CONFIG_KEY), call('unknown', UNKNOWN_KEY), call('admin', ADMIN, '/admin/v1/keys')])));
          await new Promise((r) => setTimeout(r, 100));
        }
      } finally {
        store.resume();
      }

      const slowest = Math.max(...outcomes.map((o) => o.ms));
      if (process.env.FAULT_STATS) console.log(JSON.stringify({ requests: outcomes.length, slowest, byWho: ['stored', 'config', 'unknown', 'admin'].map((w) => [w, Math.max(...outcomes.filter((o) => o.who === w).map((o) => o.ms))]) }));
      expect(slowest, 'longest wait during the fault (ms)').to.be.below(BOUND_MS);
      const by = (who: string) => outcomes.filter((o) => o.who === who);
      // rounds before the first store command found Redis frozen run through the 5 s key cache too
      expect(by('stored').length).to.be.above(10);
      expect(by('stored').map((o) => o.status), 'a key seen before, served from cache (grace period)').to.satisfy((s: number[]) => s.every((x) => x === 200));
      expect(by('config').map((o) => o.status), 'a key from the config file').to.satisfy((s: number[]) => s.every((x) => x === 200));
      expect(by('unknown').map((o) => `${o.status} ${o.code}`), 'an unknown key: 503, never 401').to.satisfy((s: string[]) => s.every((x) => x === '503 store_unavailable'));
      expect(by('admin').map((o) => `${o.status} ${o.code}`), 'the management API').to.satisfy((s: string[]) => s.every((x) => x === '503 store_unavailable'));

      // after the thaw: recovered without a restart, and every request served meanwhile has its log row
      const servedIds = new Set(outcomes.filter((o) => o.status === 200).map((o) => o.requestId!));
      let logged = new Set<string>();
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        const res = await fetch(`${gw.url}/admin/v1/logs?limit=1000`, { headers: { authorization: `Bearer ${ADMIN}` } });
        if (res.status === 200) {
          logged = new Set(((await res.json()) as { data: { id: string }[] }).data.map((e) => e.id));
          if ([...servedIds].every((id) => logged.has(id))) break;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
      expect([...servedIds].filter((id) => !logged.has(id)), 'served during the fault, missing from the log').to.deep.equal([]);
      const rows = ((await (await fetch(`${gw.url}/admin/v1/logs?limit=1000`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as { data: { id: string }[] }).data;
      expect(rows.length, 'no row written twice').to.equal(new Set(rows.map((r) => r.id)).size);
      expect((await call('unknown', UNKNOWN_KEY)).status, 'an unknown key after recovery').to.equal(401);
      expect(gw.gateway.services.requestLog.writer.dropped).to.equal(0);
    });
  });
}

frozenStoreScenario('Redis', startRedis);
frozenStoreScenario('PostgreSQL', async () => {
  const server = await startPostgres();
  // the run's shared server: only this test's database is dropped with it, the server stays up
  return { url: await server.createDatabase(), pause: server.pause, resume: server.resume };
});

/**
 * SIGTERM while the store is frozen (the very moment an operator restarts things): the drain gives the
 * log rows and limit corrections its window, then closes the store. Closing waited for Redis to answer
 * QUIT, and for PostgreSQL to close its end of the connections, which a frozen server never does: the
 * gateway kept refusing requests as "draining" and never exited until the store came back.
 */
function stopWhileFrozen(name: string, store: (redis: RedisServer, postgresUrl: string) => { url: string; redis?: string }, freeze: (redis: RedisServer, postgres: PostgresServer) => () => void) {
  describe(`store faults: the gateway stops while ${name} is frozen`, function () {
    this.timeout(30_000);
    let redis: RedisServer;
    let postgres: PostgresServer;
    let upstream: FakeOpenAI;
    let gw: TestGateway;
    let thaw = () => undefined as void;

    before(async () => {
      redis = await startRedis();
      postgres = await startPostgres();
      upstream = await new FakeOpenAI().start();
      upstream.script = { kind: 'json', body: chatCompletion('ok') };
      gw = await startGateway(
        testConfig()
          .withKey(CONFIG_KEY, { id: 'from-config' })
          .withOpenAI('oai', upstream, 'sk-provider')
          .withModel('gpt-test', { model: 'm' })
          .with({ adminKey: ADMIN, server: { drainSeconds: 1 }, store: { ...store(redis, await postgres.createDatabase()), sweepIntervalSeconds: 0 } })
          .build(),
      );
    });
    after(async () => {
      thaw();
      await gw?.close();
      await upstream?.stop();
      await redis?.stop();
    });

    const chat = () =>
      fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${CONFIG_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }) });

    it('finishes its drain while the store is still frozen', async () => {
      expect((await chat()).status).to.equal(200);
      thaw = freeze(redis, postgres);
      // served from the config key; its log row waits for the store
      expect((await chat()).status).to.equal(200);
      const stopped = await Promise.race([gw.close().then(() => 'drained'), new Promise((r) => setTimeout(() => r('still draining 15 s into the freeze'), 15_000))]);
      expect(stopped).to.equal('drained');
    });
  });
}

const freezeRedis = (redis: RedisServer) => {
  redis.pause();
  return () => redis.resume();
};
stopWhileFrozen('Redis', (redis) => ({ url: redis.url }), freezeRedis);
stopWhileFrozen('the Redis beside PostgreSQL', (redis, url) => ({ url, redis: redis.url }), freezeRedis);
stopWhileFrozen('PostgreSQL', (_redis, url) => ({ url }), (_redis, postgres) => {
  postgres.pause();
  return () => postgres.resume();
});

/**
 * A log write that PostgreSQL holds past the pool's query timeout (here an operator's `LOCK TABLE`, as a
 * `CREATE INDEX` on the log takes; a VM pause or a partition that heals does the same): the driver gives
 * up and closes the connection, but the server still runs the statement and commits it once the lock is
 * gone. The writer sends the batch again, and that copy commits too.
 */
describe('store faults: PostgreSQL holds a log write past the query timeout', function () {
  this.timeout(30_000);
  let upstream: FakeOpenAI;
  let backend: PostgresBackend;
  let gw: TestGateway;
  let url: string;

  before(async () => {
    url = await (await startPostgres()).createDatabase();
    upstream = await new FakeOpenAI().start();
    upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
    // the gateway's store with a 1 s query timeout instead of 30 s, so the test waits seconds, not minutes
    backend = await PostgresBackend.connect(url, Date.now, undefined, 1000);
    gw = await startGateway(
      testConfig()
        .withKey(CONFIG_KEY, { id: 'from-config' })
        .withOpenAI('oai', upstream, 'sk-provider')
        .withModel('gpt-test', { model: 'm', price: { inputPerMTok: 100, outputPerMTok: 200 } })
        .with({ adminKey: ADMIN, store: { url, sweepIntervalSeconds: 0 } })
        .build(),
      { store: backend },
    );
  });
  after(async () => {
    await gw?.close();
    await backend?.close();
    await upstream?.stop();
  });

  it('writes the row and its spend once, though the first write timed out and was sent again', async () => {
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    let requestId: string;
    try {
      await db.query('BEGIN');
      // inserts wait, reads go on
      await db.query('LOCK TABLE logs IN EXCLUSIVE MODE');
      const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${CONFIG_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }) });
      expect(res.status).to.equal(200);
      requestId = res.headers.get('x-gateway-request-id')!;
      // the first write gives up after 1 s and the writer sends the batch again
      await eventually(() => gw.gateway.services.requestLog.writer.failedWrites >= 2, 10_000);
      await new Promise((r) => setTimeout(r, 1500));
      await db.query('COMMIT');
      await eventually(() => gw.gateway.services.requestLog.writer.queued === 0, 10_000);
      // a copy still on its way lands within a query timeout
      await new Promise((r) => setTimeout(r, 1500));
      const rows = (await db.query<{ n: string }>('SELECT count(*) AS n FROM logs WHERE id = $1', [requestId])).rows[0].n;
      const spend = (await db.query<{ requests: string; cost: number }>('SELECT sum(requests) AS requests, sum(cost) AS cost FROM spend_rollup')).rows[0];
      expect({ rows: Number(rows), requests: Number(spend.requests), cost: spend.cost }).to.deep.equal({ rows: 1, requests: 1, cost: 0.002 });
    } finally {
      await db.query('ROLLBACK').catch(() => undefined);
      await db.end();
    }
    const view = (await (await fetch(`${gw.url}/admin/v1/spend?groupBy=key`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as { total_cost: number; data: { requests: number }[] };
    expect(view.data.map((r) => r.requests)).to.deep.equal([1]);
  });
});

/**
 * A log query whose filter no index serves walks the whole log (500 rows a read on Redis), and the
 * guardrails view scans it. The timeout bounds each read of the store: over 150,000 rows the walk, and
 * over 300,000 the scan's one read, took longer than one command's timeout, and they answered 503
 * store_unavailable from a store that answered every read.
 */
describe('a long request log on Redis: filtered log queries answer', function () {
  this.timeout(60_000);
  const ROWS = 300_000;
  let redis: RedisServer;
  let gw: TestGateway;
  /** the first row's time: rows a second apart */
  let start: number;

  before(async () => {
    redis = await startRedis();
    // the rows another instance wrote, straight into the shared store
    const other = await RedisBackend.connect(redis.url);
    start = Date.now() - ROWS * 1000;
    for (let i = 0; i < ROWS; i += 5000) {
      await other.appendLogs(
        Array.from({ length: 5000 }, (_, j) => {
          const n = i + j;
          const details = n % 2 ? { guardrails: [{ id: 'house-rules', verdict: 'allow' }] } : undefined;
          return { id: `req_${n}`, time: new Date(start + n * 1000).toISOString(), keyId: n === 0 ? 'oldest' : 'busy', org: 'acme', endpoint: 'chat', model: 'gpt-test', deploymentId: 'oai/m', promptTokens: 10, completionTokens: 5, cost: 0.001, status: 200, latencyMs: 12, details };
        }),
      );
    }
    await other.close();
    gw = await startGateway(testConfig().with({ adminKey: ADMIN, guardrails: [{ id: 'house-rules', engine: 'block', options: { words: ['project falcon'] } }], store: { url: redis.url, sweepIntervalSeconds: 0 } }).build());
  });
  after(async () => {
    await gw?.close();
    await redis?.stop();
  });

  it('counts the guardrail verdicts of the last day, each row once', async () => {
    const res = await fetch(`${gw.url}/admin/v1/guardrails`, { headers: { authorization: `Bearer ${ADMIN}` } });
    const body = (await res.json()) as { since?: string; data?: { id: string; verdicts: { allow: number } }[]; error?: { code: string } };
    expect(res.status, JSON.stringify(body.error)).to.equal(200);
    // every other row carries a verdict
    const inDay = Array.from({ length: ROWS }, (_, n) => n).filter((n) => n % 2 && new Date(start + n * 1000).toISOString() >= body.since!).length;
    expect(body.data!.map((g) => [g.id, g.verdicts.allow])).to.deep.equal([['house-rules', inDay]]);
  });

  it('finds the one row of a key at the far end of the log, and none of a key with no rows', async () => {
    const logs = async (query: string) => {
      const res = await fetch(`${gw.url}/admin/v1/logs?${query}`, { headers: { authorization: `Bearer ${ADMIN}` } });
      return { status: res.status, body: (await res.json()) as { data?: { id: string }[]; error?: { code: string } } };
    };
    const oldest = await logs('key=oldest');
    expect(oldest.status, JSON.stringify(oldest.body.error)).to.equal(200);
    expect(oldest.body.data!.map((e) => e.id)).to.deep.equal(['req_0']);
    const none = await logs('key=nobody&status=5xx');
    expect(none.status, JSON.stringify(none.body.error)).to.equal(200);
    expect(none.body.data).to.deep.equal([]);
  });
});

/**
 * The grace period (`store.graceSeconds`) while the store is frozen, for a key of an organisation made
 * through the management API: the key is served from cache, and so must its organisation be, which is
 * read from the store too (for its limits). The injected clock moves past the 5 s caches at once.
 */
describe('store faults: a key of an organisation made through the management API, while Redis is frozen', function () {
  this.timeout(30_000);
  let redis: RedisServer;
  let upstream: FakeOpenAI;
  let gw: TestGateway;
  const clock = new FakeClock(Date.now());

  before(async () => {
    redis = await startRedis();
    upstream = await new FakeOpenAI().start();
    upstream.script = { kind: 'json', body: chatCompletion('ok') };
    gw = await startGateway(
      testConfig()
        .withOpenAI('oai', upstream, 'sk-provider')
        .withModel('gpt-test', { model: 'm' })
        .with({ adminKey: ADMIN, store: { url: redis.url, sweepIntervalSeconds: 0 } })
        .build(),
      { clock },
    );
  });
  after(async () => {
    redis?.resume();
    await gw?.close();
    await upstream?.stop();
    await redis?.stop();
  });

  const admin = (path: string, body: unknown) =>
    fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const chat = async (key: string) => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }) });
    return `${res.status} ${((await res.json()) as { error?: { code?: string } }).error?.code ?? ''}`.trim();
  };

  it('keeps serving the key within the grace period past the organisation cache: it got 503 store_unavailable 5 s into the freeze', async () => {
    expect((await admin('/admin/v1/organizations', { id: 'initech' })).status).to.equal(201);
    const created = await admin('/admin/v1/keys', { org: 'initech', name: 'no-limits' });
    expect(created.status).to.equal(201);
    const { key } = (await created.json()) as { key: string };
    // seen once: the key and its organisation are in this instance's caches
    expect(await chat(key)).to.equal('200');

    redis.pause();
    try {
      // past both 5 s caches, well within the 60 s grace
      clock.advance(6_000);
      expect(await chat(key), 'a key validated 6 s ago, in an organisation read 6 s ago').to.equal('200');
      // past the grace: the store is needed again, and it says so
      clock.advance(60_000);
      expect(await chat(key)).to.equal('503 store_unavailable');
    } finally {
      redis.resume();
    }
  });
});
