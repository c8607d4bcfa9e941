import net from 'node:net';
import { expect } from 'chai';
import { createClient } from '@keyv/redis';
import { ConfigError } from '../../../core/errors/gateway-error';
import { openStore } from '../../../core/store/open-store';
import { RequestLog } from '../../../core/store/request-log';
import { createLogger } from '../../../core/observability/logger';
import type { StoreBackend } from '../../../core/store/store-backend';
import { startRedis, type RedisServer } from '../../support/redis-server';

describe('Redis store: a server that goes away while the gateway runs', () => {
  let redis: RedisServer;
  let store: StoreBackend;
  before(async () => {
    redis = await startRedis();
    store = await openStore(redis.url);
  });
  after(async () => {
    await store.close();
    await redis.stop();
  });

  it('fails counter and log writes at once instead of queueing them until it comes back (requests under a budget never got an answer)', async () => {
    expect(await store.incrByFloat('review:budget', 1, 60_000)).to.equal(1);
    await store.keyv('review').set('k', 1);
    await redis.stop();
    const outcomes = await Promise.all([
      store.incrByFloat('review:budget', 1, 60_000).then(() => 'resolved', () => 'rejected'),
      store.appendLog({ id: 'r1', requestId: 'r1', time: new Date().toISOString() } as never).then(() => 'resolved', () => 'rejected'),
      // an API-created key is looked up here: not found (so 401), never a request left waiting
      store.keyv('review').get('k').then((v) => (v === undefined ? 'not found' : 'found'), () => 'rejected'),
    ]);
    expect(outcomes).to.deep.equal(['rejected', 'rejected', 'not found']);
  });
});

