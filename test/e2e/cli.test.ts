import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { FakeOpenAI, chatChunks, chatCompletion } from '../support/fake-openai';
import { REPO_ROOT } from '../support/fixtures';

const MAIN = path.join(REPO_ROOT, 'dist', 'core', 'main.js');

function writeConfig(config: object): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'mg-cli-')), 'gateway.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

interface Started {
  child: ChildProcess;
  url: string;
  stdout: string[];
  stderr: string[];
  exit: Promise<number | null>;
}

async function startCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Started> {
  const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.stderr!.on('data', (c: Buffer) => stderr.push(c.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      stdout.push(line);
      const m = /^model-gateway listening on (http:\/\/\S+)$/.exec(line);
      if (m) resolve(m[1]);
    });
    exit.then((code) => reject(new Error(`exited ${code}: ${stderr.join('')}`)));
  });
  return { child, url, stdout, stderr, exit };
}

describe('the model-gateway command', () => {
  let upstream: FakeOpenAI;
  before(async () => {
    upstream = await new FakeOpenAI().start();
  });
  after(() => upstream.stop());

  const config = () => ({
    store: { url: 'memory://' },
    organizations: [{ id: 'o' }],
    keys: [{ key: { $env: 'CLI_TEST_KEY' }, org: 'o' }],
    providers: [{ id: 'up', type: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: { $env: 'CLI_PROVIDER_KEY' } }],
    models: [{ name: 'm', provider: 'up' }],
    server: { drainSeconds: 10 },
  });
  const env = { CLI_TEST_KEY: 'sk-cli-CANARY-key', CLI_PROVIDER_KEY: 'sk-cli-CANARY-provider' };

  it('prints the startup line, answers health checks, and lets an in-flight stream finish on SIGTERM before exiting 0', async () => {
    const gw = await startCli(['--config', writeConfig(config()), '--port', '0', '--host', '127.0.0.1'], env);
    expect(gw.stdout[0]).to.equal(`model-gateway listening on ${gw.url}`);
    expect((await fetch(`${gw.url}/health/liveness`)).status).to.equal(200);
    expect((await fetch(`${gw.url}/health/readiness`)).status).to.equal(200);

    upstream.script = { kind: 'sse', events: chatChunks(Array.from({ length: 10 }, (_, i) => `w${i} `)), eventDelayMs: 60 };
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.CLI_TEST_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const reader = res.body!.getReader();
    await reader.read();
    gw.child.kill('SIGTERM');
    // while the stream drains: readiness says 503 and new work is refused, in the API's error shape
    await waitUntil(async () => (await fetch(`${gw.url}/health/readiness`)).status === 503);
    const refused = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.CLI_TEST_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'too late' }] }),
    });
    expect(refused.status).to.equal(503);
    expect(((await refused.json()) as { error: { code: string } }).error.code).to.equal('draining');
    expect((await fetch(`${gw.url}/health/liveness`)).status).to.equal(200);
    let text = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).to.include('data: [DONE]');
    expect(text).to.include('w9 ');
    expect(await gw.exit).to.equal(0);
    const output = gw.stdout.join('\n') + gw.stderr.join('');
    expect(output).to.not.include(env.CLI_TEST_KEY);
    expect(output).to.not.include(env.CLI_PROVIDER_KEY);
  });

  it('reads an env() secret without the line break that ends a secret file (the upstream key and the virtual key work)', async () => {
    const gw = await startCli(['--config', writeConfig(config()), '--port', '0'], { CLI_TEST_KEY: `${env.CLI_TEST_KEY}\n`, CLI_PROVIDER_KEY: `${env.CLI_PROVIDER_KEY}\r\n` });
    try {
      upstream.script = { kind: 'json', body: chatCompletion('from upstream') };
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${env.CLI_TEST_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).to.equal(200);
      expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0].message.content).to.equal('from upstream');
      expect(upstream.last.headers.authorization).to.equal(`Bearer ${env.CLI_PROVIDER_KEY}`);
    } finally {
      gw.child.kill('SIGTERM');
      await gw.exit;
    }
  });

  it('exits non-zero on a config error and names the path of the bad field', async () => {
    const bad = { ...config(), models: [{ name: 'a', provider: 'up' }, { name: 'b', provider: 'up' }, { name: 'c', provider: 'oai2' }] };
    const child = spawn(process.execPath, [MAIN, '--config', writeConfig(bad)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).to.equal(1);
    expect(stderr).to.include('models[2].provider: unknown provider "oai2"');
  });

  it('says in one line that a --config path is a directory (docker run -v of a file the host lacks), without a require stack', async () => {
    const folder = path.join(mkdtempSync(path.join(tmpdir(), 'mg-cli-')), 'gateway.config.ts');
    mkdirSync(folder);
    for (const args of [['--config', folder], ['check', '--config', folder]]) {
      const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
      expect(await new Promise((resolve) => child.once('exit', resolve))).to.equal(1);
      expect(stderr).to.equal(`model-gateway: config error:\n  cannot read config file ${folder}: it is a directory, not a file\n`);
    }
  });

  it('names GATEWAY_SECRET_KEY_FILE when it points at a folder (the secrets mount, not the file in it), not a bare EISDIR', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'mg-cli-secrets-'));
    const { GATEWAY_SECRET_KEY: _k, ...rest } = process.env;
    const child = spawn(process.execPath, [MAIN, '--config', writeConfig(config()), '--port', '0'], { env: { ...rest, ...env, GATEWAY_SECRET_KEY_FILE: folder }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    expect(await new Promise((resolve) => child.once('exit', resolve))).to.equal(1);
    expect(stderr).to.equal(`model-gateway: config error:\n  secret key: the key file ${folder} is a directory, not a file (from GATEWAY_SECRET_KEY_FILE)\n`);
  });

  it('names store.url and the file when SQLite cannot open it (not a database, a folder), not a bare "file is not a database"', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mg-cli-sqlite-'));
    const notDb = path.join(dir, 'notes.txt');
    writeFileSync(notDb, 'these are not the pages of a SQLite database, only text long enough to be read as a header\n'.repeat(8));
    for (const [file, says] of [
      [notDb, 'file is not a database'],
      [dir, `EISDIR: illegal operation on a directory, open '${dir}'`],
    ]) {
      const child = spawn(process.execPath, [MAIN, '--config', writeConfig({ ...config(), store: { url: `sqlite://${file}` } }), '--port', '0'], {
        env: { ...process.env, ...env, GATEWAY_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
      expect(await new Promise((resolve) => child.once('exit', resolve))).to.equal(1);
      expect(stderr).to.equal(`model-gateway: config error:\n  store.url: cannot open the SQLite file ${file}: ${says}\n`);
    }
  });

  it('leaves no ./data/secret.key behind when the start fails to reach its Redis or PostgreSQL store', async () => {
    const closed = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = srv.address() as net.AddressInfo;
        srv.close(() => resolve(port));
      });
    });
    for (const url of [`redis://127.0.0.1:${closed}`, `postgres://gw:pw@127.0.0.1:${closed}/gateway`]) {
      const cwd = mkdtempSync(path.join(tmpdir(), 'mg-cli-cwd-'));
      const { GATEWAY_SECRET_KEY: _k, GATEWAY_SECRET_KEY_FILE: _f, ...rest } = process.env;
      const child = spawn(process.execPath, [MAIN, '--config', writeConfig({ ...config(), store: { url } })], { cwd, env: { ...rest, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
      expect(await new Promise((resolve) => child.once('exit', resolve))).to.equal(1);
      expect(stderr).to.include('store.url');
      expect(existsSync(path.join(cwd, 'data', 'secret.key')), url).to.equal(false);
    }
  });

  it('names a missing secret variable without printing any secret', async () => {
    const child = spawn(process.execPath, [MAIN, '--config', writeConfig(config())], { env: { ...process.env, CLI_TEST_KEY: env.CLI_TEST_KEY }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    expect(await new Promise((resolve) => child.once('exit', resolve))).to.equal(1);
    expect(stderr).to.include('providers[0].apiKey: environment variable CLI_PROVIDER_KEY is not set');
    expect(stderr).to.not.include(env.CLI_TEST_KEY);
  });

  it('serves the demo config with npm start semantics: echo model, demo key, no API keys', async () => {
    const gw = await startCli(['--config', path.join(REPO_ROOT, 'gateway.config.ts'), '--port', '0'], { GATEWAY_ADMIN_KEY: '' });
    try {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer sk-demo-key', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: 'hello demo' }] }),
      });
      expect(res.status).to.equal(200);
      const body = (await res.json()) as { choices: { message: { content: string } }[] };
      expect(body.choices[0].message.content).to.equal('hello demo');
    } finally {
      gw.child.kill('SIGTERM');
      expect(await gw.exit).to.equal(0);
    }
  });
});

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('condition not met in time');
}
