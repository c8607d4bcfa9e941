import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import OpenAI from 'openai';
import pg from 'pg';
import { MIGRATIONS } from '../../core/store/postgres-migrations';
import { REPO_ROOT } from '../support/fixtures';
import { startPostgres } from '../support/postgres-server';

const MAIN = path.join(REPO_ROOT, 'dist', 'core', 'main.js');
const ADMIN = 'sk-admin-fleet';

interface Instance {
  child: ChildProcess;
  url: string;
  stderr: string[];
}

/** The gateway command as its own process; resolves with its URL once it listens. */
function startInstance(configFile: string, cwd: string, env: NodeJS.ProcessEnv, args: string[] = []): Promise<Instance> {
  const child = spawn(process.execPath, [MAIN, '--config', configFile, '--port', '0', ...args], { cwd, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  child.stderr!.on('data', (c: Buffer) => stderr.push(c.toString()));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /^model-gateway listening on (http:\/\/\S+)$/.exec(line);
      if (m) resolve({ child, url: m[1], stderr });
    });
    child.once('exit', (code) => reject(new Error(`instance exited ${code}: ${stderr.join('')}`)));
  });
}

function stop(instance: Instance | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (!instance || instance.child.exitCode !== null) return resolve();
    instance.child.once('exit', () => resolve());
    instance.child.kill('SIGTERM');
  });
}

