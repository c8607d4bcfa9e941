import { expect } from 'chai';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { GatewayConfigInput } from '../../core/config/types';
import { FakeMcpServer } from '../support/fake-mcp-server';
import { REPO_ROOT } from '../support/fixtures';
import { startGateway, type TestGateway } from '../support/start-gateway';
import { adminApi, callTool, leaked } from './secrets-support';

const MAIN = path.join(REPO_ROOT, 'dist', 'core', 'main.js');
const ADMIN = 'sk-admin-CANARY-rot-0';
const MEMBER = 'sk-member-CANARY-rot-1';
const TOKEN = 'token-CANARY-rot-2';
const LATER_TOKEN = 'token-CANARY-rot-3';

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('model-gateway rotate-secret-key', () => {
  let upstream: FakeMcpServer;
  let dir: string;
  let db: string;
  let configFile: string;
  let gateways: TestGateway[];

  const config = (): GatewayConfigInput => ({
    adminKey: ADMIN,
    organizations: [{ id: 'acme' }],
    keys: [{ key: MEMBER, org: 'acme', id: 'member' }],
    mcp: { healthCheckIntervalSeconds: 0 },
    store: { url: `sqlite://${db}` },
  });
  const baseEnv = () => {
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'error' };
    delete env.GATEWAY_SECRET_KEY;
    delete env.GATEWAY_SECRET_KEY_FILE;
    return env;
  };
  const start = async (env: NodeJS.ProcessEnv) => {
    const gw = await startGateway(config(), { env });
    gateways.push(gw);
    return gw;
  };
  /** the key id each stored secret record names, read from the database itself */
  const storedKeyIds = () =>
    execFileSync('sqlite3', [db, "SELECT value FROM records WHERE collection = 'mcp_server_secrets'"], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map((row) => JSON.parse(row).kid as string);
  const register = async (gw: TestGateway, name: string, token: string) => {
    const res = await adminApi(gw, ADMIN, 'POST', '/admin/v1/mcp/servers', { name, url: upstream.url, org: 'acme', auth: { type: 'bearer', token } });
    expect(res.status, res.text).to.equal(201);
  };
  /** a fresh gateway on the same store calls these tools (one per server) with their servers' tokens */
  const expectWorkingAfterRestart = async (env: NodeJS.ProcessEnv, tools: string[], tokens: string[]) => {
    const gw = await start(env);
    for (const server of (await adminApi(gw, ADMIN, 'GET', '/admin/v1/mcp/servers')).body.data) {
      const checked = await adminApi(gw, ADMIN, 'POST', `/admin/v1/mcp/servers/${server.id}/health`);
      expect(checked.body.health?.status, checked.text).to.equal('healthy');
    }
    upstream.requests.length = 0;
    for (const tool of tools) await callTool(gw, MEMBER, tool);
    expect(upstream.requestsFor('tools/call').map((r) => r.headers.authorization)).to.deep.equal(tokens.map((t) => `Bearer ${t}`));
  };

  beforeEach(async () => {
    upstream = await FakeMcpServer.start({ tools: { search: {} } });
    dir = mkdtempSync(path.join(tmpdir(), 'mg-rotate-'));
    db = path.join(dir, 'gateway.db');
    configFile = path.join(dir, 'gateway.json');
    writeFileSync(configFile, JSON.stringify(config()));
    gateways = [];
  });
  afterEach(async () => {
    for (const gw of gateways) await gw.close();
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('with the key file: re-encrypts every secret under a new key, retires the old one, and a running gateway follows', async () => {
    const keyFile = path.join(dir, 'secret.key');
    const running = await start(baseEnv());
    await register(running, 'docs', TOKEN);
    const [oldKeyId] = storedKeyIds();
    const oldFile = readFileSync(keyFile, 'utf8');

    const rotated = await run(['rotate-secret-key', '--config', configFile], baseEnv());
    expect(rotated.code, rotated.stderr).to.equal(0);
    const newKeyId = /under key id ([0-9a-f]{16})/.exec(rotated.stdout)?.[1];
    expect(newKeyId).to.be.a('string').and.not.equal(oldKeyId);
    expect(rotated.stdout).to.include('re-encrypted 1 stored secret record(s)').and.include(`retired key id(s): ${oldKeyId}`);
    expect(storedKeyIds()).to.deep.equal([newKeyId]);
    const newFile = readFileSync(keyFile, 'utf8');
    expect(newFile).to.not.equal(oldFile);
    expect(newFile.split('\n').filter((l) => l && !l.startsWith('#'))).to.have.length(1);
    expect((statSync(keyFile).mode & 0o777).toString(8)).to.equal('600');
    expect(leaked(rotated.stdout + rotated.stderr, [TOKEN])).to.deep.equal([]);

    // the gateway that was running during the rotation seals what it stores next under the new key
    await register(running, 'later', LATER_TOKEN);
    expect(storedKeyIds()).to.deep.equal([newKeyId, newKeyId]);
    await running.close();
    gateways = [];
    await expectWorkingAfterRestart(baseEnv(), ['docs-search', 'later-search'], [TOKEN, LATER_TOKEN]);
  });

  it('with GATEWAY_SECRET_KEY: asks for NEW,OLD, re-encrypts under NEW, after which NEW alone is enough', async () => {
    const oldKey = randomBytes(32).toString('base64');
    const newKey = randomBytes(32).toString('hex');
    const first = await start({ ...baseEnv(), GATEWAY_SECRET_KEY: oldKey });
    await register(first, 'docs', TOKEN);
    await first.close();
    gateways = [];

    const single = await run(['rotate-secret-key', '--config', configFile], { ...baseEnv(), GATEWAY_SECRET_KEY: oldKey });
    expect(single.code).to.equal(1);
    expect(single.stderr).to.include('GATEWAY_SECRET_KEY=NEW,OLD');
    expect(single.stderr).to.not.include(oldKey);

    const rotated = await run(['rotate-secret-key', '--config', configFile], { ...baseEnv(), GATEWAY_SECRET_KEY: `${newKey},${oldKey}` });
    expect(rotated.code, rotated.stderr).to.equal(0);
    expect(rotated.stdout).to.include('re-encrypted 1 stored secret record(s)');
    expect(rotated.stdout + rotated.stderr).to.not.include(newKey).and.not.include(oldKey);

    // one server: its tools are offered without the alias prefix
    await expectWorkingAfterRestart({ ...baseEnv(), GATEWAY_SECRET_KEY: newKey }, ['search'], [TOKEN]);
    const stale = await startGateway(config(), { env: { ...baseEnv(), GATEWAY_SECRET_KEY: oldKey } }).then(
      async (gw) => (await gw.close(), undefined),
      (err: Error) => err,
    );
    expect(stale?.message).to.match(/not among the loaded keys/);
  });
});
