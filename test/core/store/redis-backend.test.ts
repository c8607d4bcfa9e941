import { expect } from 'chai';
import { openStore } from '../../../core/store/open-store';
import type { StoreBackend } from '../../../core/store/store-backend';
import { startRedis, type RedisServer } from '../../support/redis-server';

describe('review: a Redis store whose server goes away while the gateway runs', () => {
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
