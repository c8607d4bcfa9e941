import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient } from '@keyv/redis';
import OpenAI from 'openai';
import type { SqliteBackend } from '../../core/store/sqlite-backend';
import type { StoreBackend } from '../../core/store/store-backend';
import { sweepOnce } from '../../core/store/sweeper';
import { FakeImagesUpstream } from '../support/fake-images-upstream';
import { startRedis, type RedisServer } from '../support/redis-server';
import { startGateway, type TestGateway } from '../support/start-gateway';

const KEY = 'sk-sweep-CANARY-91';
const HOURS = 60 * 60 * 1000;

/** How many values of a keyv namespace the backend holds, read from the backend itself. */
type Counter = (store: StoreBackend, namespace: string) => Promise<number>;

const countMemory: Counter = async (store, ns) => (store.keyv(ns).store as Map<string, unknown>).size;
const countSqlite: Counter = async (store, ns) => ((store as SqliteBackend).db.prepare('SELECT count(*) AS n FROM kv WHERE key LIKE ?').get(`${ns}:%`) as { n: number }).n;

/**
 * Stored responses and hosted images are deleted by the periodic sweep once expired (by the gateway's
 * clock, injected here: no test waits for a real TTL), on every backend.
 */
function describeSweep(name: string, setup: () => Promise<{ url: string; count: Counter; cleanup(): Promise<void> }>) {
  describe(`store sweep on ${name}`, () => {
    let images: FakeImagesUpstream;
    let gw: TestGateway;
    let backend: Awaited<ReturnType<typeof setup>>;
    const clock = { t: Date.now(), now() { return this.t; } };

    before(async () => {
      backend = await setup();
      images = await new FakeImagesUpstream().start();
      images.alwaysB64 = true;
      gw = await startGateway(
        {
          store: { url: backend.url, sweepIntervalSeconds: 0 },
          organizations: [{ id: 'acme' }],
          keys: [{ key: KEY, org: 'acme', id: 'sweeper' }],
          providers: [
            { id: 'local', type: 'echo' },
            { id: 'oai', type: 'openai', baseUrl: `${images.url}/v1`, apiKey: 'sk-provider-sweep' },
          ],
          models: [
            { name: 'echo', provider: 'local' },
            { name: 'painter', provider: 'oai', model: 'gpt-image-1', kind: 'image' },
          ],
          images: { urlTtlSeconds: 600 },
        },
        { clock },
      );
    });
    after(async () => {
      await gw.close();
      await images.stop();
      await backend.cleanup();
    });

    it('removes expired stored responses and hosted images, and keeps the live ones', async () => {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
      const store = gw.gateway.services.store;
      for (let i = 0; i < 3; i++) await client.responses.create({ model: 'echo', input: `old ${i}` });
      const old = await client.images.generate({ model: 'painter', prompt: 'an old fox' });
      expect(old.data![0].url).to.include('/v1/images/files/');
      expect(await backend.count(store, 'responses')).to.equal(3);
      expect(await backend.count(store, 'hosted-images')).to.equal(1);

      clock.t += 2 * HOURS; // past both TTLs (responses 1 h, images 10 min)
      const live = await client.responses.create({ model: 'echo', input: 'new' });
      const removed = await sweepOnce(store);

      expect(removed).to.be.at.least(4);
      expect(await backend.count(store, 'responses')).to.equal(1);
      expect(await backend.count(store, 'hosted-images')).to.equal(0);
      const next = await client.responses.create({ model: 'echo', input: 'again', previous_response_id: live.id });
      expect(next.status).to.equal('completed');
    });
  });
}

describeSweep('memory', async () => ({ url: 'memory://', count: countMemory, cleanup: async () => undefined }));

describeSweep('SQLite', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gw-sweep-'));
  return { url: `sqlite://${path.join(dir, 'gateway.db')}`, count: countSqlite, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});

describeSweep('Redis (real redis-server)', async () => {
  const redis: RedisServer = await startRedis();
  const client = createClient({ url: redis.url });
  await client.connect();
  return {
    url: redis.url,
    count: async (_store, ns) => (await client.keys(`mg:${ns}*`)).length,
    cleanup: async () => {
      await client.quit();
      await redis.stop();
    },
  };
});

describe('store sweep timer', () => {
  it('runs every store.sweepIntervalSeconds without being called', async () => {
    const clock = { t: Date.now(), now() { return this.t; } };
    const gw = await startGateway(
      {
        store: { url: 'memory://', sweepIntervalSeconds: 0.02 },
        organizations: [{ id: 'acme' }],
        keys: [{ key: KEY, org: 'acme', id: 'sweeper' }],
        providers: [{ id: 'local', type: 'echo' }],
        models: [{ name: 'echo', provider: 'local' }],
      },
      { clock },
    );
    try {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
      await client.responses.create({ model: 'echo', input: 'soon gone' });
      const store = gw.gateway.services.store;
      expect(await countMemory(store, 'responses')).to.equal(1);
      clock.t += 2 * HOURS;
      // polls for up to 5 s; the sweep runs every 20 ms
      for (let i = 0; i < 250 && (await countMemory(store, 'responses')) > 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(await countMemory(store, 'responses')).to.equal(0);
    } finally {
      await gw.close();
    }
  });
});
