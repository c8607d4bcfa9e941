import { expect } from 'chai';
import net from 'node:net';
import { ConfigError } from '../../../core/errors/gateway-error';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sealedCollection } from '../../../core/store/secrets/sealed-collection';
import { openStore } from '../../../core/store/open-store';
import type { StoreBackend } from '../../../core/store/store-backend';
import type { LogEntry } from '../../../core/store/log-entry';
import { MEMORY_LOG_ROWS, MEMORY_LOG_TRIM_BATCH } from '../../../core/store/memory-backend';
import { createLogger } from '../../../core/observability/logger';
import { startRedis, type RedisServer } from '../../support/redis-server';
import { startPostgres, type PostgresServer } from '../../support/postgres-server';
import { startSilentRelay } from '../../support/silent-relay';
import { PostgresBackend } from '../../../core/store/postgres-backend';
import type { SqliteBackend } from '../../../core/store/sqlite-backend';
import { MIGRATIONS } from '../../../core/store/postgres-migrations';
import Database from 'better-sqlite3';
import pg from 'pg';

function entry(i: number, extra: Partial<LogEntry> = {}): LogEntry {
  return {
    id: `r${i}`,
    time: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    keyId: i % 2 ? 'k1' : 'k2',
    org: 'acme',
    endpoint: 'chat',
    model: 'm',
    deploymentId: 'p/m',
    promptTokens: 1,
    completionTokens: 1,
    cost: 0.5,
    status: 200,
    latencyMs: 1,
    ...extra,
  };
}

