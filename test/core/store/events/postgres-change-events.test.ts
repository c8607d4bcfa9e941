import { expect } from 'chai';
import net from 'node:net';
import { PostgresChangeEvents } from '../../../../core/store/events/postgres-change-events';
import type { ChangeEvent } from '../../../../core/store/events/change-events';
import { startPostgres } from '../../../support/postgres-server';

describe('PostgreSQL change events: a listener connection that goes silent', function () {
  this.timeout(20_000);

  it('is noticed and replaced, and the events published after it reach the instance again', async () => {
    const server = await startPostgres();
    const direct = await server.createDatabase();
    // a TCP relay that can drop a connection without a word, as a NAT or load balancer does after its idle
    // timeout: bytes are discarded both ways, the sockets stay open
    const held = new Set<net.Socket>();
    const silent = new WeakSet<net.Socket>();
    const relay = net.createServer((client) => {
      const upstream = net.connect(server.port, '127.0.0.1');
      held.add(client);
      client.on('data', (b) => silent.has(client) || upstream.write(b));
      upstream.on('data', (b) => silent.has(client) || client.write(b));
      const close = () => (client.destroy(), upstream.destroy(), held.delete(client));
      client.on('close', close).on('error', close);
      upstream.on('close', close).on('error', close);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const relayed = new URL(direct);
    relayed.port = String((relay.address() as net.AddressInfo).port);

    const listening = await PostgresChangeEvents.connect(relayed.toString(), { heartbeatMs: 300 });
    const publishing = await PostgresChangeEvents.connect(direct);
    const seen: ChangeEvent[] = [];
    listening.subscribe((event) => seen.push(event));
    try {
      await publishing.publish({ type: 'key.changed', keyId: 'before' });
      for (let i = 0; i < 100 && !seen.length; i++) await new Promise((r) => setTimeout(r, 20));
      expect(seen.map((e) => e.type === 'key.changed' && e.keyId)).to.deep.equal(['before']);

      for (const socket of held) silent.add(socket);
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
      for (const socket of held) socket.destroy();
      relay.close();
    }
  });
});