/** A loopback port with nothing listening: connecting to it is refused. */
async function refusedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('Redis store: a server that cannot be reached at boot', () => {
  it('fails the start with a store.url error (it used to retry forever, so the gateway hung without a word)', async () => {
    const port = await refusedPort();
    const err = await openStore(`redis://:review-redis-password@127.0.0.1:${port}`).then(
      (store) => store.close().then(() => undefined),
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message).to.include('store.url');
    expect(message).to.include('cannot connect to Redis');
    expect(message).to.not.include('review-redis-password');
  });

  it('fails the start with a store.url error when the server takes the connection and never answers (frozen)', async () => {
    const redis = await startRedis();
    redis.pause();
    try {
      const err = await openStore(redis.url).then(
        (store) => store.close().then(() => undefined),
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(ConfigError);
      expect((err as Error).message).to.include('store.url').and.include('cannot connect to Redis');
    } finally {
      redis.resume();
      await redis.stop();
    }
  });
});

describe('Redis store upgraded from a version without spend rollups', () => {
  it('folds the log list it already holds into the rollups once, at connect', async () => {
    const redis = await startRedis();
    const raw = createClient({ url: redis.url });
    await raw.connect();
    try {
      // what the previous version left: log rows in the list, no rollups
      const old = [1, 2, 3].map((i) => ({ seq: i, entry: { id: `old${i}`, time: `2026-02-01T10:0${i}:00.000Z`, keyId: 'k', org: 'o', endpoint: 'chat', model: 'm', deploymentId: 'p/m', promptTokens: 1, completionTokens: 2, cost: 0.25, status: 200, latencyMs: 1 } }));
      await raw.lPush('mg:logs', old.map((r) => JSON.stringify(r)));
      const first = await openStore(redis.url);
      const buckets = await first.spendBuckets();
      expect(buckets.map((b) => [b.hour, b.requests, b.cost, b.completionTokens])).to.deep.equal([['2026-02-01T10:00:00.000Z', 3, 0.75, 6]]);
      await first.close();
      // only once: a second instance connecting adds nothing
      const second = await openStore(redis.url);
      expect((await second.spendBuckets()).map((b) => b.requests)).to.deep.equal([3]);
      await second.close();
    } finally {
      await raw.quit();
      await redis.stop();
    }
  });
});

describe('Redis store shared by several instances: the log list', () => {
  let redis: RedisServer;
  before(async () => {
    redis = await startRedis();
  });
  after(() => redis.stop());

  const row = (id: string, time = '2026-03-01T10:00:00.000Z') => ({ id, time, keyId: 'k', org: 'o', endpoint: 'chat', model: 'm', deploymentId: 'p/m', promptTokens: 1, completionTokens: 1, cost: 0, status: 200, latencyMs: 1 });

  it('pages through every row two instances wrote at the same moments, each once', async () => {
    const [a, b] = await Promise.all([openStore(redis.url), openStore(redis.url)]);
    try {
      // batches from both instances at once: a sequence number taken by one and a push by the other can interleave
      await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).appendLogs([row(`r${i}a`), row(`r${i}b`)])));
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 200; page++) {
        const { data, nextCursor } = await a.queryLogs({ limit: 7, cursor });
        seen.push(...data.map((e) => e.id));
        if (nextCursor === null) break;
        cursor = nextCursor;
      }
      expect(seen).to.have.length(120);
      expect(new Set(seen).size).to.equal(120);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('answers a log page without a row twice when another instance writes while the page is read', async () => {
    const [a, b] = await Promise.all([openStore(redis.url), openStore(redis.url)]);
    try {
      const keyed = (id: string, keyId: string) => ({ ...row(id), keyId });
      // newest first, the list holds 490 rows of another key, then the 20 of key "mine" across the end of
      // the first 500-row read, then older rows
      await a.appendLogs(Array.from({ length: 90 }, (_, i) => keyed(`old${i}`, 'other')));
      await a.appendLogs(Array.from({ length: 20 }, (_, i) => keyed(`mine${i}`, 'mine')));
      await a.appendLogs(Array.from({ length: 490 }, (_, i) => keyed(`new${i}`, 'other')));
      let reads = 0;
      const page = await a.queryLogs({ key: 'mine', limit: 100 }, async (read) => {
        const result = await read();
        // another instance logs 30 requests between this page's reads: they go to the head of the list
        if (reads++ === 0) await b.appendLogs(Array.from({ length: 30 }, (_, i) => keyed(`during${i}`, 'other')));
        return result;
      });
      expect(page.data.map((e) => e.id)).to.deep.equal(Array.from({ length: 20 }, (_, i) => `mine${19 - i}`));
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('two instances sweeping at the same moment remove the expired rows once, and no row still kept', async () => {
    const [a, b] = await Promise.all([openStore(redis.url), openStore(redis.url)]);
    try {
      const raw = createClient({ url: redis.url });
      await raw.connect();
      await raw.del('mg:logs');
      await raw.quit();
      // oldest first: five past retention, five within it
      for (let i = 0; i < 10; i++) await a.appendLogs([row(`s${i}`, `2026-03-0${i < 5 ? 1 : 3}T10:00:0${i}.000Z`)]);
      const removed = await Promise.all([a.sweepLogs('2026-03-02T00:00:00.000Z', 500), b.sweepLogs('2026-03-02T00:00:00.000Z', 500)]);
      expect(removed[0] + removed[1]).to.equal(5);
      expect((await a.queryLogs({ limit: 50 })).data.map((e) => e.id)).to.deep.equal(['s9', 's8', 's7', 's6', 's5']);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('writes once, with its spend, a request whose cost an upstream\'s usage made 1e300: the rounded cost was Infinity, which HINCRBYFLOAT refused after the rows were pushed', async () => {
    const store = await openStore(redis.url);
    const log = new RequestLog(store, createLogger({ level: 'error', write: () => undefined }), { retryDelayMs: 10, maxRetryDelayMs: 10 });
    try {
      const org = 'huge-cost';
      await log.record({ ...row('huge', '2026-04-01T10:00:00.000Z'), org, cost: 1e300 });
      expect(log.writer.failedWrites).to.equal(0);
      expect((await store.queryLogs({ org, limit: 10 })).data.map((e) => [e.id, e.cost])).to.deep.equal([['huge', 1e300]]);
      expect((await store.spendBuckets()).filter((b) => b.org === org).map((b) => [b.requests, b.cost])).to.deep.equal([[1, 1e300]]);
    } finally {
      await log.writer.flush(0);
      await store.close();
    }
  });

  it('sweeps and scans past a row whose model name a client sent with a lone surrogate: the sweep stopped at it for good', async () => {
    const store = await openStore(redis.url);
    try {
      const raw = createClient({ url: redis.url });
      await raw.connect();
      await raw.del('mg:logs');
      await raw.quit();
      // oldest first: the client's row, four more past retention, then two within it (one from the same client)
      await store.appendLogs([{ ...row('lone', '2026-03-01T10:00:00.000Z'), model: 'gpt-\ud800' }]);
      for (let i = 1; i < 5; i++) await store.appendLogs([row(`old${i}`, `2026-03-01T10:00:0${i}.000Z`)]);
      await store.appendLogs([row('kept1', '2026-03-03T10:00:00.000Z'), { ...row('kept2', '2026-03-03T10:00:01.000Z'), model: '\udc00-mini' }]);
      const scanned: string[] = [];
      for await (const e of store.scanLogs()) scanned.push(e.id);
      expect(scanned).to.deep.equal(['lone', 'old1', 'old2', 'old3', 'old4', 'kept1', 'kept2']);
      expect(await store.sweepLogs('2026-03-02T00:00:00.000Z', 500)).to.equal(5);
      const left = (await store.queryLogs({ limit: 50 })).data;
      expect(left.map((e) => [e.id, e.model])).to.deep.equal([
        ['kept2', '\uFFFD-mini'],
        ['kept1', 'm'],
      ]);
    } finally {
      await store.close();
    }
  });
});
