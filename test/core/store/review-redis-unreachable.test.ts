import net from 'node:net';
import { expect } from 'chai';
import { openStore } from '../../../core/store/open-store';
import { ConfigError } from '../../../core/errors/gateway-error';

/** A loopback port with nothing listening: connecting to it is refused. */
async function refusedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('review: a Redis store that cannot be reached at boot', () => {
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