/** The same contract for every backend. */
function describeBackend(name: string, open: (now: () => number) => Promise<StoreBackend>) {
  describe(`${name} store`, () => {
    let store: StoreBackend;
    /** the backend's clock: real time plus what a test adds */
    let offset = 0;
    before(async () => {
      store = await open(() => Date.now() + offset);
    });
    after(async () => store.close());

    it('keeps records in named collections', async () => {
      const servers = store.collection<{ id: string; n: number }>(`servers-${name}`);
      await servers.set('a', { id: 'a', n: 1 });
      await servers.set('b', { id: 'b', n: 2 });
      await servers.set('a', { id: 'a', n: 3 });
      expect(await servers.get('a')).to.deep.equal({ id: 'a', n: 3 });
      expect((await servers.all()).map((s) => s.id).sort()).to.deep.equal(['a', 'b']);
      expect(await servers.delete('b')).to.equal(true);
      expect(await servers.get('b')).to.equal(undefined);
    });

    it('replaces a record only while it still holds the value read, in the secrets collection too', async () => {
      const plain = store.collection<{ v: string }>(`cas-${name}`);
      const sealed = sealedCollection<{ v: string }>(store, 'mcp_server_secrets');
      for (const c of [plain, sealed]) {
        await c.set('x', { v: 'read' });
        const seen = (await c.get('x'))!;
        await c.set('x', { v: 'written meanwhile' });
        expect(await c.replace('x', seen, { v: 'stale rewrite' })).to.equal(false);
        expect(await c.get('x')).to.deep.equal({ v: 'written meanwhile' });
        expect(await c.replace('x', { v: 'written meanwhile' }, { v: 'rewrite' })).to.equal(true);
        expect(await c.get('x')).to.deep.equal({ v: 'rewrite' });
        expect(await c.replace('gone', { v: 'read' }, { v: 'x' })).to.equal(false);
        await c.delete('x');
      }
      expect(JSON.stringify(await store.collection('mcp_server_secrets').entries())).to.not.include('rewrite');
    });

    it('adds to counters atomically under concurrency', async () => {
      const key = `spend-${name}-${Date.now()}`;
      await Promise.all(Array.from({ length: 50 }, () => store.incrByFloat(key, 0.1)));
      expect(await store.getCounter(key)).to.be.closeTo(5, 1e-9);
    });

    it('pages the request log newest first with filters and a cursor', async () => {
      for (let i = 0; i < 7; i++) await store.appendLog(entry(i, { org: `org-${name}` }));
      const first = await store.queryLogs({ org: `org-${name}`, limit: 3 });
      expect(first.data.map((e) => e.id)).to.deep.equal(['r6', 'r5', 'r4']);
      const second = await store.queryLogs({ org: `org-${name}`, limit: 3, cursor: first.nextCursor! });
      expect(second.data.map((e) => e.id)).to.deep.equal(['r3', 'r2', 'r1']);
      const third = await store.queryLogs({ org: `org-${name}`, limit: 3, cursor: second.nextCursor! });
      expect(third.data.map((e) => e.id)).to.deep.equal(['r0']);
      expect(third.nextCursor).to.equal(null);
      const byKey = await store.queryLogs({ org: `org-${name}`, key: 'k1', limit: 10 });
      expect(byKey.data.map((e) => e.id)).to.deep.equal(['r5', 'r3', 'r1']);
    });

    it('filters the request log by status range, time range and entry id, paging within the filter', async () => {
      const org = `status-${name}`;
      const statuses = [200, 429, 500, 200, 403, 502, 200];
      for (let i = 0; i < statuses.length; i++) await store.appendLog(entry(i, { org, id: `s${name}${i}`, status: statuses[i] }));
      const ids = async (q: Partial<Parameters<StoreBackend['queryLogs']>[0]>) => (await store.queryLogs({ org, limit: 10, ...q })).data.map((e) => e.id.slice(-1));
      expect(await ids({ statusMin: 400, statusMax: 599 })).to.deep.equal(['5', '4', '2', '1']);
      expect(await ids({ statusMin: 500, statusMax: 599 })).to.deep.equal(['5', '2']);
      expect(await ids({ statusMin: 200, statusMax: 200 })).to.deep.equal(['6', '3', '0']);
      // since inclusive, until exclusive
      expect(await ids({ since: entry(2).time, until: entry(5).time })).to.deep.equal(['4', '3', '2']);
      expect(await ids({ id: `s${name}4` })).to.deep.equal(['4']);
      expect(await ids({ id: 'nope' })).to.deep.equal([]);
      const page = await store.queryLogs({ org, statusMin: 400, statusMax: 599, limit: 2 });
      expect(page.data.map((e) => e.status)).to.deep.equal([502, 403]);
      const next = await store.queryLogs({ org, statusMin: 400, statusMax: 599, limit: 2, cursor: page.nextCursor! });
      expect(next.data.map((e) => e.status)).to.deep.equal([500, 429]);
    });

    it('appends a batch of log entries in order, one call for all of them', async () => {
      const org = `batch-${name}`;
      await store.appendLogs(Array.from({ length: 50 }, (_, i) => entry(i, { org, id: `b${name}${i}` })));
      const page = await store.queryLogs({ org, limit: 3 });
      expect(page.data.map((e) => e.id)).to.deep.equal([`b${name}49`, `b${name}48`, `b${name}47`]);
      const all = await store.queryLogs({ org, limit: 100 });
      expect(all.data).to.have.length(50);
    });

    it('logs, finds and rolls up an entry whose client-sent model name holds a NUL character', async () => {
      const org = `nul-${name}`;
      const model = 'evil\u0000model';
      await store.appendLogs([entry(1, { org, id: `nul${name}`, model })]);
      const found = await store.queryLogs({ org, model, limit: 5 });
      expect(found.data.map((e) => [e.id, e.model])).to.deep.equal([[`nul${name}`, model]]);
      expect((await store.spendBuckets()).filter((b) => b.org === org).map((b) => b.requests)).to.deep.equal([1]);
    });

    it('writes once, with its rollup, an entry whose token counts an upstream gave as no whole number (10.5, 1e999)', async () => {
      const org = `odd-tokens-${name}`;
      const rows = [entry(1, { org, id: `half${name}`, promptTokens: 10.5, completionTokens: 5 }), entry(3, { org, id: `inf${name}`, promptTokens: Infinity, completionTokens: 3 })];
      await store.appendLogs(rows);
      const found = await store.queryLogs({ org, limit: 10 });
      expect(found.data.map((e) => e.id)).to.deep.equal([`inf${name}`, `half${name}`]);
      const buckets = (await store.spendBuckets()).filter((b) => b.org === org);
      expect(buckets.map((b) => [b.requests, b.promptTokens, b.completionTokens])).to.deep.equal([[2, 11, 8]]);
      expect(buckets[0].cost).to.be.closeTo(1, 1e-9);
    });

    it('writes once, with its rollup, an entry whose token counts an upstream gave past what a counter holds (1e20)', async () => {
      const org = `huge-tokens-${name}`;
      const rows = [entry(1, { org, id: `huge${name}`, promptTokens: 1e20, completionTokens: 5 }), entry(3, { org, id: `big${name}`, promptTokens: 9e18, completionTokens: 9e18 })];
      await store.appendLogs(rows);
      const found = await store.queryLogs({ org, limit: 10 });
      expect(found.data.map((e) => e.id)).to.deep.equal([`big${name}`, `huge${name}`]);
      const buckets = (await store.spendBuckets()).filter((b) => b.org === org);
      expect(buckets.map((b) => b.requests)).to.deep.equal([2]);
      expect(buckets[0].promptTokens).to.be.at.least(1).and.at.most(Number.MAX_SAFE_INTEGER);
      expect(buckets[0].completionTokens).to.be.at.least(5).and.at.most(Number.MAX_SAFE_INTEGER);
    });

    it('writes an entry whose model a client named with tens of kilobytes of random characters, and finds it by that model', async () => {
      const org = `long-model-${name}`;
      let model = '';
      while (model.length < 40_000) model += Math.random().toString(36).slice(2);
      await store.appendLogs([entry(1, { org, id: `long${name}`, model }), entry(2, { org, id: `short${name}`, model: 'm' })]);
      expect((await store.queryLogs({ org, limit: 10 })).data.map((e) => e.id)).to.deep.equal([`short${name}`, `long${name}`]);
      expect((await store.queryLogs({ org, model, limit: 10 })).data.map((e) => [e.id, e.model])).to.deep.equal([[`long${name}`, model]]);
      const buckets = (await store.spendBuckets()).filter((b) => b.org === org);
      expect(buckets.map((b) => [b.model, b.requests]).sort()).to.deep.equal([[model, 1], ['m', 1]].sort());
    });

    it('adds every entry to its hour\'s spend rollup, so the rollups equal the sum of the log', async () => {
      const org = `rollup-${name}`;
      const at = (h: number, m: number) => new Date(Date.UTC(2025, 5, 1, h, m)).toISOString();
      const logged: LogEntry[] = [];
      for (let i = 0; i < 40; i++) {
        logged.push(entry(i, { org, id: `u${name}${i}`, time: at(10 + (i % 3), i), keyId: `k${i % 4}`, model: i % 5 ? 'm' : 'n', cost: 0.001 * (i + 1), promptTokens: i, completionTokens: 2 * i }));
      }
      // one by one, in batches, and concurrently: every write lands in the rollups once
      for (const e of logged.slice(0, 10)) await store.appendLog(e);
      await store.appendLogs(logged.slice(10, 30));
      await Promise.all([store.appendLogs(logged.slice(30, 35)), store.appendLogs(logged.slice(35))]);
      const buckets = (await store.spendBuckets(at(0, 0), at(23, 0))).filter((b) => b.org === org);
      const sum = (xs: { cost: number }[]) => xs.reduce((a, b) => a + b.cost, 0);
      expect(sum(buckets)).to.be.closeTo(sum(logged), 1e-9);
      expect(buckets.reduce((a, b) => a + b.requests, 0)).to.equal(40);
      expect(buckets.reduce((a, b) => a + b.completionTokens, 0)).to.equal(logged.reduce((a, e) => a + e.completionTokens, 0));
      // one row per hour and (key, org, model, deployment), not one per request
      expect(buckets.length).to.be.at.most(3 * 4 * 2);
      const ten = buckets.filter((b) => b.hour === at(10, 0) && b.keyId === 'k0' && b.model === 'n');
      const expected = logged.filter((e) => e.time.startsWith('2025-06-01T10') && e.keyId === 'k0' && e.model === 'n');
      expect(ten).to.have.length(1);
      expect(ten[0]).to.deep.include({ deploymentId: 'p/m', requests: expected.length });
      expect(ten[0].cost).to.be.closeTo(sum(expected), 1e-12);
      // hour bounds: [since, until)
      const eleven = (await store.spendBuckets(at(11, 0), at(12, 0))).filter((b) => b.org === org);
      expect(eleven.map((b) => b.hour)).to.satisfy((hours: string[]) => hours.length > 0 && hours.every((h) => h === at(11, 0)));
    });

    it('cuts the request log to its retention in batches, and the spend rollups stay', async () => {
      const org = `retention-${name}`;
      const old = (i: number) => entry(i, { org, id: `old${name}${i}`, time: new Date(Date.UTC(2020, 0, 1, 0, i)).toISOString() });
      await store.appendLogs(Array.from({ length: 5 }, (_, i) => old(i)));
      await store.appendLog(entry(9, { org, id: `new${name}`, time: new Date().toISOString() }));
      // everything earlier tests wrote is older than an hour too
      const before = new Date(Date.now() - 3_600_000).toISOString();
      const batches: number[] = [];
      for (let removed = -1; removed !== 0; ) batches.push((removed = await store.sweepLogs(before, 2)));
      expect(batches.slice(0, -2).every((n) => n === 2)).to.equal(true);
      expect(batches.reduce((a, b) => a + b, 0)).to.be.at.least(5);
      expect((await store.queryLogs({ org, limit: 10 })).data.map((e) => e.id)).to.deep.equal([`new${name}`]);
      expect((await store.queryLogs({ until: before, limit: 1 })).data).to.deep.equal([]);
      const kept = (await store.spendBuckets(undefined, new Date(Date.UTC(2021, 0, 1)).toISOString())).filter((b) => b.org === org);
      expect(kept.reduce((a, b) => a + b.requests, 0)).to.equal(5);
      expect(kept.reduce((a, b) => a + b.cost, 0)).to.be.closeTo(2.5, 1e-9);
    });

    it('keeps keyv values with a TTL', async () => {
      const kv = store.keyv(`ns-${name}`);
      await kv.set('a', { x: 1 });
      expect(await kv.get('a')).to.deep.equal({ x: 1 });
      await kv.set('short', 1, 1);
      await new Promise((r) => setTimeout(r, 20));
      expect(await kv.get('short')).to.equal(undefined);
    });

    it('sweeps expired keyv values by its clock, in batches of the size asked for', async () => {
      const kv = store.keyv(`sweep-${name}`);
      for (let i = 0; i < 5; i++) await kv.set(`old${i}`, { i }, 60_000);
      await kv.set('forever', 'kept');
      await kv.set('later', 'kept', 3_600_000);
      offset += 120_000;
      const batches: number[] = [];
      for (let removed = -1; removed !== 0; ) batches.push((removed = await store.sweepExpired(2)));
      expect(batches.slice(0, 3)).to.deep.equal([2, 2, 1]);
      expect(await kv.get('forever')).to.equal('kept');
      expect(await kv.get('later')).to.equal('kept');
    });

    it('keeps the newest ids of a recent list and returns the ones pushed out', async () => {
      const list = `recent-${name}`;
      const dropped: string[][] = [];
      for (let i = 0; i < 5; i++) dropped.push(await store.pushRecent(list, `r${i}`, 3, 60_000));
      expect(dropped).to.deep.equal([[], [], [], ['r0'], ['r1']]);
      const concurrent = await Promise.all(Array.from({ length: 20 }, (_, i) => store.pushRecent(`${list}-c`, `c${i}`, 5, 60_000)));
      expect(concurrent.flat()).to.have.length(15);
    });

    it('floors a counter at 0, so a refund larger than what it holds gives a budget no extra requests', async () => {
      // what the budget check does with each answer: refused once what was spent before the request reaches the budget
      const admitted = async (key: string, budget: number, cost: number): Promise<number> => {
        let through = 0;
        while (through < 10 && (await store.incrByFloat(key, cost, 60_000)) - cost < budget) through++;
        return through;
      };
      // a reservation taken back after its period rolled over lands on the new period's counter
      const fresh = `budget-fresh-${name}-${Date.now()}`;
      await store.incrByFloat(fresh, -3, 60_000);
      expect(await admitted(fresh, 1, 1)).to.equal(1);
      expect(await store.getCounter(fresh)).to.equal(2);
      // a correction applied twice to a live counter
      const live = `budget-live-${name}-${Date.now()}`;
      await store.incrByFloat(live, 0.5, 60_000);
      await store.incrByFloat(live, -2, 60_000);
      expect(await admitted(live, 1, 1)).to.equal(1);
      // a refund that reaches a counter whose row expired (not swept yet): the counter starts again
      const rolled = `budget-rolled-${name}-${Date.now()}`;
      await store.incrByFloat(rolled, 2, 1000);
      offset += 2000;
      await store.incrByFloat(rolled, -2, 60_000);
      expect(await admitted(rolled, 1, 1)).to.equal(1);
      // and a counter without a period (a budget that never resets)
      const forever = `budget-forever-${name}-${Date.now()}`;
      expect(await store.incrByFloat(forever, -4)).to.equal(0);
      expect(await store.incrByFloat(forever, 1)).to.equal(1);
    });
  });
}

