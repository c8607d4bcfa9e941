import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { GatewayConfigInput } from '../../core/config/types';
import { FakeMcpServer } from '../support/fake-mcp-server';
import { startRedis, type RedisServer } from '../support/redis-server';
import { startGateway, type TestGateway } from '../support/start-gateway';
import { adminApi, callTool, leaked } from './secrets-support';

const ADMIN = 'sk-admin-CANARY-rest-0';
const MEMBER = 'sk-member-CANARY-rest-1';
const BEARER = 'bearer-CANARY-rest-2';
const API_KEY = 'apikey-CANARY-rest-3';
const BASIC_USER = 'basicuser-CANARY-rest-4';
const BASIC_PASSWORD = 'basicpass-CANARY-rest-5';
const STATIC_A = 'static-CANARY-rest-6';
const STATIC_B = 'static-CANARY-rest-7';
const PATCHED_BEARER = 'patched-CANARY-rest-8';
const URL_TOKEN = 'urltoken-CANARY-rest-9';
const URL_PASSWORD = 'urlpass-CANARY-rest-10';
/** every credential registered through the API; a created virtual key's secret is added as it appears */
const CANARIES = [ADMIN, MEMBER, BEARER, API_KEY, BASIC_USER, BASIC_PASSWORD, STATIC_A, STATIC_B, PATCHED_BEARER, URL_TOKEN, URL_PASSWORD];

const config = (storeUrl: string): GatewayConfigInput => ({
  adminKey: ADMIN,
  organizations: [{ id: 'acme' }],
  keys: [{ key: MEMBER, org: 'acme', id: 'member' }],
  mcp: { healthCheckIntervalSeconds: 0 },
  store: { url: storeUrl },
});

/**
 * Register a server with each kind of credential and static headers, change one, create a virtual key,
 * and call each server once; returns every response text the admin API gave and the virtual key.
 */
async function registerEverything(gw: TestGateway, upstream: FakeMcpServer) {
  const texts: string[] = [];
  const register = async (body: Record<string, unknown>) => {
    const res = await adminApi(gw, ADMIN, 'POST', '/admin/v1/mcp/servers', { url: upstream.url, org: 'acme', ...body });
    expect(res.status, res.text).to.equal(201);
    texts.push(res.text);
    return res.body.id as string;
  };
  const bearer = await register({ name: 'bearer', auth: { type: 'bearer', token: BEARER } });
  await register({ name: 'apikey', auth: { type: 'api_key', key: API_KEY, header: 'x-api-key' }, staticHeaders: { 'x-static-a': STATIC_A } });
  await register({ name: 'basic', auth: { type: 'basic', username: BASIC_USER, password: BASIC_PASSWORD } });
  const headersOnly = await register({ name: 'headers', staticHeaders: { 'x-static-b': STATIC_B } });
  // some hosted servers take a token in the URL: the record keeps it redacted, the secrets keep it whole
  const inUrl = new URL(upstream.url);
  inUrl.username = 'svc';
  inUrl.password = URL_PASSWORD;
  inUrl.searchParams.set('token', URL_TOKEN);
  await register({ name: 'inurl', url: inUrl.href });
  const patched = await adminApi(gw, ADMIN, 'PATCH', `/admin/v1/mcp/servers/${headersOnly}`, { auth: { type: 'bearer', token: PATCHED_BEARER } });
  expect(patched.status).to.equal(200);
  texts.push(patched.text);
  const key = await adminApi(gw, ADMIN, 'POST', '/admin/v1/keys', { org: 'acme', name: 'bot' });
  expect(key.status).to.equal(201);
  texts.push((await adminApi(gw, ADMIN, 'GET', '/admin/v1/mcp/servers')).text, (await adminApi(gw, ADMIN, 'GET', '/admin/v1/keys')).text);
  for (const server of ['bearer', 'apikey', 'basic', 'headers', 'inurl']) await callTool(gw, MEMBER, `${server}-search`);
  return { texts, virtualKey: key.body.key as string, bearerId: bearer };
}

