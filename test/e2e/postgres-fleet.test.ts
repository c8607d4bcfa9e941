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
function startInstance(configFile: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Instance> {
  const child = spawn(process.execPath, [MAIN, '--config', configFile, '--port', '0'], { cwd, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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
        store: { url },
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