describeBackend('memory', (now) => openStore('memory://', now));

describe('memory store: a bounded request log', () => {
  it('keeps the newest rows of a long run and still counts every request in the spend rollups, and says so once', async () => {
    const lines: string[] = [];
    const store = await openStore('memory://', Date.now, { logger: createLogger({ write: (line) => lines.push(line) }) });
    try {
      const written = MEMORY_LOG_ROWS + 10_000;
      for (let i = 0; i < written; i += 1_000) await store.appendLogs(Array.from({ length: 1_000 }, (_, j) => entry(i + j)));
      const kept: string[] = [];
      for await (const e of store.scanLogs()) kept.push(e.id);
      expect(kept.length).to.be.within(MEMORY_LOG_ROWS, written - 1);
      // the newest, in order, ending with the last row written
      expect(kept.at(-1)).to.equal(`r${written - 1}`);
      expect(kept[0]).to.equal(`r${written - kept.length}`);
      expect((await store.queryLogs({ limit: 1 })).data.map((e) => e.id)).to.deep.equal([`r${written - 1}`]);
      const buckets = await store.spendBuckets();
      expect(buckets.reduce((n, b) => n + b.requests, 0)).to.equal(written);
      expect(buckets.reduce((n, b) => n + b.cost, 0)).to.equal(written * 0.5);
      // told once, at the first trim, though the log was trimmed twice
      expect(written).to.be.at.least(MEMORY_LOG_ROWS + 2 * MEMORY_LOG_TRIM_BATCH);
      const told = lines.map((l) => JSON.parse(l) as { level: string; msg: string; keptRows: number }).filter((l) => l.msg.startsWith('memory:// request log full'));
      expect(told.map((l) => [l.level, l.keptRows])).to.deep.equal([['warn', MEMORY_LOG_ROWS]]);
    } finally {
      await store.close();
    }
  });
});

