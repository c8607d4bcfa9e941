/**
 * Structured logs (issue 17 point 1): the `model-gateway` command writes one JSON line per request on
 * stdout (chat, stream, messages, embeddings, a Responses request and its tool call, /mcp), with the
 * fields the README lists, and no secret anywhere in its output; `--log-format pretty` is for people.
 */
import { expect } from 'chai';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import OpenAI from 'openai';
import { FakeOpenAI, chatChunks, chatCompletion } from '../support/fake-openai';
import { FakeMcpServer } from '../support/fake-mcp-server';
import { eventually } from '../support/eventually';
import { REPO_ROOT } from '../support/fixtures';

const MAIN = path.join(REPO_ROOT, 'dist', 'core', 'main.js');
const SECRETS = { LOGS_KEY: 'sk-logs-CANARY-key-1706', LOGS_PROVIDER: 'sk-logs-CANARY-provider-1707', LOGS_ADMIN: 'sk-logs-CANARY-admin-1708', LOGS_MCP: 'logs-CANARY-mcp-token-1709' };
const FIELDS = ['requestId', 'keyId', 'org', 'endpoint', 'model', 'deployment', 'status', 'inputTokens', 'outputTokens', 'cost', 'latencyMs', 'attempts'];

interface Running {
  child: ChildProcess;
  url: string;
  stdout: string[];
  stderr: string[];
  exit: Promise<number | null>;
}

/**
 * Runs the command. Its stdout is Node's own pipe (a socket pair), or, with `out`, the write end of a
 * real pipe whose reader the test holds, as when a shell pipes the gateway into another program.
 */
async function run(config: object, args: string[] = [], env: NodeJS.ProcessEnv = {}, out?: Pipe): Promise<Running> {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'mg-logs-')), 'gateway.json');
  writeFileSync(file, JSON.stringify(config));
  const child = spawn(process.execPath, [MAIN, '--config', file, '--port', '0', ...args], { env: { ...process.env, LOG_LEVEL: 'info', LOG_FORMAT: '', ...SECRETS, ...env }, stdio: ['ignore', out?.writeFd ?? 'pipe', 'pipe'] });
  if (out) closeSync(out.writeFd);
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.stderr!.on('data', (c: Buffer) => stderr.push(c.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: out?.reader ?? child.stdout! }).on('line', (line) => {
      stdout.push(line);
      const m = /^model-gateway listening on (\S+)$/.exec(line);
      if (m) resolve(m[1]);
    });
    exit.then((code) => reject(new Error(`exited ${code}: ${stderr.join('')}`)));
  });
  return { child, url, stdout, stderr, exit };
}

interface Pipe {
  writeFd: number;
  reader: Socket;
}

/** A named pipe: the child writes to `writeFd`; destroying `reader` leaves its writes nowhere to go (EPIPE). */
function realPipe(): Pipe {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'mg-logs-')), 'stdout');
  execFileSync('mkfifo', [file]);
  // the reader first, without waiting for a writer; then the writer, which finds it
  const readFd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  const writeFd = openSync(file, constants.O_WRONLY);
  return { writeFd, reader: new Socket({ fd: readFd, readable: true, writable: false }) };
}

/** Closes the test's end of the pipe (its fd is closed once 'close' is emitted). */
async function closeReader(out: Pipe): Promise<void> {
  await new Promise((resolve) => out.reader.once('close', resolve).destroy());
}

