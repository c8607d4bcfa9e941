import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sealedCollection } from '../../../core/store/secrets/sealed-collection';
import { openStore } from '../../../core/store/open-store';
import type { StoreBackend } from '../../../core/store/store-backend';
import type { LogEntry } from '../../../core/store/log-entry';
import { startRedis, type RedisServer } from '../../support/redis-server';

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
  });
}

describeBackend('memory', (now) => openStore('memory://', now));
describeBackend('sqlite', (now) => openStore(`sqlite://${path.join(mkdtempSync(path.join(tmpdir(), 'mg-sqlite-')), 'gw.db')}`, now));

describe('redis store (real redis-server)', function () {
  let redis: RedisServer;
  before(async function () {
    redis = await startRedis();
  });
  after(async () => redis?.stop());
  describeBackend('redis', (now) => openStore(redis.url, now));
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