describeBackend('sqlite', (now) => openStore(`sqlite://${path.join(mkdtempSync(path.join(tmpdir(), 'mg-sqlite-')), 'gw.db')}`, now));

describe('redis store (real redis-server)', function () {
  let redis: RedisServer;
  before(async function () {
    redis = await startRedis();
  });
  after(async () => redis?.stop());
  describeBackend('redis', (now) => openStore(redis.url, now));
});

describe('postgres store (real PostgreSQL server)', function () {
  let server: PostgresServer;
  before(async function () {
    this.timeout(60_000);
    server = await startPostgres();
  });
  describeBackend('postgres', async (now) => openStore(await server.createDatabase(), now));

  it('fails the start with a store.url error that never quotes the password when the server cannot be reached', async () => {
    const port = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = srv.address() as net.AddressInfo;
        srv.close(() => resolve(port));
      });
    });
    const err = await openStore(`postgres://gw:pg-CANARY-password@127.0.0.1:${port}/gateway`).then(
      (store) => store.close().then(() => undefined),
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ConfigError);
    expect((err as Error).message).to.include('store.url').and.include('cannot open PostgreSQL').and.not.include('pg-CANARY-password');
  });

  it('gives up a query whose connection went silent, closes that connection, and works on a new one', async function () {
    this.timeout(20_000);
    const url = new URL(await server.createDatabase());
    // connections that go silent (a failover behind a virtual IP, a host gone without a reset)
    const relay = await startSilentRelay(server.port);
    url.port = String(relay.port);
    const store = await PostgresBackend.connect(url.toString(), Date.now, undefined, 500);
    try {
      await store.appendLogs([entry(1)]);
      relay.silence();
      // unanswered: it fails (it waited forever before) ...
      const err = await store.appendLogs([entry(2)]).then(() => undefined, (e: Error) => e);
      expect(err?.message).to.equal('Query read timeout');
      // ... and the pool's next connections are new ones, which answer
      let written = false;
      for (let i = 0; i < 12 && !written; i++) written = await store.appendLogs([entry(2)]).then(() => true, () => false);
      expect(written).to.equal(true);
      expect((await store.queryLogs({ limit: 10 })).data.map((e: LogEntry) => e.id)).to.deep.equal(['r2', 'r1']);
    } finally {
      await store.close();
      relay.close();
    }
  });

  it('never sweeps a counter that a request started again while the sweep ran', async () => {
    const url = await server.createDatabase();
    let now = Date.now();
    const store = await PostgresBackend.connect(url, () => now);
    const db = new pg.Client({ connectionString: url });
    const watch = new pg.Client({ connectionString: url });
    await Promise.all([db.connect(), watch.connect()]);
    try {
      // last minute's window, over: the sweep may take it
      await store.incrByFloat('limits:rpm:key:k:0', 7, 60_000);
      now += 90_000;
      // the first request of the next window of the same parity starts it again, as incrByFloat does an
      // expired row (the row locked first, so the sweep's DELETE comes to it after the request)
      await db.query('BEGIN');
      await db.query("SELECT 1 FROM counters WHERE key = 'limits:rpm:key:k:0' FOR UPDATE");
      const swept = store.sweepExpired(500);
      for (let i = 0; i < 200; i++) {
        const { rows } = await watch.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM counters%'");
        if (rows[0].n === '1') break;
        await new Promise((r) => setTimeout(r, 10));
      }
      await db.query("UPDATE counters SET value = 1, expires_at = $1 WHERE key = 'limits:rpm:key:k:0'", [now + 60_000]);
      await db.query('COMMIT');
      await swept;
      expect(await store.getCounter('limits:rpm:key:k:0'), 'the new window keeps its first request').to.equal(1);
    } finally {
      await Promise.all([db.end(), watch.end()]);
      await store.close();
    }
  });

  it('migrates an empty database once when eight instances open it at the same moment', async () => {
    const url = await server.createDatabase();
    const stores = await Promise.all(Array.from({ length: 8 }, () => openStore(url)));
    try {
      const { rows } = await (stores[0] as PostgresBackend).pool.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
      expect(rows.map((r) => r.version)).to.deep.equal(MIGRATIONS.map((m) => m.version));
      // and each instance works on the shared tables
      await Promise.all(stores.map((s, i) => s.incrByFloat('fleet', i)));
      expect(await stores[7].getCounter('fleet')).to.equal(28);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });
});

