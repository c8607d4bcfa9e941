import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createClient } from '@keyv/redis';
import { FakeOpenAI, chatCompletion } from '../support/fake-openai';
import { startRedis, type RedisServer } from '../support/redis-server';
import { startGateway, type TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { eventually } from '../support/eventually';
import { keySubjectId } from '../../core/limits/limit-subjects';

const ADMIN = 'sk-stall-admin-1';
const KEY = 'sk-stall-budgeted-1';

/**
 * A budget on Redis through a stall of the store: a request refused because the store did not answer in
 * time must not leave its reservation in the budget when the store applies the charge afterwards.
 */
describe('budgets on Redis: a store stall leaves no reservation behind', function () {
  this.timeout(30_000);
  let redis: RedisServer;
  let upstream: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    redis = await startRedis();
    upstream = await new FakeOpenAI().start();
    upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
    gw = await testConfig()
      // a budget that never resets: what is left in its counter stays there
      .withKey(KEY, { id: 'budgeted', maxBudget: 5 })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('priced', { model: 'm', price: { inputPerMTok: 100, outputPerMTok: 200 } })
      .with({ adminKey: ADMIN, store: { url: redis.url, sweepIntervalSeconds: 0 } })
      .start();
  });
  after(async () => {
    redis.resume();
    await gw.close();
    await upstream.stop();
    await redis.stop();
  });

  const spent = async (): Promise<number> => {
    const res = await fetch(`${gw.url}/admin/v1/budgets`, { headers: { authorization: `Bearer ${ADMIN}` } });
    const { data } = (await res.json()) as { data: { id: string; spent: number }[] };
    return data.find((b) => b.id === 'budgeted')!.spent;
  };
  const chat = async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'priced', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }) });
    return { status: res.status, body: (await res.json()) as { error?: { code?: string } } };
  };

  it('takes back the charge of a request refused during the stall once Redis applies it, and counts the next ones exactly', async () => {
    expect((await chat()).status).to.equal(200);
    const before = await spent();
    expect(before).to.be.closeTo(0.002, 1e-9); // 10 in at $100/M + 5 out at $200/M

    redis.pause();
    let refused;
    try {
      refused = await chat();
    } finally {
      redis.resume();
    }
    expect({ status: refused.status, code: refused.body.error?.code }).to.deep.equal({ status: 503, code: 'store_unavailable' });

    // Redis applies the charge it held when it thaws; the gateway takes it back (it stayed before)
    let now = await spent();
    for (let i = 0; i < 100 && Math.abs(now - before) > 1e-9; i++) {
      await new Promise((r) => setTimeout(r, 100));
      now = await spent().catch(() => now);
    }
    expect(now).to.be.closeTo(before, 1e-9);
    expect((await chat()).status).to.equal(200);
    expect(await spent()).to.be.closeTo(0.004, 1e-9);
  });
});

/**
 * Redis killed and back empty while a request runs: its settle (the real cost minus its reservation, a
 * negative correction) lands on a counter that is no longer there.
 */
describe('budgets on Redis: a restart that loses the counters', function () {
  this.timeout(30_000);
  let redis: RedisServer;
  let upstream: FakeOpenAI;

  before(async () => {
    redis = await startRedis();
    upstream = await new FakeOpenAI().start();
  });
  after(async () => {
    await upstream.stop();
    await redis.stop();
  });

  it('does not give a request admitted before the crash a negative count, and so extra budget, after it', async () => {
    const gw = await testConfig()
      .withKey(KEY, { id: 'budgeted', maxBudget: 5 })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('priced', { model: 'm', price: { inputPerMTok: 100, outputPerMTok: 200 } })
      .with({ adminKey: ADMIN, store: { url: redis.url, sweepIntervalSeconds: 0 } })
      .start();
    const raw = createClient({ url: redis.url });
    try {
      const spent = async (): Promise<number> => {
        const res = await fetch(`${gw.url}/admin/v1/budgets`, { headers: { authorization: `Bearer ${ADMIN}` } });
        const { data } = (await res.json()) as { data: { id: string; spent: number }[] };
        return data.find((b) => b.id === 'budgeted')!.spent;
      };
      // max_tokens 1000 reserves $0.2 of output; the answer costs $0.002
      const chat = () =>
        fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'priced', max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }] }) });
      upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }), delayMs: 1_000 };

      const answer = chat();
      await eventually(() => upstream.requests.length > 0);
      await redis.restart();
      expect((await answer).status).to.equal(200);
      await gw.gateway.services.pipeline.whenSettled(30_000);
      // the correction is written once the client is back on the new server (tried again every second)
      await raw.connect();
      const counter = `mg:n:limits:budget:key:${keySubjectId('budgeted', 'acme')}:total`;
      await eventually(async () => (await raw.exists(counter)) === 1, 10_000);

      expect(await spent()).to.equal(0);
      upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
      expect((await chat()).status).to.equal(200);
      expect(await spent()).to.be.closeTo(0.002, 1e-9);
    } finally {
      await raw.quit().catch(() => undefined);
      await gw.close();
    }
  });
});

/**
 * A request's correction (its reservation replaced by the real cost) that the store refused when it ended
 * waits in the gateway to be tried again: a shutdown right after must write it, not drop it.
 */
describe('budgets on SQLite: a correction still waiting when the gateway stops is written at shutdown', function () {
  this.timeout(60_000);
  let upstream: FakeOpenAI;

  before(async () => {
    upstream = await new FakeOpenAI().start();
  });
  after(async () => upstream.stop());

  it('counts the real cost, not the reservation, after a restart on the same file', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'mg-stall-')), 'gateway.db');
    const config = testConfig()
      // a budget that never resets: a reservation left in its counter stays there for good
      .withKey(KEY, { id: 'budgeted', maxBudget: 5 })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('priced', { model: 'm', price: { inputPerMTok: 100, outputPerMTok: 200 } })
      .with({ adminKey: ADMIN, store: { url: `sqlite://${file}`, sweepIntervalSeconds: 0 } })
      .build();
    const spent = async (gw: TestGateway): Promise<number> => {
      const res = await fetch(`${gw.url}/admin/v1/budgets`, { headers: { authorization: `Bearer ${ADMIN}` } });
      const { data } = (await res.json()) as { data: { id: string; spent: number }[] };
      return data.find((b) => b.id === 'budgeted')!.spent;
    };
    const chat = (gw: TestGateway) =>
      fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'priced', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }) });

    upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }), delayMs: 1_000 };
    let gw = await startGateway(config);
    const other = new Database(file);
    try {
      expect((await chat(gw)).status).to.equal(200);
      expect(await spent(gw)).to.be.closeTo(0.002, 1e-9); // 10 in at $100/M + 5 out at $200/M

      // admitted (its reservation written), then another writer holds the file while it ends: the store
      // refuses the correction, which waits to be tried again
      const seen = upstream.requests.length;
      const answer = chat(gw);
      while (upstream.requests.length === seen) await new Promise((r) => setTimeout(r, 10));
      other.prepare('BEGIN IMMEDIATE').run();
      expect((await answer).status).to.equal(200);
      await gw.gateway.services.pipeline.whenSettled(30_000);
      other.prepare('ROLLBACK').run();
      await gw.close();

      gw = await startGateway(config);
      expect(await spent(gw)).to.be.closeTo(0.004, 1e-9);
    } finally {
      other.close();
      await gw.close();
    }
  });
});
