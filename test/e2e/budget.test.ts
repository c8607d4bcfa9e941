import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import type { GatewayConfigInput } from '../../core/config/types';
import { FakeImagesUpstream, TINY_PNG } from '../support/fake-images-upstream';
import { FakeMcpServer } from '../support/fake-mcp-server';
import { FakeOpenAI, chatCompletion } from '../support/fake-openai';
import { startRedis, type RedisServer } from '../support/redis-server';
import { startGateway, type TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { FakeClock } from '../core/limits/fake-clock';
import { eventually } from '../support/eventually';

const KEY = 'sk-budget-client-1';
const KEY_2 = 'sk-budget-client-2';
const ADMIN = 'sk-budget-admin-1';
/** 10 prompt tokens at $100/M + 5 completion tokens at $200/M */
const COST_PER_REQUEST = 0.002;
const FITS_TEN = 10 * COST_PER_REQUEST;
const USER = [{ role: 'user' as const, content: 'hi' }];

function budgetConfig(upstream: FakeOpenAI, extra: Partial<GatewayConfigInput> = {}): GatewayConfigInput {
  return testConfig()
    .withKey(KEY, { id: 'budgeted', maxBudget: FITS_TEN })
    .withProvider({ id: 'oai', type: 'openai', baseUrl: `${upstream.url}/v1` })
    .withModel('priced', { model: 'm', id: 'oai/priced', price: { inputPerMTok: 100, outputPerMTok: 200 } })
    .withModel('embed', { model: 'e', kind: 'embedding', price: { inputPerMTok: 100 } })
    .with({ adminKey: ADMIN, ...extra })
    .build();
}

type Result = { ok: true } | { ok: false; status: number; code: string };

async function ask(client: OpenAI): Promise<Result> {
  try {
    await client.chat.completions.create({ model: 'priced', messages: USER, max_tokens: 5 });
    return { ok: true };
  } catch (err) {
    const e = err as InstanceType<typeof OpenAI.APIError>;
    return { ok: false, status: e.status as number, code: e.code as string };
  }
}

async function loggedCost(gw: TestGateway, requests: number): Promise<number> {
  const page = await eventually(async () => {
    const res = await fetch(`${gw.url}/admin/v1/logs?limit=1000`, { headers: { authorization: `Bearer ${ADMIN}` } });
    const body = (await res.json()) as { data: { cost: number; status: number }[] };
    const served = body.data.filter((e) => e.status === 200);
    return served.length >= requests ? served : undefined;
  });
  // the budget counter is settled just after the log entry is written
  await new Promise((r) => setTimeout(r, 50));
  return page.reduce((sum, e) => sum + e.cost, 0);
}

/**
 * 50 requests at once against a budget that fits 10; every upstream answer is held back 200 ms so all
 * 50 are admitted (or refused) while the first ones are still running. Then requests one at a time until
 * the budget refuses: 10 requests in all (11 at most, when float rounding leaves a sliver).
 */
async function expectNoOverspend(gateways: TestGateway[], clients: OpenAI[]): Promise<void> {
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => ask(clients[i % clients.length])));
  const passed = results.filter((r) => r.ok).length;
  const refused = results.filter((r): r is Extract<Result, { ok: false }> => !r.ok);
  expect(passed, 'concurrent requests admitted').to.be.within(1, 11);
  for (const r of refused) expect(r).to.deep.equal({ ok: false, status: 429, code: 'budget_exceeded' });

  let total = passed;
  for (let i = 0; i < 15; i++) {
    await loggedCost(gateways[0], total);
    let r = await ask(clients[i % clients.length]);
    // a refusal may race the last settle on a loaded machine: ask once more after a pause
    if (!r.ok) r = await new Promise((resolve) => setTimeout(resolve, 300)).then(() => ask(clients[i % clients.length]));
    if (!r.ok) {
      expect(r).to.deep.equal({ ok: false, status: 429, code: 'budget_exceeded' });
      break;
    }
    total++;
  }
  expect(total, 'requests served in all').to.be.within(10, 11);
  const spent = await loggedCost(gateways[0], total);
  expect(spent).to.be.at.most(FITS_TEN + COST_PER_REQUEST + 1e-9);
}

