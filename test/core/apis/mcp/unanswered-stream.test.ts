import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpUpstreamPool } from '../../../../core/apis/mcp/upstream-pool';
import { DEFAULT_MCP_TRANSPORT } from '../../../../core/apis/mcp/transports';
import { createStreamableHttpFactory } from '../../../../plugins/mcp-streamable-http';
import { answerBeforeEnd } from '../../../../plugins/mcp-streamable-http/answer-before-end';

type Ending = 'answer' | 'cut' | 'wrong-id' | 'reset' | 'json-wrong-id' | 'json-batch';
type Revision = '2025-06-18' | '2026-07-28';

/**
 * A streamable-HTTP MCP server written out by hand (stateless, in either revision): it answers
 * `tools/call` as an event stream that sends a progress notification (when asked for) and then, as told,
 * the answer, nothing (the stream ends), an answer to another id, or a comment and a reset connection; or
 * as JSON, with an answer to another id, or the answer in a batch beside a notification.
 */
async function startServer(ending: () => Ending, revision: Revision): Promise<{ url: string; methods: string[]; close(): Promise<void> }> {
  const methods: string[] = [];
  // a 2026-07-28 server answers server/discover (the gateway then calls it with the SDK 2.x client) and
  // marks its results complete; a 2025 one refuses server/discover and is initialized (SDK 1.x)
  const complete = revision === '2026-07-28' ? { resultType: 'complete' } : {};
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      methods.push(message.method);
      const how = ending();
      if (message.id === undefined) return void res.writeHead(202).end();
      const json = (body: object) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, ...body }));
      if (message.method === 'initialize') {
        return json({ result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'by-hand', version: '1.0.0' } } });
      }
      if (message.method === 'server/discover' && revision === '2026-07-28') {
        return json({ result: { supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, serverInfo: { name: 'by-hand', version: '1.0.0' }, ...complete } });
      }
      if (message.method !== 'tools/call') return json({ error: { code: -32601, message: 'Method not found' } });
      if (how === 'json-wrong-id') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: 987654, result: { content: [] } }));
      if (how === 'json-batch') {
        const note = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } };
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([note, { jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'done' }], ...complete } }]));
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const token = message.params?._meta?.progressToken;
      if (token !== undefined) res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: 1 } })}\n\n`);
      if (how === 'answer') res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'done' }], ...complete } })}\n\n`);
      else if (how === 'wrong-id') res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 987654, result: { content: [] } })}\n\n`);
      else if (how === 'reset') res.write(': working\n\n', () => res.socket?.destroy());
      else res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    methods,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

for (const revision of ['2025-06-18', '2026-07-28'] as const) describe(`an MCP server (${revision}) whose answer ends without the result`, () => {
  let how: Ending = 'answer';
  let server: Awaited<ReturnType<typeof startServer>>;
  let pool: McpUpstreamPool;
  // far longer than the test may take: a call that waited for it would fail the test by mocha's timeout
  const opts = { timeoutMs: 60_000 };

  before(async () => {
    server = await startServer(() => how, revision);
  });
  after(() => server.close());
  beforeEach(() => {
    pool = new McpUpstreamPool(new Map([[DEFAULT_MCP_TRANSPORT, createStreamableHttpFactory({}, { fetch })]]));
  });
  afterEach(() => pool.closeAll());

  const target = () => ({ id: 'hand', name: 'by-hand', url: server.url, headers: {} });

  for (const ending of ['cut', 'wrong-id', 'reset', 'json-wrong-id'] as const) {
    it(`fails the call at once with mcp_upstream_unanswered (${ending}), and the next call is answered`, async () => {
      how = ending;
      const err = await pool.request(target(), 'tools/call', { name: 'slow', arguments: {} }, opts).then(() => undefined, (e: unknown) => e);
      expect(err).to.deep.include({ status: 502, code: 'mcp_upstream_unanswered', message: 'MCP server by-hand ended its answer without a result.' });
      how = 'answer';
      expect(await pool.request(target(), 'tools/call', { name: 'slow', arguments: {} }, opts)).to.deep.equal({ content: [{ type: 'text', text: 'done' }] });
    });
  }

  it('passes a JSON answer that carries the answer on, in a batch too', async () => {
    how = 'json-batch';
    expect(await pool.request(target(), 'tools/call', { name: 'slow', arguments: {} }, opts)).to.deep.equal({ content: [{ type: 'text', text: 'done' }] });
  });

  it('passes an answered stream on unchanged, progress first', async () => {
    how = 'answer';
    const progress: unknown[] = [];
    const result = await pool.request(target(), 'tools/call', { name: 'slow', arguments: {} }, { ...opts, onprogress: (p) => progress.push(p) });
    expect(result).to.deep.equal({ content: [{ type: 'text', text: 'done' }] });
    expect(progress).to.have.length(1);
  });

  it(`was called in ${revision}`, () => {
    const handshake = revision === '2026-07-28' ? 'server/discover' : 'initialize';
    expect(server.methods).to.include(handshake);
    if (revision === '2026-07-28') expect(server.methods).not.to.include('initialize');
  });
});

describe('answerBeforeEnd: the closing answer is added only where nothing else can bring one', () => {
  /** what a reader of the wrapped stream receives, as text, from these reads (then an end or a break) */
  async function through(reads: string[], ending: 'end' | 'break' = 'end', signal = new AbortController().signal): Promise<string> {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const r of reads) controller.enqueue(new TextEncoder().encode(r));
        if (ending === 'end') controller.close();
        else controller.error(new Error('socket reset'));
      },
    });
    const reader = answerBeforeEnd(body, 7, signal).getReader();
    let text = '';
    for (;;) {
      const read = await reader.read().catch(() => undefined);
      if (!read || read.done) return text;
      text += new TextDecoder().decode(read.value);
    }
  }
  const added = (text: string) => text.includes('"reason":"stream_ended_unanswered"');
  const answer = (id: number) => `event: message\ndata: {"jsonrpc":"2.0","id":${id},"result":{}}\n\n`;

  it('adds nothing after the answer, in one read or split anywhere', async () => {
    const whole = `: ok\n\n${answer(7)}`;
    for (let cut = 0; cut <= whole.length; cut++) expect(added(await through([whole.slice(0, cut), whole.slice(cut)])), `cut at ${cut}`).to.equal(false);
  });

  it('adds the closing answer after a stream that ended or broke without it, or answered another id', async () => {
    expect(added(await through([': working\n\n']))).to.equal(true);
    expect(added(await through([answer(8)]))).to.equal(true);
    expect(added(await through([': working\n\n'], 'break'))).to.equal(true);
  });

  it('adds nothing to a stream that numbers its events (the SDK resumes it), wherever the id field is split', async () => {
    const numbered = `id: 41\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n`;
    for (let cut = 0; cut <= numbered.length; cut++) expect(added(await through([`: hi\n\n${numbered}`.slice(0, cut + 6), `: hi\n\n${numbered}`.slice(cut + 6)])), `cut at ${cut}`).to.equal(false);
    expect(added(await through([numbered]))).to.equal(false);
    // a byte a read: the field is seen across the seams
    expect(added(await through([...`: hi\n\n${numbered}`]))).to.equal(false);
    expect(added(await through([...': working\n\ndata: {"id":1}\n\n']))).to.equal(true);
    expect(added(await through(['id\n\n']))).to.equal(false);
    // an id inside the data is not an event id
    expect(added(await through(['event: message\ndata: {"id":1}\n\n']))).to.equal(true);
  });

  it('adds nothing for a request the gateway gave up', async () => {
    const given = new AbortController();
    given.abort();
    expect(added(await through([': working\n\n'], 'end', given.signal))).to.equal(false);
  });
});