describe('sqlite store survives a restart', () => {
  it('reopens the same file with records, counters and logs intact', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'mg-sqlite-')), 'gw.db');
    const first = await openStore(`sqlite://${file}`);
    await first.collection('keys').set('k', { id: 'k' });
    await first.incrByFloat('spend:k', 1.25);
    await first.appendLog(entry(1));
    await first.close();
    const second = await openStore(`sqlite://${file}`);
    expect(await second.collection('keys').get('k')).to.deep.equal({ id: 'k' });
    expect(await second.getCounter('spend:k')).to.equal(1.25);
    expect((await second.queryLogs({ limit: 5 })).data.map((e) => e.id)).to.deep.equal(['r1']);
    await second.close();
  });
});

describe('sqlite store upgraded from a version without spend rollups', () => {
  it('folds the log it already holds into the rollups once, at open', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'mg-sqlite-')), 'gw.db');
    const first = (await openStore(`sqlite://${file}`)) as SqliteBackend;
    await first.appendLogs([entry(1), entry(2), entry(3, { keyId: 'k3', cost: 0.25 })]);
    await first.spendBuckets(); // a read commits the journaled rows at once
    // what the previous version left: the log rows, no rollups, schema version 0
    first.db.exec('DELETE FROM spend_rollup');
    first.db.pragma('user_version = 0');
    await first.close();
    const second = await openStore(`sqlite://${file}`);
    const buckets = await second.spendBuckets();
    expect(buckets.reduce((a, b) => a + b.requests, 0)).to.equal(3);
    expect(buckets.reduce((a, b) => a + b.cost, 0)).to.be.closeTo(1.25, 1e-12);
    await second.close();
    // and only once: a third open adds nothing
    const third = await openStore(`sqlite://${file}`);
    expect((await third.spendBuckets()).reduce((a, b) => a + b.requests, 0)).to.equal(3);
    await third.close();
  });
});

