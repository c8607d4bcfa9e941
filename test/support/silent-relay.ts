import net from 'node:net';

/**
 * A TCP relay on loopback to `targetPort` that can go silent on the connections it holds, as a NAT or load
 * balancer after its idle timeout, a failover behind a virtual IP or a host gone without a reset do:
 * `silence()` drops the bytes both ways while the sockets stay open.
 */
export interface SilentRelay {
  port: number;
  /** every connection held now goes silent (later ones still relay) */
  silence(): void;
  close(): void;
}

export async function startSilentRelay(targetPort: number): Promise<SilentRelay> {
  const held = new Set<net.Socket>();
  const silent = new WeakSet<net.Socket>();
  const relay = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    held.add(client);
    client.on('data', (b) => silent.has(client) || upstream.write(b));
    upstream.on('data', (b) => silent.has(client) || client.write(b));
    const close = () => (client.destroy(), upstream.destroy(), held.delete(client));
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  return {
    port: (relay.address() as net.AddressInfo).port,
    silence: () => held.forEach((socket) => silent.add(socket)),
    close: () => {
      for (const socket of held) socket.destroy();
      relay.close();
    },
  };
}