describe('two gateway processes sharing one PostgreSQL database', function () {
  this.timeout(90_000);
  let instances: Instance[] = [];
  let url: string;
  after(async () => {
    await Promise.all(instances.map(stop));
  });

  it('both migrate an empty database at once, and either answers spend equal to the log both wrote', async () => {
    url = await (await startPostgres()).createDatabase();
    const dir = mkdtempSync(path.join(tmpdir(), 'mg-fleet-'));
    const configFile = path.join(dir, 'gateway.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        // a loaded machine's PostgreSQL answers late: a 503 at the store's 250 ms would say nothing of the migrations or the spend
        store: { url, timeoutMs: 10_000 },
        adminKey: ADMIN,
        organizations: [{ id: 'acme' }],
        keys: [{ key: 'sk-fleet-key', id: 'fleet-bot', org: 'acme' }],
        providers: [{ id: 'e', type: 'echo' }],
        models: [{ name: 'echo', provider: 'e', price: { inputPerMTok: 0.15, outputPerMTok: 0.6 } }],
      }),
    );
    // one secret key for the fleet, as the README says
    const env = { GATEWAY_SECRET_KEY: randomBytes(32).toString('hex') };
    instances = await Promise.all([startInstance(configFile, dir, env), startInstance(configFile, dir, env)]);

    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const versions = (await db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r) => r.version);
      expect(versions).to.deep.equal(MIGRATIONS.map((m) => m.version));
    } finally {
      await db.end();
    }

    // traffic through both; a key created on one is usable on the other (records are shared)
    const created = await fetch(`${instances[0].url}/admin/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ org: 'acme', name: 'shared' }) });
    expect(created.status).to.equal(201);
    const apiKey = ((await created.json()) as { key: string }).key;
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        new OpenAI({ baseURL: `${instances[i % 2].url}/v1`, apiKey: i % 4 < 2 ? 'sk-fleet-key' : apiKey, maxRetries: 0 }).chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: `hello ${i}` }] }),
      ),
    );

    const admin = async <T>(base: string, route: string) => (await (await fetch(`${base}${route}`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as T;
    // log writes settle after the responses: wait for all 20 rows (seen from the other instance)
    let logs: { cost: number; keyId: string }[] = [];
    for (let i = 0; i < 100 && logs.length < 20; i++) {
      logs = (await admin<{ data: typeof logs }>(instances[1].url, '/admin/v1/logs?limit=100')).data;
      if (logs.length < 20) await new Promise((r) => setTimeout(r, 50));
    }
    expect(logs).to.have.length(20);
    const logTotal = logs.reduce((a, e) => a + e.cost, 0);
    for (const instance of instances) {
      const spend = await admin<{ total_cost: number; data: { group: string; requests: number }[] }>(instance.url, '/admin/v1/spend?groupBy=key');
      expect(spend.total_cost).to.be.closeTo(logTotal, 1e-9);
      expect(spend.data.map((r) => r.requests).sort()).to.deep.equal([10, 10]);
    }
    for (const instance of instances) expect(instance.stderr.join('')).to.not.match(/error/i);
  });
});

/** The gateway command that is expected to fail at start: its exit code and stderr. */
function failedStart(configFile: string, cwd: string, env: NodeJS.ProcessEnv, args: string[] = []): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [MAIN, '--config', configFile, '--port', '0', ...args], { cwd, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdout!.resume();
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr })));
}

describe('--workers on PostgreSQL: connections within store.maxConnections', function () {
  this.timeout(120_000);
  let instance: Instance | undefined;
  let roles = 0;
  afterEach(async () => {
    await stop(instance);
    instance = undefined;
  });

  /** a database owned by a role of its own that the server lets open `limit` connections at most; its URL */
  async function limitedDatabase(limit: number): Promise<{ url: string; role: string }> {
    const url = await (await startPostgres()).createDatabase();
    const role = `gw_${process.pid}_${++roles}`;
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      await db.query(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT ${limit}`);
      await db.query(`ALTER DATABASE ${new URL(url).pathname.slice(1)} OWNER TO ${role}`);
    } finally {
      await db.end();
    }
    return { url: url.replace('//postgres@', `//${role}@`), role };
  }

  function configFor(url: string, store: object = {}): { dir: string; file: string } {
    const dir = mkdtempSync(path.join(tmpdir(), 'mg-fleet-pool-'));
    const file = path.join(dir, 'gateway.json');
    writeFileSync(
      file,
      JSON.stringify({
        // a long store timeout: a query waiting for a pooled connection is not refused by the guard
        store: { url, sweepIntervalSeconds: 0, timeoutMs: 20_000, ...store },
        adminKey: ADMIN,
        providers: [{ id: 'e', type: 'echo' }],
        models: [{ name: 'echo', provider: 'e' }],
      }),
    );
    return { dir, file };
  }
  const env = { GATEWAY_SECRET_KEY: randomBytes(32).toString('hex') };

  it('6 workers under load stay within the default 50 connections, so a server allowing 50 refuses none', async () => {
    const { url, role } = await limitedDatabase(50);
    const { dir, file } = configFor(url);
    instance = await startInstance(file, dir, env, ['--workers', '6']);
    // the watcher is the superuser: its own connection is not the role's
    const watcher = new pg.Client({ connectionString: url.replace(`//${role}@`, '//postgres@') });
    await watcher.connect();
    let most = 0;
    let loading = true;
    const watching = (async () => {
      while (loading) {
        const { rows } = await watcher.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE usename = $1', [role]);
        most = Math.max(most, Number(rows[0].n));
      }
    })();
    try {
      const statuses: number[] = [];
      // each on a connection of its own: the primary spreads them over the workers, whose pools grow
      for (let round = 0; round < 3; round++) {
        const answers = await Promise.all(
          Array.from({ length: 120 }, () =>
            fetch(`${instance!.url}/admin/v1/logs?limit=1`, { headers: { authorization: `Bearer ${ADMIN}`, connection: 'close' } }).then(async (res) => {
              await res.arrayBuffer();
              return res.status;
            }),
          ),
        );
        statuses.push(...answers);
      }
      expect(statuses.filter((s) => s !== 200), instance.stderr.join('')).to.deep.equal([]);
    } finally {
      loading = false;
      await watching;
      await watcher.end();
    }
    expect(most).to.be.within(1, 50);
  });

  it('a server that refuses a connection for its limit fails the start with an error naming store.maxConnections', async () => {
    const { url } = await limitedDatabase(1);
    const { dir, file } = configFor(url);
    const { code, stderr } = await failedStart(file, dir, env);
    expect(code).to.equal(1);
    expect(stderr).to.match(/too many connections/);
    expect(stderr).to.match(/store\.maxConnections is 50/);
  });

  it('more workers than store.maxConnections can serve fail the start before any is forked', async () => {
    const { url } = await limitedDatabase(50);
    const { dir, file } = configFor(url, { maxConnections: 8 });
    const { code, stderr } = await failedStart(file, dir, env, ['--workers', '4']);
    expect(code).to.equal(1);
    expect(stderr).to.match(/store\.maxConnections: 8 PostgreSQL connections cannot serve 4 gateway processes: each needs at least 3 .*set it to 12 or more/);
    expect(stderr, 'no worker was started').to.not.match(/exited/);
  });
});