describe('sqlite store: the log table a commit touches', () => {
  it('numbers a new file\'s log rows without AUTOINCREMENT (no sqlite_sequence page per commit), in order, across INSERTs of many rows', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'mg-sqlite-')), 'gw.db');
    const store = (await openStore(`sqlite://${file}`)) as SqliteBackend;
    // 37 rows: INSERTs of 16, 16 and 5 rows in one transaction, then one more batch
    await store.appendLogs(Array.from({ length: 37 }, (_, i) => entry(i, { id: `n${i}` })));
    await store.appendLogs([entry(99, { id: 'n99' })]);
    await store.spendBuckets(); // a read commits the journaled rows at once
    const sql = (store.db.prepare("SELECT sql FROM sqlite_master WHERE name = 'logs'").get() as { sql: string }).sql;
    expect(sql).to.not.match(/AUTOINCREMENT/i);
    const seqs = store.db.prepare('SELECT seq, entry FROM logs ORDER BY seq').all() as { seq: number; entry: string }[];
    expect(seqs.map((r) => r.seq)).to.deep.equal(Array.from({ length: 38 }, (_, i) => i + 1));
    expect(seqs.map((r) => (JSON.parse(r.entry) as LogEntry).id)).to.deep.equal([...Array.from({ length: 37 }, (_, i) => `n${i}`), 'n99']);
    expect((await store.spendBuckets()).reduce((a, b) => a + b.requests, 0)).to.equal(38);
    // the checkpoint runs every 8,000 WAL pages, not SQLite's 1,000 (fewer fsyncs on the request path)
    expect(store.db.pragma('wal_autocheckpoint', { simple: true })).to.equal(8000);
    expect(store.db.pragma('synchronous', { simple: true }), 'NORMAL').to.equal(1);
    await store.close();
  });

  it('keeps writing and paging a file an older version made with an AUTOINCREMENT log table', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'mg-sqlite-')), 'gw.db');
    const legacy = new Database(file);
    legacy.exec('CREATE TABLE logs (seq INTEGER PRIMARY KEY AUTOINCREMENT, time TEXT NOT NULL, key_id TEXT, org TEXT, model TEXT, entry TEXT NOT NULL)');
    legacy.prepare('INSERT INTO logs (time, key_id, org, model, entry) VALUES (?, ?, ?, ?, ?)').run(entry(1).time, 'k1', 'acme', 'm', JSON.stringify(entry(1, { id: 'old' })));
    legacy.close();
    const store = await openStore(`sqlite://${file}`);
    await store.appendLogs([entry(2, { id: 'new1' }), entry(3, { id: 'new2' })]);
    const first = await store.queryLogs({ limit: 2 });
    expect(first.data.map((e) => e.id)).to.deep.equal(['new2', 'new1']);
    expect((await store.queryLogs({ limit: 2, cursor: first.nextCursor! })).data.map((e) => e.id)).to.deep.equal(['old']);
    // the upgrade folded the old row into the rollups, and the new ones were added as they were written
    expect((await store.spendBuckets()).reduce((a, b) => a + b.requests, 0)).to.equal(3);
    await store.close();
  });
});

