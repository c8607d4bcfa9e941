import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { RedisBackend } from '../../core/store/redis-backend';
import { sweepOnce } from '../../core/store/sweeper';
import { startPostgres } from '../support/postgres-server';
import { startRedis, type RedisServer } from '../support/redis-server';
import { startGateway, type TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const ADMIN = 'sk-admin-rollup';
const DAY_MS = 86_400_000;
const price = { inputPerMTok: 0.15, outputPerMTok: 0.6 };

interface LogRow {
  keyId: string;
  org: string;
  model: string;
  cost: number;
}

interface SpendRow {
  group: string;
  cost: number;
  requests: number;
}

/**
 * Spend views read the rollups the store writes with each log row: on every backend they equal the sum
 * of the log, and they still answer after the log's retention swept the rows away.
 */
function describeRollups(name: string, setup: () => Promise<{ url: string; cleanup(): Promise<void> }>) {
  describe(`spend rollups on ${name}`, () => {
    let gw: TestGateway;
    let backend: Awaited<ReturnType<typeof setup>>;
    const clock = { t: Date.now(), now() { return this.t; } };

    before(async function () {
      this.timeout(60_000);
      backend = await setup();
      gw = await testConfig()
        .with({ adminKey: ADMIN, store: { url: backend.url, sweepIntervalSeconds: 0, logRetentionDays: 30 } })
        .withOrg('acme')
        .withOrg('globex')
        .withKey('sk-rollup-acme', { id: 'acme-bot', org: 'acme' })
        .withKey('sk-rollup-globex', { id: 'globex-bot', org: 'globex' })
        .withProvider({ id: 'e', type: 'echo' })
        .withModel('echo', { price })
        .withModel('echo-2', { model: 'echo', price: { inputPerMTok: 1, outputPerMTok: 2 } })
        .start({ clock });
    });
    after(async () => {
      await gw?.close();
      await backend?.cleanup();
    });

    const admin = async <T>(url: string): Promise<T> => {
      const res = await fetch(`${gw.url}${url}`, { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(res.status, url).to.equal(200);
      return (await res.json()) as T;
    };

    async function allLogs(): Promise<LogRow[]> {
      const rows: LogRow[] = [];
      for (let cursor: string | null = ''; cursor !== null; ) {
        const page: { data: LogRow[]; next_cursor: string | null } = await admin(`/admin/v1/logs?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
        rows.push(...page.data);
        cursor = page.next_cursor;
      }
      return rows;
    }

    it('answers /admin/v1/spend and the daily view with the sums of the request log, and keeps them after retention swept the log', async () => {
      const clients = ['sk-rollup-acme', 'sk-rollup-globex'].map((apiKey) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey, maxRetries: 0 }));
      await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          clients[i % 2].chat.completions.create({ model: i % 3 ? 'echo' : 'echo-2', messages: [{ role: 'user', content: `request ${'word '.repeat(i)}` }] }),
        ),
      );
      await gw.gateway.services.pipeline.whenSettled(5000);

      const logs = await allLogs();
      expect(logs).to.have.length(24);
      const sumBy = (field: 'keyId' | 'org' | 'model') => {
        const sums = new Map<string, { cost: number; requests: number }>();
        for (const e of logs) {
          const s = sums.get(e[field]) ?? { cost: 0, requests: 0 };
          s.cost += e.cost;
          s.requests += 1;
          sums.set(e[field], s);
        }
        return sums;
      };
      const logTotal = logs.reduce((a, e) => a + e.cost, 0);
      expect(logTotal).to.be.greaterThan(0);
      for (const [groupBy, field] of [['key', 'keyId'], ['org', 'org'], ['model', 'model']] as const) {
        const spend = await admin<{ data: SpendRow[]; total_cost: number }>(`/admin/v1/spend?groupBy=${groupBy}`);
        expect(spend.total_cost, groupBy).to.be.closeTo(logTotal, 1e-9);
        const sums = sumBy(field);
        expect(spend.data.map((r) => r.group).sort(), groupBy).to.deep.equal([...sums.keys()].sort());
        for (const row of spend.data) {
          expect(row.requests, `${groupBy} ${row.group}`).to.equal(sums.get(row.group)!.requests);
          expect(row.cost, `${groupBy} ${row.group}`).to.be.closeTo(sums.get(row.group)!.cost, 1e-9);
        }
      }
      const daily = await admin<{ totals: { cost: number; requests: number } }>('/admin/v1/spend/daily?splitBy=key');
      expect(daily.totals.requests).to.equal(24);
      expect(daily.totals.cost).to.be.closeTo(logTotal, 1e-9);

      // 31 days later the log is past its 30-day retention: the sweep takes every row, not the spend
      clock.t += 31 * DAY_MS;
      await sweepOnce(gw.gateway.services.store, { days: 30, now: () => clock.now() });
      expect(await allLogs()).to.deep.equal([]);
      const after = await admin<{ data: SpendRow[]; total_cost: number }>('/admin/v1/spend?groupBy=org');
      expect(after.total_cost).to.be.closeTo(logTotal, 1e-9);
      expect(after.data.map((r) => [r.group, r.requests]).sort()).to.deep.equal([
        ['acme', 12],
        ['globex', 12],
      ]);
      const since = new Date(clock.t - 40 * DAY_MS).toISOString();
      const until = new Date(clock.t).toISOString();
      const dailyAfter = await admin<{ totals: { cost: number; requests: number } }>(`/admin/v1/spend/daily?since=${since}&until=${until}`);
      expect(dailyAfter.totals.requests).to.equal(24);
      expect(dailyAfter.totals.cost).to.be.closeTo(logTotal, 1e-9);
    });
  });
}

describeRollups('memory', async () => ({ url: 'memory://', cleanup: async () => undefined }));

describeRollups('SQLite', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gw-rollup-'));
  return { url: `sqlite://${path.join(dir, 'gateway.db')}`, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});

describeRollups('Redis (real redis-server)', async () => {
  const redis: RedisServer = await startRedis();
  return { url: redis.url, cleanup: () => redis.stop() };
});

describeRollups('PostgreSQL (real server)', async () => {
  const server = await startPostgres();
  return { url: await server.createDatabase(), cleanup: async () => undefined };
});

/**
 * The rollups outlive the log and add up: 30 days of 100 keys are 72,000 rows. Read from Redis in one
 * command they took longer than the store timeout, and the spend views answered 503 store_unavailable
 * from a store that answered; each read of a day of them is one command now.
 */
describe('spend rollups on Redis: a month of a hundred keys', function () {
  this.timeout(60_000);
  const HOURS = 720;
  const KEYS = 100;
  let redis: RedisServer;
  let gw: TestGateway;

  before(async () => {
    redis = await startRedis();
    // the rows other instances wrote, straight into the shared store: one request an hour for each key
    const other = await RedisBackend.connect(redis.url);
    const start = Date.now() - HOURS * 3_600_000;
    for (let h = 0; h < HOURS; h += 24) {
      const entries = [];
      for (let hour = h; hour < h + 24; hour++) {
        for (let k = 0; k < KEYS; k++) {
          entries.push({ id: `req_${hour}_${k}`, time: new Date(start + hour * 3_600_000).toISOString(), keyId: `key_${k}`, org: 'acme', endpoint: 'chat', model: 'gpt-test', deploymentId: 'oai/m', promptTokens: 10, completionTokens: 5, cost: 0.001, status: 200, latencyMs: 12 });
        }
      }
      await other.appendLogs(entries);
    }
    await other.close();
    gw = await startGateway(testConfig().with({ adminKey: ADMIN, store: { url: redis.url, sweepIntervalSeconds: 0 } }).build());
  });
  after(async () => {
    await gw?.close();
    await redis?.stop();
  });

  it('answers /admin/v1/spend by key and the daily view', async () => {
    for (const view of ['/admin/v1/spend?groupBy=key', '/admin/v1/spend/daily']) {
      const res = await fetch(`${gw.url}${view}`, { headers: { authorization: `Bearer ${ADMIN}` } });
      const body = (await res.json()) as { data?: unknown[]; total_cost?: number; error?: { code: string } };
      expect(res.status, `${view}: ${JSON.stringify(body.error)}`).to.equal(200);
      if (view.includes('groupBy')) {
        expect(body.data).to.have.length(KEYS);
        expect(body.total_cost).to.be.closeTo(HOURS * KEYS * 0.001, 1e-6);
      }
    }
  });
});