describe('one log line per request from the model-gateway command', function () {
  this.timeout(60_000);
  let upstream: FakeOpenAI;
  let docs: FakeMcpServer;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    docs = await FakeMcpServer.start({ tools: { search: { handler: () => ({ content: [{ type: 'text', text: 'found it' }] }) } } });
  });
  after(async () => {
    await upstream.stop();
    await docs.close();
  });

  const config = () => ({
    store: { url: 'memory://' },
    adminKey: { $env: 'LOGS_ADMIN' },
    organizations: [{ id: 'acme' }],
    keys: [{ key: { $env: 'LOGS_KEY' }, org: 'acme', id: 'logger' }],
    providers: [
      { id: 'up', type: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: { $env: 'LOGS_PROVIDER' } },
      { id: 'local', type: 'echo' },
    ],
    models: [
      { name: 'gpt-test', provider: 'up', model: 'upstream-model', price: { inputPerMTok: 1, outputPerMTok: 2 } },
      { name: 'embed', provider: 'up', model: 'upstream-embed', kind: 'embedding' },
      { name: 'echo', provider: 'local' },
    ],
    mcpServers: [{ name: 'docs', url: docs.url, auth: { type: 'bearer', token: { $env: 'LOGS_MCP' } } }],
    mcp: { healthCheckIntervalSeconds: 0 },
  });

  it('writes one JSON line with the request fields for every request kind, and never a secret', async () => {
    upstream.script = (req) => {
      if (req.path.endsWith('/embeddings')) return { kind: 'json', body: { object: 'list', model: 'upstream-embed', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], usage: { prompt_tokens: 3, total_tokens: 3 } } };
      if ((req.body as { stream?: boolean }).stream) return { kind: 'sse', events: chatChunks(['a ', 'b'], { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 }) };
      if (JSON.stringify(req.body).includes('leak')) return { kind: 'json', status: 400, body: { error: { message: `bad key ${SECRETS.LOGS_PROVIDER}` } } };
      return { kind: 'json', body: chatCompletion('hello', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
    };
    const gw = await run(config());
    const ids: Record<string, string> = {};
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: SECRETS.LOGS_KEY, maxRetries: 0 });
    try {
      ids.chat = (await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }).withResponse()).response.headers.get('x-gateway-request-id')!;
      const stream = await client.chat.completions.create({ model: 'gpt-test', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
      ids.stream = stream.response.headers.get('x-gateway-request-id')!;
      for await (const _ of stream.data);
      ids.embeddings = (await client.embeddings.create({ model: 'embed', input: 'x' }).withResponse()).response.headers.get('x-gateway-request-id')!;
      const messages = await fetch(`${gw.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': SECRETS.LOGS_KEY, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'gpt-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(messages.status).to.equal(200);
      ids.messages = messages.headers.get('x-gateway-request-id')!;
      const responses = await client.responses
        .create({ model: 'echo', input: 'call docs-search {"q": "x"}', tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }] })
        .withResponse();
      expect(responses.data.output_text).to.equal('found it');
      ids.responses = responses.response.headers.get('x-gateway-request-id')!;
      const mcp = await fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': `Bearer ${SECRETS.LOGS_KEY}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'docs-search', arguments: {} } }),
      });
      expect(await mcp.text()).to.include('found it');
      ids.mcp = mcp.headers.get('x-gateway-request-id')!;
      const failed = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'leak' }] }).withResponse().catch((e) => e);
      ids.failed = failed.headers.get('x-gateway-request-id');
    } finally {
      gw.child.kill('SIGTERM');
    }
    expect(await gw.exit).to.equal(0);

    const lines = gw.stdout.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    const requestLines = lines.filter((l) => l.msg === 'request');
    const lineOf = (id: string) => {
      const found = requestLines.filter((l) => l.requestId === id);
      expect(found, `lines for ${id}`).to.have.length(1);
      return found[0];
    };
    for (const id of Object.values(ids)) {
      const line = lineOf(id);
      expect(line).to.include.all.keys(...FIELDS, 'time', 'level');
      expect(line.level).to.equal('info');
      expect(line).to.include({ keyId: 'logger', org: 'acme' });
    }
    expect(lineOf(ids.chat)).to.deep.include({ endpoint: 'chat', model: 'gpt-test', deployment: 'up/upstream-model', status: 200, inputTokens: 10, outputTokens: 5, cost: 0.00002, attempts: 1 });
    expect(lineOf(ids.stream)).to.deep.include({ endpoint: 'chat', status: 200, inputTokens: 4, outputTokens: 2 });
    expect(lineOf(ids.embeddings)).to.deep.include({ endpoint: 'embeddings', model: 'embed', inputTokens: 3 });
    expect(lineOf(ids.messages)).to.deep.include({ endpoint: 'messages', model: 'gpt-test', status: 200 });
    // its two model rounds (the tool call, then the answer) are one upstream attempt each
    expect(lineOf(ids.responses)).to.deep.include({ endpoint: 'responses', model: 'echo', status: 200, attempts: 2 });
    expect(lineOf(ids.mcp)).to.deep.include({ endpoint: 'mcp', model: 'MCP: docs-search', deployment: 'mcp:docs', status: 200, attempts: 1 });
    expect(lineOf(ids.failed)).to.deep.include({ status: 400, attempts: 1 });
    expect(lineOf(ids.failed).errorCode).to.be.a('string');
    // the Responses request's tool call is a child with a line of its own; its model rounds fold into the parent's
    const children = requestLines.filter((l) => l.parentRequestId === ids.responses);
    expect(children.map((l) => l.model)).to.deep.equal(['MCP: docs-search']);
    expect(requestLines).to.have.length(Object.keys(ids).length + 1);
    // the gateway's own events are in the same format
    expect(lines.every((l) => typeof l.time === 'string' && typeof l.level === 'string' && typeof l.msg === 'string')).to.equal(true);
    expect(lines.some((l) => l.msg === 'draining')).to.equal(true);

    const output = gw.stdout.join('\n') + gw.stderr.join('');
    for (const secret of Object.values(SECRETS)) expect(output).to.not.include(secret);
  });

  it('gives a /mcp tool call\'s line no parentRequestId: only a Responses request\'s tool call has a parent', async () => {
    const gw = await run(config());
    let id: string;
    try {
      const mcp = await fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': `Bearer ${SECRETS.LOGS_KEY}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'docs-search', arguments: {} } }),
      });
      expect(await mcp.text()).to.include('found it');
      id = mcp.headers.get('x-gateway-request-id')!;
    } finally {
      gw.child.kill('SIGTERM');
    }
    expect(await gw.exit).to.equal(0);
    const lines = gw.stdout.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    expect(lines).to.have.length(1);
    expect(lines[0]).to.include({ requestId: id, endpoint: 'mcp', model: 'MCP: docs-search' });
    // it named the call's own request id, so every /mcp call read as a tool call of some response
    expect(lines[0]).to.not.have.property('parentRequestId');
  });

  it('gives each tool call of a /mcp batch its own request id and log entry, the HTTP request\'s id as its parentRequestId', async () => {
    const gw = await run(config());
    let httpId: string;
    let entries: { id: string }[];
    let lines: Record<string, unknown>[];
    try {
      const mcp = await fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': `Bearer ${SECRETS.LOGS_KEY}` },
        body: JSON.stringify([
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'docs-search', arguments: { q: 'one' } } },
          { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'docs-search', arguments: { q: 'two' } } },
        ]),
      });
      expect(((await mcp.json()) as unknown[]).length).to.equal(2);
      httpId = mcp.headers.get('x-gateway-request-id')!;
      const requestLines = () => gw.stdout.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
      await eventually(() => requestLines().length === 2);
      lines = requestLines();
      // each line's id finds that call's own entry, as the console's Details asks for it
      entries = [];
      for (const line of lines) {
        const res = await fetch(`${gw.url}/admin/v1/logs/${line.requestId}`, { headers: { authorization: `Bearer ${SECRETS.LOGS_ADMIN}` } });
        expect(res.status).to.equal(200);
        entries.push((await res.json()) as { id: string });
      }
    } finally {
      gw.child.kill('SIGTERM');
    }
    expect(await gw.exit).to.equal(0);
    expect(lines.map((l) => l.parentRequestId)).to.deep.equal([httpId, httpId]);
    expect(new Set([httpId, ...lines.map((l) => l.requestId)]).size).to.equal(3);
    expect(entries.map((e) => e.id)).to.deep.equal(lines.map((l) => l.requestId));
  });

  it('writes lines in batches yet never holds one back: the line of a lone request arrives while the gateway keeps running, every line of a burst arrives', async () => {
    upstream.script = () => ({ kind: 'json', body: chatCompletion('hello', { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }) });
    const gw = await run(config());
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: SECRETS.LOGS_KEY, maxRetries: 0 });
    const requestLines = () => gw.stdout.filter((l) => l.startsWith('{') && JSON.parse(l).msg === 'request').length;
    const waitForLines = async (n: number) => {
      // far beyond the 250 ms the logger may hold a line: a line that never comes fails here, not a slow one
      for (let waited = 0; requestLines() < n; waited += 20) {
        if (waited > 5_000) expect.fail(`${requestLines()} request lines after 5 s, expected ${n}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    try {
      // one line is far less than the 56 KB batch: the periodic flush must send it
      await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
      await waitForLines(1);
      // a burst larger than one batch, every line whole (a batch boundary never splits a line)
      await Promise.all(Array.from({ length: 60 }, () => client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] })));
      await waitForLines(61);
      expect(gw.child.exitCode).to.equal(null);
    } finally {
      gw.child.kill('SIGTERM');
    }
    expect(await gw.exit).to.equal(0);
    expect(requestLines()).to.equal(61);
  });

  /** SIGTERM, then the exit code, or 'hung' when the process is still there 20 s later (then it is killed). */
  async function stopWithin(gw: Running): Promise<number | null | 'hung'> {
    gw.child.kill('SIGTERM');
    const exited = await Promise.race([gw.exit, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 20_000))]);
    if (exited === 'hung') gw.child.kill('SIGKILL');
    return exited;
  }

  it('keeps serving when stdout goes away (the reader of its pipe exits), and exits on SIGTERM', async () => {
    upstream.script = () => ({ kind: 'json', body: chatCompletion('hello', { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }) });
    const out = realPipe();
    const gw = await run(config(), [], {}, out);
    // the reader of the pipe is gone: every write to stdout now fails with EPIPE
    await closeReader(out);
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: SECRETS.LOGS_KEY, maxRetries: 0 });
    for (let i = 0; i < 2; i++) {
      const answer = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
      expect(answer.choices[0].message.content).to.equal('hello');
      // past the logger's 250 ms: its periodic write of the line fails meanwhile
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    expect(await stopWithin(gw)).to.equal(0);
    expect(gw.stderr.join('')).to.not.include('EPIPE');
  });

  it('exits on SIGTERM when stdout went away with lines still in its buffer', async () => {
    const out = realPipe();
    const gw = await run(config(), [], {}, out);
    await closeReader(out);
    // the "draining" line waits in the logger's buffer and its flush at exit fails: that flush used to
    // retry forever (the process never exited), then to throw over the exit
    expect(await stopWithin(gw)).to.equal(0);
    expect(gw.stderr.join('')).to.not.include('EPIPE');
  });

  it('reads LOG_LEVEL in any case and without blanks around it: WARN and " Warn " leave the request lines out, as warn does', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('hello') };
    // a request line is info: at info it is written, at warn it is not (the same run, so the test sees the difference)
    for (const [level, written] of [['info', true], ['WARN', false], [' Warn\n', false]] as const) {
      const gw = await run(config(), [], { LOG_LEVEL: level });
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: SECRETS.LOGS_KEY, maxRetries: 0 });
      await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
      gw.child.kill('SIGTERM');
      expect(await gw.exit).to.equal(0);
      const requestLines = gw.stdout.filter((l) => l.startsWith('{') && (JSON.parse(l) as { msg?: string }).msg === 'request');
      expect(requestLines, `LOG_LEVEL=${JSON.stringify(level)}`).to.have.length(written ? 1 : 0);
    }
  });

  it('prints human-readable lines with --log-format pretty (or LOG_FORMAT=pretty), the startup line unchanged', async () => {
    for (const [args, env] of [[['--log-format', 'pretty'], {}], [[], { LOG_FORMAT: 'pretty' }]] as const) {
      upstream.script = { kind: 'json', body: chatCompletion('hello') };
      const gw = await run(config(), [...args], { ...env, NO_COLOR: '1' });
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: SECRETS.LOGS_KEY, maxRetries: 0 });
      await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
      gw.child.kill('SIGTERM');
      expect(await gw.exit).to.equal(0);
      expect(gw.stdout[0]).to.equal(`model-gateway listening on ${gw.url}`);
      const text = gw.stdout.join('\n');
      // a heading line per event, its fields indented below it; no JSON
      expect(text).to.match(/^\[[\d:.]+\] INFO: request$/m);
      expect(text).to.match(/^ {4}model: "gpt-test"$/m);
      expect(gw.stdout.some((l) => l.startsWith('{'))).to.equal(false);
      expect(text).to.not.include(SECRETS.LOGS_KEY);
    }
  });

  it('refuses an unknown log format, naming the flag', async () => {
    const err = await run(config(), ['--log-format', 'xml']).catch((e: Error) => e);
    expect((err as Error).message).to.include('--log-format: log format must be json or pretty, got "xml"');
  });
});
