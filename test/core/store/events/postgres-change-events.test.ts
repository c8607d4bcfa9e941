import { expect } from 'chai';
import { PostgresChangeEvents } from '../../../../core/store/events/postgres-change-events';
import type { ChangeEvent } from '../../../../core/store/events/change-events';
import { startPostgres } from '../../../support/postgres-server';
import { startSilentRelay } from '../../../support/silent-relay';

describe('PostgreSQL change events: a listener connection that goes silent', function () {
  this.timeout(20_000);

  it('is noticed and replaced, and the events published after it reach the instance again', async () => {
    const server = await startPostgres();
    const direct = await server.createDatabase();
    // connections that go silent, as after a NAT's or load balancer's idle timeout
    const relay = await startSilentRelay(server.port);
    const relayed = new URL(direct);
    relayed.port = String(relay.port);

    const listening = await PostgresChangeEvents.connect(relayed.toString(), { heartbeatMs: 300 });
    const publishing = await PostgresChangeEvents.connect(direct);
    const seen: ChangeEvent[] = [];
    listening.subscribe((event) => seen.push(event));
    try {
      await publishing.publish({ type: 'key.changed', keyId: 'before' });
      for (let i = 0; i < 100 && !seen.length; i++) await new Promise((r) => setTimeout(r, 20));
      expect(seen.map((e) => e.type === 'key.changed' && e.keyId)).to.deep.equal(['before']);

      relay.silence();
      // events published while the dropped connection is still taken for live are lost (the caches are the
      // backstop); once it is replaced, they arrive again
      let delivered = false;
      for (let i = 0; i < 50 && !delivered; i++) {
        await publishing.publish({ type: 'key.changed', keyId: `after-${i}` });
        await new Promise((r) => setTimeout(r, 200));
        delivered = seen.some((e) => e.type === 'key.changed' && e.keyId.startsWith('after-'));
      }
      expect(delivered, 'an event published after the connection was dropped reached the listener').to.equal(true);
    } finally {
      await Promise.all([listening.close(), publishing.close()]);
      relay.close();
    }
  });
});
