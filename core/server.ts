import cluster from 'node:cluster';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Gateway } from './gateway';
import { PARSER_HEADER_BYTES, answerClientError, refuseOversizedHead } from './http/client-error';
import { ServiceUnavailableError } from './errors/gateway-error';
import { JSONRPC } from './errors/render';
import { errorShapeFor, sendError } from './http/error-shapes';
import { assignRequestId } from './http/request-id';
import { urlPath } from './http/url-path';
import { settleWithin } from './time/settle-within';

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
  const { fastRoutes, lifecycle } = gateway.services;
  const { app } = gateway;
  // Hot JSON endpoints skip express entirely; everything else is the express app's. While draining the
  // gateway keeps listening, so a readiness probe sees its 503, but takes no new work.
  // requestTimeout bounds how long a client may take to send a request (a large image upload included).
  // under `--workers N` every response names the worker that served it (1..N, then replacements), for
  // operators reading a response or a log behind the shared port
  const workerId = cluster.isWorker ? String(cluster.worker!.id) : undefined;
  const server = http.createServer({ keepAliveTimeout: 65_000, requestTimeout: 600_000, maxHeaderSize: PARSER_HEADER_BYTES }, (req, res) => {
    if (workerId) res.setHeader('x-gateway-worker', workerId);
    if (refuseOversizedHead(req, res)) return;
    if (lifecycle.draining && !req.url?.startsWith('/health/')) return refuseWhileDraining(req, res);
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
      // Idle keep-alive connections stay open: a request on one is answered 503 with `connection:
      // close`, instead of racing a socket the server just closed.
      lifecycle.draining = true;
      if (inFlight > 0) {
        await settleWithin(new Promise<void>((resolve) => idleWaiters.push(resolve)), timeoutMs, () => undefined);
      }
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      for (const socket of sockets) socket.destroy();
      await closed;
      await gateway.close();
    },
  };
}

/** A new request during a drain: 503 in its API's shape, and the connection is not kept. */
function refuseWhileDraining(req: http.IncomingMessage, res: http.ServerResponse): void {
  assignRequestId(res);
  res.setHeader('connection', 'close');
  const error = new ServiceUnavailableError('The gateway is shutting down; retry on another instance.', 'draining');
  const path = urlPath(req.url);
  if (path === '/mcp') {
    res.writeHead(503, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: JSONRPC.INTERNAL_ERROR, message: error.message, data: { code: error.code } } }));
    return;
  }
  sendError(res, error, errorShapeFor(path));
}
