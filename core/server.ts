import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Gateway } from './gateway';
import { MAX_HEADER_BYTES, answerClientError } from './http/client-error';

export interface RunningServer {
  readonly server: http.Server;
  readonly url: string;
  /** stop accepting, let in-flight requests (streams included) finish within the drain window, close */
  drain(timeoutMs?: number): Promise<void>;
}

/**
 * Listen on HOST:PORT (port 0 picks a free one). Tracks in-flight requests so a drain waits for them
 * and then closes idle keep-alive connections.
 */
export async function listen(gateway: Gateway, host: string, port: number): Promise<RunningServer> {
  const { fastRoutes } = gateway.services;
  const { app } = gateway;
  // Hot JSON endpoints skip express entirely; everything else is the express app's.
  const server = http.createServer({ keepAliveTimeout: 65_000, requestTimeout: 0, maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
    if (!fastRoutes.tryHandle(req, res)) app(req, res);
  });
  // a request the HTTP parser refuses still gets an error body in its API's shape
  server.on('clientError', answerClientError);
  let inFlight = 0;
  const idleWaiters: (() => void)[] = [];
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('request', (_req, res) => {
    inFlight++;
    res.on('close', () => {
      inFlight--;
      if (inFlight === 0) idleWaiters.splice(0).forEach((w) => w());
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${shownHost}:${address.port}`;

  return {
    server,
    url,
    async drain(timeoutMs = gateway.services.config.server.drainSeconds * 1000) {
      gateway.services.lifecycle.draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      if (inFlight > 0) {
        await Promise.race([new Promise<void>((resolve) => idleWaiters.push(resolve)), new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref())]);
      }
      server.closeIdleConnections();
      for (const socket of sockets) socket.destroy();
      await closed;
      await gateway.close();
    },
  };
}
