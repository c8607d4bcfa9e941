import net from 'node:net';
import { expect } from 'chai';
import { ConfigError } from '../../../core/errors/gateway-error';
import { openStore } from '../../../core/store/open-store';
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
});