describe('sqlite store: log queries over a large table', () => {
  it('reads a filter no index serves a window at a time, and a scan a page at a time, giving the event loop turns between them, with the rows one statement would find', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'mg-sqlite-')), 'gw.db');
    // 70,000 rows: four windows of rows; written by a plain connection, as a long-lived gateway's table is
    const db = new Database(file);
    db.exec('CREATE TABLE logs (seq INTEGER PRIMARY KEY, time TEXT NOT NULL, key_id TEXT, org TEXT, model TEXT, entry TEXT NOT NULL)');
    const insert = db.prepare('INSERT INTO logs (time, key_id, org, model, entry) VALUES (?, ?, ?, ?, ?)');
    db.transaction(() => {
      for (let i = 0; i < 70_000; i++) {
        const e = entry(i, { id: `w${i}`, org: i === 5 || i === 65_000 ? 'rare' : 'acme', status: i === 10 ? 503 : 200 });
        insert.run(e.time, e.keyId, e.org, e.model, JSON.stringify(e));
      }
    })();
    db.close();
    const store = (await openStore(`sqlite://${file}`)) as SqliteBackend;
    // turns of the event loop that ran while the query was under way
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const missing = await store.queryLogs({ id: 'not-there', limit: 1 });
    const turnsDuringLookup = turns;
    ticking = false;
    expect(missing.data).to.deep.equal([]);
    expect(turnsDuringLookup, 'a lookup of an id that is not there reads every row, not all in one turn').to.be.at.least(3);
    // the same rows as one statement would find, newest first, paged across windows with the cursor
    const first = await store.queryLogs({ org: 'rare', limit: 1 });
    expect(first.data.map((e) => e.id)).to.deep.equal(['w65000']);
    const second = await store.queryLogs({ org: 'rare', limit: 1, cursor: first.nextCursor! });
    expect(second.data.map((e) => e.id)).to.deep.equal(['w5']);
    expect(second.nextCursor).to.equal(null);
    expect((await store.queryLogs({ statusMin: 500, limit: 10 })).data.map((e) => e.id)).to.deep.equal(['w10']);
    expect((await store.queryLogs({ id: 'w69999', limit: 1 })).data.map((e) => e.id)).to.deep.equal(['w69999']);
    expect((await store.queryLogs({ limit: 3 })).data.map((e) => e.id)).to.deep.equal(['w69999', 'w69998', 'w69997']);

    // a scan (the guardrails view) reads pages, oldest first, from the first row of its time on
    turns = 0;
    ticking = true;
    setImmediate(tick);
    const scanned: string[] = [];
    for await (const e of store.scanLogs(entry(60_000).time)) scanned.push(e.id);
    const turnsDuringScan = turns;
    ticking = false;
    expect(scanned).to.deep.equal(Array.from({ length: 10_000 }, (_, i) => `w${60_000 + i}`));
    expect(turnsDuringScan, 'five pages, each in a turn of its own').to.be.at.least(3);
    let all = 0;
    for await (const _ of store.scanLogs()) all++;
    expect(all).to.equal(70_000);
    await store.close();
  });
});

