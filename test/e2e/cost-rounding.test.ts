import { expect } from 'chai';
import OpenAI from 'openai';
import { testConfig } from '../support/test-config';
import type { TestGateway } from '../support/start-gateway';

/** A header: a decimal with at most ten decimals. A JSON number: exactly a multiple of 1e-10 (no 0.040017540000000004). */
function clean(value: number | string): void {
  if (typeof value === 'string') expect(value, value).to.match(/^\d+(\.\d{1,10})?$/);
  else expect(Math.round(value * 1e10) / 1e10, String(value)).to.equal(value);
}

describe('costs are rounded to 1e-10 USD in headers, the request log and spend views', () => {
  let gw: TestGateway;
  // prices whose products and sums are not exact in binary floating point
  const price = { inputPerMTok: 0.15, outputPerMTok: 0.6 };
  before(async () => {
    gw = await testConfig()
      .with({ adminKey: 'sk-admin-round' })
      .withKey('sk-round', { id: 'round', maxBudget: 100 })
      .withProvider({ id: 'e', type: 'echo' })
      .withModel('echo', { price })
      .start();
  });
  after(() => gw.close());

  it('prints clean costs for requests whose unrounded price and sum carry float noise', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-round' });
    const raw: number[] = [];
    for (const content of ['a', 'ab cd', 'twelve chars', 'x'.repeat(41), 'y'.repeat(77)]) {
      const { data, response } = await client.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content }] }).withResponse();
      const usage = data.usage!;
      raw.push((usage.prompt_tokens * price.inputPerMTok + usage.completion_tokens * price.outputPerMTok) / 1e6);
      const header = response.headers.get('x-gateway-response-cost')!;
      clean(header);
      expect(Number(header)).to.be.closeTo(raw.at(-1)!, 1e-10);
    }
    // the scenario really has noise: the plain float sum of the raw costs does not print cleanly
    const rawSum = raw.reduce((a, b) => a + b, 0);
    expect(Math.round(rawSum * 1e10) / 1e10).to.not.equal(rawSum);

    const auth = { authorization: 'Bearer sk-admin-round' };
    await gw.gateway.services.pipeline.whenSettled(5000);
    const logs = (await (await fetch(`${gw.url}/admin/v1/logs?limit=10`, { headers: auth })).json()) as { data: { cost: number }[] };
    expect(logs.data).to.have.length(5);
    for (const e of logs.data) clean(e.cost);
    const spend = (await (await fetch(`${gw.url}/admin/v1/spend?groupBy=model`, { headers: auth })).json()) as { total_cost: number; data: { cost: number }[] };
    clean(spend.total_cost);
    clean(spend.data[0].cost);
    expect(spend.total_cost).to.be.closeTo(rawSum, 1e-9);
    const daily = (await (await fetch(`${gw.url}/admin/v1/spend/daily?splitBy=model`, { headers: auth })).json()) as { totals: { cost: number }; series: { cost: number[] }[] };
    clean(daily.totals.cost);
    for (const s of daily.series) for (const c of s.cost) clean(c);
  });

  it('shows a clean budget spent, once each request\'s reservation is replaced by its cost', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-round' });
    const auth = { authorization: 'Bearer sk-admin-round' };
    const budget = async () => ((await (await fetch(`${gw.url}/admin/v1/budgets`, { headers: auth })).json()) as { data: { id: string; spent: number }[] }).data.find((b) => b.id === 'round')!;
    const before = (await budget()).spent;
    // each reserves over 4,096 tokens' worth and settles to far less: the counter's float sums carry noise
    for (const content of ['a', 'ab cd', 'twelve chars']) await client.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content }] });
    await gw.gateway.services.pipeline.whenSettled(5000);
    const logs = (await (await fetch(`${gw.url}/admin/v1/logs?limit=100`, { headers: auth })).json()) as { data: { cost: number }[] };
    const { spent } = await budget();
    clean(spent);
    expect(spent).to.be.closeTo(logs.data.reduce((sum, e) => sum + e.cost, 0), 1e-9);
    expect(spent).to.be.greaterThan(before);
  });
});