/** After a restart discovery runs in the background: check every server now, then call each. */
async function callEachAfterRestart(gw: TestGateway) {
  for (const server of (await adminApi(gw, ADMIN, 'GET', '/admin/v1/mcp/servers')).body.data) {
    const checked = await adminApi(gw, ADMIN, 'POST', `/admin/v1/mcp/servers/${server.id}/health`);
    expect(checked.body.health.status, checked.text).to.equal('healthy');
  }
  for (const server of ['bearer', 'apikey', 'basic', 'headers', 'inurl']) await callTool(gw, MEMBER, `${server}-search`);
}

/** What each server received on its tools/call: the credentials really went upstream. */
function expectCredentialsUpstream(upstream: FakeMcpServer) {
  const calls = upstream.requestsFor('tools/call').map((r) => r.headers);
  expect(calls.some((h) => h.authorization === `Bearer ${BEARER}`)).to.equal(true);
  expect(calls.some((h) => h['x-api-key'] === API_KEY && h['x-static-a'] === STATIC_A)).to.equal(true);
  expect(calls.some((h) => h.authorization === `Basic ${Buffer.from(`${BASIC_USER}:${BASIC_PASSWORD}`).toString('base64')}`)).to.equal(true);
  expect(calls.some((h) => h.authorization === `Bearer ${PATCHED_BEARER}` && h['x-static-b'] === STATIC_B)).to.equal(true);
  expect(upstream.requestsFor('tools/call').some((r) => r.url.includes(`token=${URL_TOKEN}`))).to.equal(true);
}

