import http from 'node:http';
import { Pool } from 'undici';

/**
 * The benchmark's baseline: a bare pass-through proxy with undici and no parsing at all. Whatever the
 * gateway costs above this is the gateway's own work. Run as a child process: bare-proxy.js UPSTREAM_URL.
 */
const upstream = process.argv[2];
const pool = new Pool(upstream, { connections: 256, keepAliveTimeout: 30_000 });

const server = http.createServer(async (req, res) => {
  try {
    const answer = await pool.request({
      path: req.url ?? '/',
      method: (req.method ?? 'POST') as 'POST',
      headers: { 'content-type': req.headers['content-type'] ?? 'application/json', authorization: 'Bearer upstream-key' },
      body: req,
    });
    res.writeHead(answer.statusCode, { 'content-type': String(answer.headers['content-type'] ?? 'application/json') });
    for await (const chunk of answer.body) res.write(chunk);
    res.end();
  } catch {
    res.writeHead(502).end();
  }
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`));
