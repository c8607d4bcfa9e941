import http from 'node:http';
import { Pool } from 'undici';
import { readBody } from './read-body';

/**
 * The benchmark's second baseline: a pass-through proxy that does the least a gateway that reads the
 * traffic must do: JSON.parse of the request and re-serialise it, JSON.parse of the response (every SSE
 * event of a stream) and re-serialise it. The gateway's cost above this is its own bookkeeping. Run as a
 * child process: parse-proxy.js UPSTREAM_URL.
 */
const upstream = process.argv[2];
const pool = new Pool(upstream, { connections: 256, keepAliveTimeout: 30_000 });

const server = http.createServer(async (req, res) => {
  try {
    const request = JSON.parse(await readBody(req)) as { stream?: boolean };
    const answer = await pool.request({
      path: req.url ?? '/',
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer upstream-key' },
      body: JSON.stringify(request),
    });
    const type = String(answer.headers['content-type'] ?? 'application/json');
    if (!type.startsWith('text/event-stream')) {
      const text = await answer.body.text();
      const out = JSON.stringify(JSON.parse(text));
      res.writeHead(answer.statusCode, { 'content-type': type, 'content-length': Buffer.byteLength(out) });
      res.end(out);
      return;
    }
    res.writeHead(answer.statusCode, { 'content-type': type, 'cache-control': 'no-cache' });
    let pending = '';
    answer.body.setEncoding('utf8');
    for await (const chunk of answer.body as AsyncIterable<string>) {
      pending += chunk;
      let end: number;
      while ((end = pending.indexOf('\n\n')) !== -1) {
        const frame = pending.slice(0, end);
        pending = pending.slice(end + 2);
        const data = frame.startsWith('data: ') ? frame.slice(6) : frame;
        res.write(data === '[DONE]' ? 'data: [DONE]\n\n' : `data: ${JSON.stringify(JSON.parse(data))}\n\n`);
      }
    }
    res.end();
  } catch {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  }
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`));