describe('sqlite store: the counter additions of one turn', () => {
  it('answers each with the total it made, in order, from one commit for the turn instead of one each', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'mg-sqlite-')), 'gw.db');
    const store = (await openStore(`sqlite://${file}`)) as SqliteBackend;
    await store.incrByFloat('budget:k', 0.5, 60_000);
    // the WAL emptied: from here its size counts the pages the commits below write
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    const totals = await Promise.all(Array.from({ length: 20 }, (_, i) => store.incrByFloat(i % 2 ? 'budget:k' : 'rpm:k', 1, 60_000)));
    expect(totals).to.deep.equal(Array.from({ length: 20 }, (_, i) => (i % 2 ? 0.5 + (i + 1) / 2 : i / 2 + 1)));
    expect(await store.getCounter('budget:k')).to.equal(10.5);
    expect(await store.getCounter('rpm:k')).to.equal(10);
    // a commit appends each page it changed to the WAL (a 24-byte header and the page): one commit of
    // the one counters page, not twenty
    const pageSize = store.db.pragma('page_size', { simple: true }) as number;
    const frames = Math.round((statSync(`${file}-wal`).size - 32) / (pageSize + 24));
    expect(frames).to.be.within(1, 2);
    // the next turn's additions see this turn's
    expect(await store.incrByFloat('budget:k', -0.5)).to.equal(10);
    await store.close();
  });
});