describe('secrets registered through the management API are encrypted at rest', () => {
  let upstream: FakeMcpServer;
  beforeEach(async () => {
    upstream = await FakeMcpServer.start({ tools: { search: { description: 'Search' } } });
  });
  afterEach(() => upstream.close());

  describe('SQLite store with the default key file', () => {
    let dir: string;
    let db: string;
    beforeEach(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'mg-secrets-'));
      db = path.join(dir, 'gateway.db');
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    const noKeyEnv = () => {
      const env = { ...process.env };
      delete env.GATEWAY_SECRET_KEY;
      delete env.GATEWAY_SECRET_KEY_FILE;
      return env;
    };

    it('creates the key file and the database files 0600, logs the key file once, and leaves no secret in a dump, the raw files, responses or logs', async () => {
      const gw = await startGateway(config(`sqlite://${db}`), { env: noKeyEnv() });
      let stored: Awaited<ReturnType<typeof registerEverything>>;
      try {
        stored = await registerEverything(gw, upstream);
        expectCredentialsUpstream(upstream);
        // while the database is open in WAL mode its -wal and -shm files exist (SQLite removes them on close)
        for (const file of [path.join(dir, 'secret.key'), db, `${db}-wal`, `${db}-shm`]) {
          expect((statSync(file).mode & 0o777).toString(8), file).to.equal('600');
        }
      } finally {
        await gw.close();
      }
      expect(gw.logLines.filter((l) => l.includes('created a secret key file'))).to.have.length(1);

      const canaries = [...CANARIES, stored.virtualKey];
      const dump = execFileSync('sqlite3', [db, '.dump'], { encoding: 'utf8' });
      expect(dump).to.include('mcp_server_secrets').and.to.include('aes-256-gcm');
      expect(leaked(dump, canaries)).to.deep.equal([]);
      const raw = ['', '-wal'].filter((s) => existsSync(db + s)).map((s) => readFileSync(db + s).toString('latin1')).join('');
      expect(leaked(raw, canaries)).to.deep.equal([]);
      // base64 forms too: a Basic header or an encoding of a secret would show them
      expect(leaked(raw + dump, canaries.map((c) => Buffer.from(c).toString('base64').slice(0, 16)))).to.deep.equal([]);
      expect(leaked([...stored.texts, gw.logLines.join('')].join('\n'), canaries)).to.deep.equal([]);
    });

    it('reads the secrets back after a restart with the same key file and calls the upstreams with them', async () => {
      const first = await startGateway(config(`sqlite://${db}`), { env: noKeyEnv() });
      try {
        await registerEverything(first, upstream);
      } finally {
        await first.close();
      }
      upstream.requests.length = 0;
      const second = await startGateway(config(`sqlite://${db}`), { env: noKeyEnv() });
      try {
        await callEachAfterRestart(second);
        expectCredentialsUpstream(upstream);
        expect(second.logLines.filter((l) => l.includes('created a secret key file'))).to.have.length(0);
      } finally {
        await second.close();
      }
    });

    it('refuses to start with a wrong or a lost key, naming the key id and never showing a secret', async () => {
      const first = await startGateway(config(`sqlite://${db}`), { env: noKeyEnv() });
      try {
        await registerEverything(first, upstream);
      } finally {
        await first.close();
      }
      const wrongKey = { ...noKeyEnv(), GATEWAY_SECRET_KEY: randomBytes(32).toString('hex') };
      const wrong = await startGateway(config(`sqlite://${db}`), { env: wrongKey }).then(
        async (gw) => (await gw.close(), undefined),
        (err: Error) => err,
      );
      expect(wrong, 'the gateway started').to.be.instanceOf(Error);
      expect(wrong!.message).to.match(/encrypted with key id [0-9a-f]{16}, which is not among the loaded keys/);
      expect(leaked(wrong!.message, CANARIES)).to.deep.equal([]);

      renameSync(path.join(dir, 'secret.key'), path.join(dir, 'secret.key.bak'));
      const lost = await startGateway(config(`sqlite://${db}`), { env: noKeyEnv() }).then(
        async (gw) => (await gw.close(), undefined),
        (err: Error) => err,
      );
      expect(lost, 'the gateway started').to.be.instanceOf(Error);
      expect(lost!.message).to.include('restore the key file');
      expect(leaked(lost!.message, CANARIES)).to.deep.equal([]);
    });

    it('refuses a GATEWAY_SECRET_KEY that is not 32 bytes in hex or base64', async () => {
      for (const bad of ['short', 'a'.repeat(63), Buffer.alloc(16).toString('base64')]) {
        const err = await startGateway(config(`sqlite://${db}`), { env: { ...noKeyEnv(), GATEWAY_SECRET_KEY: bad } }).then(
          async (gw) => (await gw.close(), undefined),
          (e: Error) => e,
        );
        expect(err?.message, bad).to.match(/GATEWAY_SECRET_KEY is not 32 bytes written as 64 hex digits or as base64/);
        expect(err!.message).to.not.include(bad);
      }
    });
  });

  describe('Redis store with GATEWAY_SECRET_KEY', () => {
    let redis: RedisServer;
    before(async () => {
      redis = await startRedis();
    });
    after(() => redis.stop());

    /** `redis-cli --scan`, then every key read back raw according to its type */
    function redisDump(): string {
      const cli = (...args: string[]) => execFileSync('redis-cli', ['-p', String(redis.port), ...args], { encoding: 'utf8' });
      const keys = cli('--scan').split('\n').filter(Boolean);
      expect(keys.length).to.be.greaterThan(0);
      return keys
        .map((key) => {
          const type = cli('TYPE', key).trim();
          const read = type === 'hash' ? ['HGETALL', key] : type === 'list' ? ['LRANGE', key, '0', '-1'] : type === 'set' ? ['SMEMBERS', key] : type === 'zset' ? ['ZRANGE', key, '0', '-1'] : ['GET', key];
          return `${key} ${cli(...read)}`;
        })
        .join('\n');
    }

    it('stores only ciphertexts (nothing secret in a scan of every key) and reads them back after a restart', async () => {
      const env = { ...process.env, GATEWAY_SECRET_KEY: randomBytes(32).toString('base64') };
      const first = await startGateway(config(redis.url), { env });
      let stored: Awaited<ReturnType<typeof registerEverything>>;
      try {
        stored = await registerEverything(first, upstream);
      } finally {
        await first.close();
      }
      const dump = redisDump();
      expect(dump).to.include('mcp_server_secrets').and.to.include('aes-256-gcm');
      const canaries = [...CANARIES, stored.virtualKey];
      expect(leaked(dump, canaries)).to.deep.equal([]);
      expect(leaked([...stored.texts, first.logLines.join('')].join('\n'), canaries)).to.deep.equal([]);

      upstream.requests.length = 0;
      const second = await startGateway(config(redis.url), { env });
      try {
        await callEachAfterRestart(second);
        expectCredentialsUpstream(upstream);
      } finally {
        await second.close();
      }
    });
  });
});
