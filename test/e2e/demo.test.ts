import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import OpenAI from 'openai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { REPO_ROOT } from '../support/fixtures';

/**
 * The demo as a new user meets it: `npm start`'s own command (read from package.json, run on a free port),
 * then the README's commands against it, with real clients.
 */
function startCommand(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const [bin, ...args] = pkg.scripts.start.split(/\s+/);
  expect(bin).to.equal('node');
  return [...args, '--port', '0'];
}

describe('the demo (npm start)', function () {
  this.timeout(60_000);
  let child: ChildProcess;
  let url: string;
  const stdout: string[] = [];
  let exit: Promise<number | null>;

  before(async () => {
    // GATEWAY_ADMIN_KEY unset: the demo's own admin key applies
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn' };
    delete env.GATEWAY_ADMIN_KEY;
    child = spawn(process.execPath, startCommand(), { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    exit = new Promise((resolve) => child.once('exit', resolve));
    const lines = createInterface({ input: child.stdout! });
    url = await new Promise<string>((resolve, reject) => {
      lines.on('line', (line) => {
        stdout.push(line);
        if (line.startsWith('web console:')) resolve(/listening on (\S+)/.exec(stdout.join('\n'))![1]);
      });
      exit.then((code) => reject(new Error(`npm start exited ${code}: ${stderr}`)));
    });
  });
  after(async () => {
    child.kill('SIGTERM');
    expect(await exit).to.equal(0);
  });

  it('prints the console address and the local demo admin key once, and sends / to /ui', async () => {
    const printed = stdout.join('\n');
    expect(printed).to.include(`web console: ${url}/ui`);
    expect(printed.split('sk-demo-admin').length - 1).to.equal(1);
    expect(printed).to.match(/local use only/);
    const root = await fetch(`${url}/`, { redirect: 'manual' });
    expect(root.status).to.equal(302);
    expect(root.headers.get('location')).to.equal('/ui');
    expect((await fetch(`${url}/`)).headers.get('content-type')).to.match(/^text\/html/);
  });

  it('chats and streams with the demo key (README quick start)', async () => {
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'sk-demo-key' });
    const answer = await client.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'Hello, gateway' }] });
    expect(answer.choices[0].message.content).to.equal('Hello, gateway');
    const stream = await client.chat.completions.create({ model: 'echo', stream: true, messages: [{ role: 'user', content: 'one two three' }] });
    const pieces: string[] = [];
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) pieces.push(chunk.choices[0].delta.content);
    expect(pieces).to.deep.equal(['one ', 'two ', 'three']);
  });

  it('streams a long echo answer in turns with other requests: a health check is answered while it streams', async () => {
    // about 100,000 frames, made in process: without turns the whole stream ran before anything else did
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-demo-key', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'echo', stream: true, messages: [{ role: 'user', content: 'word '.repeat(100_000) }] }),
    });
    expect(res.status).to.equal(200);
    const reader = res.body!.getReader();
    let received = 0;
    let receivedWhenAnswered: number | undefined;
    let health: Promise<void> | undefined;
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      received += read.value.byteLength;
      health ??= fetch(`${url}/health/liveness`).then((r) => {
        expect(r.status).to.equal(200);
        receivedWhenAnswered = received;
      });
    }
    await health;
    expect(receivedWhenAnswered, `answered after ${receivedWhenAnswered} of ${received} bytes`).to.be.below(received / 2);
  });

  it('runs the whole Responses + MCP tool loop locally: echo calls the demo calc tool, then answers with its result', async () => {
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'sk-demo-key' });
    const response = await client.responses.create({
      model: 'echo',
      input: 'call calc {"expr": "2+2*3"}',
      tools: [{ type: 'mcp', server_label: 'gateway', server_url: 'gateway_proxy', require_approval: 'never' }],
    });
    const call = response.output.find((item) => item.type === 'mcp_call') as { name: string; arguments: string; output: string } | undefined;
    expect(call, JSON.stringify(response.output)).to.not.equal(undefined);
    // two servers reach the key (demo and gateway_proxy), so tool names carry the server: `demo-calc`
    expect(call!.name).to.equal('demo-calc');
    expect(JSON.parse(call!.arguments)).to.deep.equal({ expr: '2+2*3' });
    expect(call!.output).to.equal('8');
    expect(response.output_text).to.equal('8');
  });

  it('serves the demo tools on /mcp to a standard MCP client', async () => {
    const client = new Client({ name: 'demo-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { 'x-gateway-api-key': 'Bearer sk-demo-key' } } }));
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).to.include.members(['demo-time', 'demo-calc', 'demo-lookup']);
      const result = (await client.callTool({ name: 'demo-calc', arguments: { expr: '(1+2)^2' } })) as { content: { type: string; text: string }[]; isError?: boolean };
      expect(result.isError ?? false).to.equal(false);
      expect(result.content[0].text).to.equal('9');
      // the parser refuses code: never eval
      const refused = (await client.callTool({ name: 'demo-calc', arguments: { expr: 'process.exit(1)' } })) as { content: { text: string }[]; isError?: boolean };
      expect(refused.isError).to.equal(true);
      expect(refused.content[0].text).to.match(/^calc: unexpected "p"/);
      const fact = (await client.callTool({ name: 'demo-lookup', arguments: { topic: 'mcp' } })) as { content: { text: string }[] };
      expect(fact.content[0].text).to.match(/Model Context Protocol/);
      const time = (await client.callTool({ name: 'demo-time', arguments: {} })) as { content: { text: string }[] };
      expect(Math.abs(Date.parse(time.content[0].text) - Date.now())).to.be.below(3_600_000);
    } finally {
      await client.close();
    }
  });

  it('opens the management API with the demo admin key, and not with the member key', async () => {
    const me = await fetch(`${url}/admin/v1/me`, { headers: { authorization: 'Bearer sk-demo-admin' } });
    expect(me.status).to.equal(200);
    expect(((await me.json()) as { role: string }).role).to.equal('platform_admin');
    const servers = await fetch(`${url}/admin/v1/mcp/servers`, { headers: { authorization: 'Bearer sk-demo-admin' } });
    expect(servers.status).to.equal(200);
    expect(JSON.stringify(await servers.json())).to.include('"demo"');
    const member = await fetch(`${url}/admin/v1/me`, { headers: { authorization: 'Bearer sk-demo-key' } });
    expect(member.status).to.equal(403);
  });
});
