import http from 'node:http';

/**
 * The benchmark's upstream: an OpenAI-compatible server that answers at once (JSON, or an SSE stream of
 * 20 content chunks, a usage chunk and [DONE], each its own write). Run as a child process.
 */
const CHUNKS = 20;
const base = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1700000000, model: 'bench-upstream' };
const jsonBody = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1700000000,
  model: 'bench-upstream',
  choices: [{ index: 0, message: { role: 'assistant', content: 'The quick brown fox jumps over the lazy dog.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 10, total_tokens: 22 },
});
const frames = [
  ...Array.from({ length: CHUNKS }, (_, i) => `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: `tok${i} ` }, finish_reason: null }] })}\n\n`),
  `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
  `data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 12, completion_tokens: CHUNKS, total_tokens: 12 + CHUNKS } })}\n\n`,
  'data: [DONE]\n\n',
];

export function createFastUpstream(): http.Server {
  return http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      if (body.includes('"stream":true')) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        for (const f of frames) res.write(f);
        res.end();
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(jsonBody) });
        res.end(jsonBody);
      }
    });
  });
}

if (require.main === module) {
  const server = createFastUpstream();
  server.keepAliveTimeout = 65_000;
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
  });
}