describe('budgets (openai SDK; SQLite, Redis and memory stores)', () => {
  let upstream: FakeOpenAI;
  before(async () => {
    upstream = await new FakeOpenAI().start();
  });
  after(async () => upstream.stop());
  beforeEach(() => {
    upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }), delayMs: 200 };
  });

  it('lets at most 11 of 50 concurrent requests through a budget that fits 10 (SQLite store in a temp file)', async function () {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'mg-budget-')), 'gateway.db');
    const gw = await startGateway(budgetConfig(upstream, { store: { url: `sqlite://${file}` } }));
    try {
      await expectNoOverspend([gw], [new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 })]);
    } finally {
      await gw.close();
    }
  });

  describe('two gateway instances sharing a real redis-server', function () {
    let redis: RedisServer;
    before(async () => {
      redis = await startRedis();
    });
    after(async () => redis?.stop());

    it('lets at most 11 of 50 concurrent requests, spread over both instances, through a budget that fits 10', async () => {
      const a = await startGateway(budgetConfig(upstream, { store: { url: redis.url } }));
      const b = await startGateway(budgetConfig(upstream, { store: { url: redis.url } }));
      try {
        const clients = [a, b].map((gw) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 }));
        await expectNoOverspend([a, b], clients);
      } finally {
        await a.close();
        await b.close();
      }
    });
  });

  describe('memory store with an injected clock', () => {
    let gw: TestGateway;
    let clock: FakeClock;
    afterEach(async () => gw?.close());

    it('refuses with 429 budget_exceeded once spent, and starts again when the budget period ends', async () => {
      clock = new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
      upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
      gw = await startGateway(budgetConfig(upstream, { keys: [{ key: KEY, org: 'acme', id: 'hourly', maxBudget: 2 * COST_PER_REQUEST, budgetDuration: '1h' }] }), { clock });
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
      expect(await ask(client)).to.deep.equal({ ok: true });
      await loggedCost(gw, 1);
      expect(await ask(client)).to.deep.equal({ ok: true });
      await loggedCost(gw, 2);

      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'priced', messages: USER, max_tokens: 5 }),
      });
      expect(res.status).to.equal(429);
      // the hourly period ends at 13:00 UTC
      expect(res.headers.get('retry-after')).to.equal('3600');
      // it resets, but only in an hour: the SDKs must not sleep that long and retry
      expect(res.headers.get('x-should-retry')).to.equal('false');
      const body = (await res.json()) as any;
      expect(body.error).to.deep.equal({
        message: 'Budget exceeded: This key has used $0.004 of its $0.004 budget. It resets at 2026-01-01T13:00:00.000Z.',
        type: 'budget_exceeded',
        param: null,
        code: 'budget_exceeded',
      });

      clock.advance(3_600_000);
      expect(await ask(client)).to.deep.equal({ ok: true });
    });

    it('serves exactly the requests a budget fits when they come one at a time: the eleventh of a budget for ten is refused', async () => {
      upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
      gw = await startGateway(budgetConfig(upstream));
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
      for (let i = 1; i <= 10; i++) {
        expect(await ask(client), `request ${i}`).to.deep.equal({ ok: true });
        await loggedCost(gw, i);
      }
      // the counter's float sum of reservations and corrections ends a hair below the $0.02 spent
      expect(await ask(client)).to.deep.equal({ ok: false, status: 429, code: 'budget_exceeded' });
      expect(await loggedCost(gw, 10)).to.be.closeTo(FITS_TEN, 1e-12);
    });

    /** A gateway whose key's budget two requests spend, after those two: its client (the upstream's log emptied). */
    async function spendBudgetOfTwo(): Promise<OpenAI> {
      upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
      gw = await startGateway(budgetConfig(upstream, { keys: [{ key: KEY, org: 'acme', id: 'pair', maxBudget: 2 * COST_PER_REQUEST }] }));
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
      for (let i = 1; i <= 2; i++) {
        expect(await ask(client), `request ${i}`).to.deep.equal({ ok: true });
        await loggedCost(gw, i);
      }
      upstream.requests.length = 0;
      return client;
    }

    it('refuses an output limit over OpenAI\u2019s 32-bit maximum with a 400 naming it: 1e300 tokens reserved passed a spent budget and wiped what it had spent', async () => {
      const client = await spendBudgetOfTwo();
      for (const field of ['max_tokens', 'max_completion_tokens']) {
        const res = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
          body: `{"model":"priced","messages":[{"role":"user","content":"hi"}],"${field}":1e300}`,
        });
        expect(res.status, field).to.equal(400);
        expect(((await res.json()) as { error: unknown }).error).to.deep.equal({ message: `Invalid value for '${field}': must be <= 2147483647.`, type: 'invalid_request_error', param: field, code: 'invalid_value' });
      }
      expect(upstream.requests).to.have.length(0);
      // the spent budget still refuses
      expect(await ask(client)).to.deep.equal({ ok: false, status: 429, code: 'budget_exceeded' });
    });

    it('refuses a Messages max_tokens or a Responses max_output_tokens of 1e300 on a spent budget, and the budget stays spent', async () => {
      const client = await spendBudgetOfTwo();
      const huge = [
        ['/native/v1/messages', '{"model":"priced","max_tokens":1e300,"messages":[{"role":"user","content":"hi"}]}'],
        ['/v1/responses', '{"model":"priced","max_output_tokens":1e300,"input":"hi"}'],
      ];
      for (const [path, body] of huge) {
        const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body });
        expect(res.status, path).to.equal(429);
        expect(JSON.stringify(await res.json()), path).to.include('Budget exceeded: This key has used $0.004 of its $0.004 budget.');
      }
      expect(upstream.requests).to.have.length(0);
      expect(await ask(client)).to.deep.equal({ ok: false, status: 429, code: 'budget_exceeded' });
    });

    it('tells the SDKs not to retry a refusal by a budget with no period (it never resets): one request each, not three', async () => {
      gw = await startGateway(budgetConfig(upstream, { keys: [{ key: KEY, org: 'acme', id: 'spent', maxBudget: 0 }] }));
      const sent: string[] = [];
      const counting = (input: string | URL | Request, init?: RequestInit) => {
        sent.push(String(input instanceof Request ? input.url : input));
        return fetch(input, init);
      };
      // the SDKs' default of two retries, with their own backoff
      const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, fetch: counting });
      const refused = await openai.chat.completions.create({ model: 'priced', messages: USER, max_tokens: 5 }).catch((e) => e);
      expect({ status: refused.status, code: refused.code, requests: sent.length }).to.deep.equal({ status: 429, code: 'budget_exceeded', requests: 1 });

      sent.length = 0;
      const anthropic = new Anthropic({ baseURL: `${gw.url}/native`, apiKey: KEY, fetch: counting });
      const refusedMessages = await anthropic.messages.create({ model: 'priced', max_tokens: 5, messages: USER }).catch((e) => e);
      expect({ status: refusedMessages.status, requests: sent.length }).to.deep.equal({ status: 429, requests: 1 });
    });

    it('tells the SDKs not to retry a refusal by a budget whose period ends hours away: one request each, not three', async () => {
      clock = new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
      gw = await startGateway(budgetConfig(upstream, { keys: [{ key: KEY, org: 'acme', id: 'hourly-spent', maxBudget: 0, budgetDuration: '1h' }] }), { clock });
      const sent: string[] = [];
      const counting = (input: string | URL | Request, init?: RequestInit) => {
        sent.push(String(input instanceof Request ? input.url : input));
        return fetch(input, init);
      };
      const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 2, fetch: counting });
      const refused = await openai.chat.completions.create({ model: 'priced', messages: USER, max_tokens: 5 }).catch((e) => e);
      expect({ status: refused.status, code: refused.code, retryAfter: refused.headers.get('retry-after'), requests: sent.length }).to.deep.equal({
        status: 429,
        code: 'budget_exceeded',
        retryAfter: '3600',
        requests: 1,
      });

      sent.length = 0;
      const anthropic = new Anthropic({ baseURL: `${gw.url}/native`, apiKey: KEY, maxRetries: 2, fetch: counting });
      const refusedMessages = await anthropic.messages.create({ model: 'priced', max_tokens: 5, messages: USER }).catch((e) => e);
      expect({ status: refusedMessages.status, requests: sent.length }).to.deep.equal({ status: 429, requests: 1 });
    });

    it('shares an organization budget between its keys', async () => {
      upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
      gw = await startGateway(
        budgetConfig(upstream, {
          organizations: [{ id: 'acme', maxBudget: 2 * COST_PER_REQUEST }],
          keys: [
            { key: KEY, org: 'acme', id: 'first' },
            { key: KEY_2, org: 'acme', id: 'second' },
          ],
        }),
      );
      const first = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
      const second = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_2, maxRetries: 0 });
      expect(await ask(first)).to.deep.equal({ ok: true });
      await loggedCost(gw, 1);
      expect(await ask(second)).to.deep.equal({ ok: true });
      await loggedCost(gw, 2);
      expect(await ask(first)).to.deep.equal({ ok: false, status: 429, code: 'budget_exceeded' });
      expect(await ask(second)).to.deep.equal({ ok: false, status: 429, code: 'budget_exceeded' });
    });

    it("keeps apart two organisations' keys of one declared id: one's spend and requests never count against the other's budget and rate limit", async () => {
      upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
      gw = await startGateway(
        budgetConfig(upstream, {
          organizations: [{ id: 'acme' }, { id: 'globex' }],
          keys: [
            { key: KEY, org: 'acme', id: 'bot', maxBudget: COST_PER_REQUEST, rpm: 1 },
            { key: KEY_2, org: 'globex', id: 'bot', maxBudget: COST_PER_REQUEST, rpm: 1 },
          ],
        }),
        // one rate window for the whole test
        { clock: new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0)) },
      );
      const acme = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
      const globex = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_2, maxRetries: 0 });
      expect(await ask(acme)).to.deep.equal({ ok: true });
      await loggedCost(gw, 1);
      expect(await ask(globex)).to.deep.equal({ ok: true });
      await loggedCost(gw, 2);
      // each its own: spent once, and refused only by its own rate limit
      expect(await ask(acme)).to.deep.include({ ok: false, status: 429 });
      const budgets = (await (await fetch(`${gw.url}/admin/v1/budgets`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as { data: { org: string; id: string; spent: number }[] };
      expect(budgets.data.map((b) => ({ org: b.org, id: b.id, spent: b.spent }))).to.have.deep.members([
        { org: 'acme', id: 'bot', spent: COST_PER_REQUEST },
        { org: 'globex', id: 'bot', spent: COST_PER_REQUEST },
      ]);
    });

    it('counts the spend already logged when the management API sets a budget or changes its period (SQLite store)', async () => {
      upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
      const file = path.join(mkdtempSync(path.join(tmpdir(), 'mg-budget-')), 'gateway.db');
      gw = await startGateway(budgetConfig(upstream, { store: { url: `sqlite://${file}` } }), { clock: new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0)) });
      const admin = async (method: string, path: string, body?: object) => {
        const res = await fetch(`${gw.url}${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
        return { status: res.status, json: (await res.json()) as any };
      };
      const spent = async (id: string) => ((await admin('GET', '/admin/v1/budgets')).json.data as { id: string; spent: number }[]).find((b) => b.id === id)?.spent;
      expect((await admin('POST', '/admin/v1/organizations', { id: 'initech' })).status).to.equal(201);
      const created = (await admin('POST', '/admin/v1/keys', { org: 'initech', maxBudget: 10 * COST_PER_REQUEST })).json as { id: string; key: string };
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: created.key, maxRetries: 0 });
      for (let i = 1; i <= 3; i++) {
        expect(await ask(client)).to.deep.equal({ ok: true });
        await loggedCost(gw, i);
      }

      // the organisation had no budget while it spent 3 requests' worth: a lifetime budget of 2 is spent already
      expect((await admin('PATCH', '/admin/v1/organizations/initech', { maxBudget: 2 * COST_PER_REQUEST })).status).to.equal(200);
      expect(await spent('initech')).to.be.closeTo(3 * COST_PER_REQUEST, 1e-9);
      expect(await ask(client)).to.deep.equal({ ok: false, status: 429, code: 'budget_exceeded' });
      expect(await spent('initech')).to.be.closeTo(3 * COST_PER_REQUEST, 1e-9);

      // the key's lifetime budget becomes a daily one of 3: today's 3 requests are in today's count
      expect((await admin('PATCH', '/admin/v1/organizations/initech', { maxBudget: null })).status).to.equal(200);
      expect((await admin('PATCH', `/admin/v1/keys/${created.id}`, { maxBudget: 3 * COST_PER_REQUEST, budgetDuration: '1d' })).status).to.equal(200);
      expect(await spent(created.id)).to.be.closeTo(3 * COST_PER_REQUEST, 1e-9);
      expect(await ask(client)).to.deep.equal({ ok: false, status: 429, code: 'budget_exceeded' });
    });

    it('counts embeddings and streamed chat against the same budget', async () => {
      gw = await startGateway(budgetConfig(upstream, { keys: [{ key: KEY, org: 'acme', id: 'mixed', maxBudget: 0.0025 }] }));
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
      // 20 input tokens at $100/M = $0.002
      upstream.script = { kind: 'json', body: { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], model: 'e', usage: { prompt_tokens: 20, total_tokens: 20 } } };
      await client.embeddings.create({ model: 'embed', input: 'hello' });
      await loggedCost(gw, 1);
      // a stream: 3 + 2 tokens -> $0.0007; the budget ($0.0025) is then spent
      upstream.script = {
        kind: 'sse',
        events: [
          { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] },
          { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
          { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } },
        ],
      };
      const stream = await client.chat.completions.create({ model: 'priced', messages: USER, stream: true });
      for await (const _ of stream) void _;
      expect(await loggedCost(gw, 2)).to.be.closeTo(0.0027, 1e-12);
      const refused = await client.embeddings.create({ model: 'embed', input: 'again' }).catch((e) => e);
      expect(refused.status).to.equal(429);
      expect(refused.code).to.equal('budget_exceeded');
    });

    it('lets at most one image over a budget for a model billed by image tokens (gpt-image-1 at the bundled price)', async () => {
      const images = await new FakeImagesUpstream().start();
      try {
        // 1024x1024 at high quality: 4,160 output tokens at $40/M and 50 prompt tokens at $5/M, $0.16665 an image
        const usage = { input_tokens: 50, output_tokens: 4160, total_tokens: 4210, input_tokens_details: { text_tokens: 50, image_tokens: 0 } };
        images.answer = async () => {
          await new Promise((r) => setTimeout(r, 300));
          return { status: 200, body: { created: 1700000000, data: [{ b64_json: TINY_PNG.toString('base64') }], usage } };
        };
        gw = await testConfig()
          .withKey(KEY, { id: 'painter', maxBudget: 0.25 })
          .withOpenAI('oai', images, 'sk-provider')
          .withModel('painter', { model: 'gpt-image-1', kind: 'image' })
          .with({ adminKey: ADMIN })
          .start();
        const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
        const results = await Promise.all(
          Array.from({ length: 5 }, () =>
            client.images.generate({ model: 'painter', prompt: 'a detailed fox', size: '1024x1024', quality: 'high' }).then(
              () => 200,
              (e) => `${e.status} ${e.code}`,
            ),
          ),
        );
        const served = results.filter((r) => r === 200).length;
        expect(served, `admitted at once: ${results.join(', ')}`).to.be.within(1, 2);
        expect(results.filter((r) => r !== 200)).to.deep.equal(Array(5 - served).fill('429 budget_exceeded'));
        expect(await loggedCost(gw, served)).to.be.at.most(0.25 + 0.16665);
      } finally {
        await images.stop();
      }
    });

    it('reserves the output limit of every choice a chat request asks for (n), so concurrent ones cannot all pass', async () => {
      // 8 choices of 1,000 tokens at $10/M: $0.08 a request, four times the budget
      upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 0, completion_tokens: 8_000, total_tokens: 8_000 }), delayMs: 300 };
      gw = await startGateway(
        testConfig()
          .withKey(KEY, { id: 'sampler', maxBudget: 0.02 })
          .withOpenAI('oai', upstream, 'sk-provider')
          .withModel('sampled', { model: 'm', price: { outputPerMTok: 10 } })
          .with({ adminKey: ADMIN })
          .build(),
      );
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
      const results = await Promise.all(
        Array.from({ length: 4 }, () =>
          client.chat.completions.create({ model: 'sampled', messages: USER, n: 8, max_tokens: 1_000 }).then(
            () => 200,
            (e) => `${e.status} ${e.code}`,
          ),
        ),
      );
      expect(results.filter((r) => r === 200), `admitted at once: ${results.join(', ')}`).to.have.length(1);
      expect(results.filter((r) => r !== 200)).to.deep.equal(Array(3).fill('429 budget_exceeded'));
    });

    it('counts MCP tool fees against the key budget and refuses tools/call past it', async () => {
      const tools = await FakeMcpServer.start({ tools: { search: {} } });
      try {
        gw = await startGateway(
          budgetConfig(upstream, {
            keys: [{ key: KEY, org: 'acme', id: 'mcp-user', maxBudget: 0.025 }],
            mcpServers: [{ name: 'docs', url: tools.url, org: 'acme', visibility: 'private', pricePerCall: 0.01 }],
            mcp: { healthCheckIntervalSeconds: 0 },
          }),
        );
        const rpc = async (id: number, method: string, params?: unknown) => {
          const res = await fetch(`${gw.url}/mcp`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json', 'x-gateway-api-key': `Bearer ${KEY}` },
            body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
          });
          return (await res.json()) as any;
        };
        const [tool] = (await rpc(0, 'tools/list')).result.tools.map((t: any) => t.name);
        const call = (id: number) => rpc(id, 'tools/call', { name: tool, arguments: {} });
        for (let i = 1; i <= 3; i++) {
          const answer = await call(i);
          expect(answer.result, `call ${i}: ${JSON.stringify(answer)}`).to.exist;
          await loggedCost(gw, i);
        }
        const refused = await call(4);
        // a refusal, not "Internal error" (-32603): the gateway's own code for what is 429 elsewhere
        expect(refused.error.code).to.equal(-32004);
        expect(refused.error.data).to.deep.equal({ code: 'budget_exceeded' });
      } finally {
        await tools.close();
      }
    });

    it('charges a gateway_proxy tool call its model once: a budget that fits two model calls serves two such calls over /mcp', async () => {
      upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
      gw = await startGateway(budgetConfig(upstream, { keys: [{ key: KEY, org: 'acme', id: 'proxy-user', maxBudget: 2 * COST_PER_REQUEST }] }));
      const call = async (id: number) => {
        const res = await fetch(`${gw.url}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${KEY}` },
          body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'priced', arguments: { prompt: 'hi', max_tokens: 5 } } }),
        });
        return (await res.json()) as any;
      };
      for (let i = 1; i <= 2; i++) {
        const answer = await call(i);
        expect(answer.result?.content, `call ${i}: ${JSON.stringify(answer)}`).to.deep.equal([{ type: 'text', text: 'ok' }]);
        expect(await loggedCost(gw, i)).to.be.closeTo(i * COST_PER_REQUEST, 1e-12);
      }
      const budgets = (await (await fetch(`${gw.url}/admin/v1/budgets`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as { data: { id: string; spent: number }[] };
      expect(budgets.data.find((b) => b.id === 'proxy-user')?.spent).to.equal(2 * COST_PER_REQUEST);
      const refused = await call(3);
      expect(refused.error?.data).to.deep.equal({ code: 'budget_exceeded' });
    });
  });
});
