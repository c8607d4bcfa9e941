/**
 * settleWithin bounds every wait on something that may never answer (store commands, their close, a
 * Redis start, change events, guardrail engines, a drain, the cluster's metrics): what the work settles
 * with when it does, what `late` gives (or throws) when it does not, and nothing from a late work after.
 */
import { expect } from 'chai';
import { settleWithin } from '../../../core/time/settle-within';

const never = new Promise<never>(() => undefined);

describe('settleWithin', () => {
  it("gives the work's value and never calls late", async () => {
    let lateCalls = 0;
    const value = await settleWithin(Promise.resolve('answer'), 20, () => (lateCalls++, 'late'));
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(value).to.equal('answer');
    expect(lateCalls).to.equal(0);
  });

  it("passes the work's own rejection on", async () => {
    const failure = new Error('store refused');
    const err = await settleWithin(Promise.reject(failure), 20, () => 'late').catch((e: unknown) => e);
    expect(err).to.equal(failure);
  });

  it('gives what late returns when the work never settles', async () => {
    expect(await settleWithin(never, 5, () => false)).to.equal(false);
  });

  it('rejects with what late throws', async () => {
    const err = await settleWithin(never, 5, () => {
      throw new RangeError('no answer within 5 ms');
    }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RangeError);
    expect((err as Error).message).to.equal('no answer within 5 ms');
  });

  it('keeps the late answer when the work settles after it, and its late failure is not unhandled', async () => {
    let fail!: (err: Error) => void;
    const work = new Promise<string>((_, reject) => (fail = reject));
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      expect(await settleWithin(work, 5, () => 'late')).to.equal('late');
      fail(new Error('the store answered at last'));
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).to.deep.equal([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('counts work whose answer is ready in the turn the timer fires as answered, not late', async () => {
    // the answer is in the socket's buffer, unread, while the loop is kept busy past the deadline
    const { createServer, connect } = await import('node:net');
    let written!: () => void;
    const serverWrote = new Promise<void>((resolve) => (written = resolve));
    const server = createServer((socket) => socket.end('pong', () => written()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const socket = connect((server.address() as { port: number }).port, '127.0.0.1');
    try {
      const reply = new Promise<string>((resolve) => socket.once('data', (d) => resolve(String(d))));
      await serverWrote;
      const bounded = settleWithin(reply, 5, () => 'late');
      const until = Date.now() + 30;
      while (Date.now() < until);
      expect(await bounded).to.equal('pong');
    } finally {
      socket.destroy();
      server.close();
    }
  });
});
