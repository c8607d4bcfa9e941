import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import type { GatewayConfigInput } from '../../core/config/types';
import { FakeImagesUpstream, TINY_PNG } from '../support/fake-images-upstream';
import { FakeOpenAI, chatCompletion } from '../support/fake-openai';
import { FakeMcpServer } from '../support/fake-mcp-server';
import { startRedis, type RedisServer } from '../support/redis-server';
import { startGateway, type TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { FakeClock } from '../core/limits/fake-clock';
import { eventually } from '../support/eventually';

const KEY = 'sk-rate-client-1';
const KEY_2 = 'sk-rate-client-2';
const ADMIN = 'sk-rate-admin-1';
const USER = [{ role: 'user' as const, content: 'hi' }];
/** 12:00:15 UTC: 45 s left in the current one-minute window */
const START = Date.UTC(2026, 0, 1, 12, 0, 15);

function rateConfig(upstream: FakeOpenAI, extra: Partial<GatewayConfigInput>): GatewayConfigInput {
  return testConfig()
    .withProvider({ id: 'oai', type: 'openai', baseUrl: `${upstream.url}/v1` })
    .withModel('m', { id: 'oai/m' })
    .with({ adminKey: ADMIN, ...extra })
    .build();
}

async function post(gw: TestGateway, key: string, body: object = { model: 'm', messages: USER }) {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  const header = (name: string) => res.headers.get(name);
  return { status: res.status, json, header };
}

/** Token counts are settled when a request ends, just after its log entry is written. */
async function settled(gw: TestGateway, requests: number): Promise<void> {
  await eventually(async () => {
    const res = await fetch(`${gw.url}/admin/v1/logs?limit=1000`, { headers: { authorization: `Bearer ${ADMIN}` } });
    const served = ((await res.json()) as { data: { status: number }[] }).data.filter((e) => e.status === 200);
    return served.length >= requests ? true : undefined;
  });
  await new Promise((r) => setTimeout(r, 50));
}

describe('rate limits: rpm and tpm in fixed one-minute windows (injected clock)', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway | undefined;
  let clock: FakeClock;

  before(async () => {
    upstream = await new FakeOpenAI().start();
  });
  after(async () => upstream.stop());
  beforeEach(() => {
    clock = new FakeClock(START);
    upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 40, completion_tokens: 20, total_tokens: 60 }) };
  });
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  it('counts requests per minute with OpenAI-style headers, refuses the next with 429 and Retry-After, and opens again in the next minute', async () => {
    gw = await startGateway(rateConfig(upstream, { keys: [{ key: KEY, org: 'acme', rpm: 3 }] }), { clock });
    for (const remaining of ['2', '1', '0']) {
      const r = await post(gw, KEY);
      expect(r.status).to.equal(200);
      expect(r.header('x-ratelimit-limit-requests')).to.equal('3');
      expect(r.header('x-ratelimit-remaining-requests')).to.equal(remaining);
      expect(r.header('x-ratelimit-reset-requests')).to.equal('45s');
    }
    const refused = await post(gw, KEY);
    expect(refused.status).to.equal(429);
    expect(refused.json.error).to.deep.equal({
      message: 'Rate limit exceeded: This key has reached its limit of 3 requests per minute. Try again in 45s.',
      type: 'rate_limit_error',
      param: null,
      code: 'rate_limit_exceeded',
    });
    expect(refused.header('retry-after')).to.equal('45');
    expect(refused.header('x-ratelimit-remaining-requests')).to.equal('0');
    expect(refused.header('x-ratelimit-reset-requests')).to.equal('45s');

    clock.advance(30_000);
    expect((await post(gw, KEY)).status, 'same window, 15 s left').to.equal(429);
    clock.advance(15_000);
    const next = await post(gw, KEY);
    expect(next.status).to.equal(200);
    expect(next.header('x-ratelimit-remaining-requests')).to.equal('2');
    expect(next.header('x-ratelimit-reset-requests')).to.equal('1m0s');

    // two windows later the counter of this window's parity is reused, from zero
    for (let i = 0; i < 2; i++) expect((await post(gw, KEY)).status).to.equal(200);
    expect((await post(gw, KEY)).status).to.equal(429);
    clock.advance(120_000);
    expect((await post(gw, KEY)).header('x-ratelimit-remaining-requests')).to.equal('2');
  });

  it('counts tokens per minute from the real usage, refusing once the window is spent', async () => {
    gw = await startGateway(rateConfig(upstream, { keys: [{ key: KEY, org: 'acme', tpm: 100 }] }), { clock });
    const first = await post(gw, KEY);
    expect(first.status).to.equal(200);
    expect(first.header('x-ratelimit-limit-tokens')).to.equal('100');
    expect(Number(first.header('x-ratelimit-remaining-tokens'))).to.be.within(1, 99);
    expect(first.header('x-ratelimit-reset-tokens')).to.equal('45s');
    await settled(gw, 1);
    // 60 tokens used: there is room for one more request
    expect((await post(gw, KEY)).status).to.equal(200);
    await settled(gw, 2);
    const refused = await post(gw, KEY);
    expect(refused.status).to.equal(429);
    expect(refused.json.error.code).to.equal('rate_limit_exceeded');
    expect(refused.json.error.message).to.equal('Rate limit exceeded: This key has reached its limit of 100 tokens per minute. Try again in 45s.');
    expect(refused.header('retry-after')).to.equal('45');
    expect(refused.header('x-ratelimit-remaining-tokens')).to.equal('0');

    clock.advance(45_000);
    expect((await post(gw, KEY)).status).to.equal(200);
  });

  it('applies an organization limit across its keys and reports the tighter of key and organization', async () => {
    gw = await startGateway(
      rateConfig(upstream, {
        organizations: [{ id: 'acme', rpm: 3 }],
        keys: [
          { key: KEY, org: 'acme', rpm: 10 },
          { key: KEY_2, org: 'acme' },
        ],
      }),
      { clock },
    );
    const a = await post(gw, KEY);
    expect(a.header('x-ratelimit-limit-requests'), 'the organization has less left than the key').to.equal('3');
    expect(a.header('x-ratelimit-remaining-requests')).to.equal('2');
    expect((await post(gw, KEY_2)).status).to.equal(200);
    expect((await post(gw, KEY)).status).to.equal(200);
    const refused = await post(gw, KEY_2);
    expect(refused.status).to.equal(429);
    expect(refused.json.error.message).to.match(/^Rate limit exceeded: This organization has reached its limit of 3 requests per minute/);
  });

  it('applies a management-API change to an organization\'s limits from the next request on', async () => {
    gw = await startGateway(rateConfig(upstream, {}), { clock });
    const admin = (method: string, path: string, body: object) =>
      fetch(`${gw!.url}${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await admin('POST', '/admin/v1/organizations', { id: 'initech', rpm: 100 })).status).to.equal(201);
    const created = (await (await admin('POST', '/admin/v1/keys', { org: 'initech' })).json()) as { key: string };
    const first = await post(gw, created.key);
    expect(first.header('x-ratelimit-limit-requests')).to.equal('100');

    expect((await admin('PATCH', '/admin/v1/organizations/initech', { rpm: 1 })).status).to.equal(200);
    const refused = await post(gw, created.key);
    expect(refused.status, 'the new limit of 1 request per minute was already used').to.equal(429);
    expect(refused.json.error.message).to.match(/^Rate limit exceeded: This organization has reached its limit of 1 requests per minute/);

    // removing the limit and setting an empty budget: the next request meets the budget, not the old rpm
    expect((await admin('PATCH', '/admin/v1/organizations/initech', { rpm: null, maxBudget: 0 })).status).to.equal(200);
    expect((await post(gw, created.key)).json.error.code).to.equal('budget_exceeded');
  });

  it('sends the rate-limit headers on Responses answers too, JSON and streamed', async () => {
    gw = await startGateway(rateConfig(upstream, { keys: [{ key: KEY, org: 'acme', rpm: 3, tpm: 10_000 }] }), { clock });
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const { response } = await client.responses.create({ model: 'm', input: 'hi' }).withResponse();
    expect(response.headers.get('x-ratelimit-limit-requests')).to.equal('3');
    expect(response.headers.get('x-ratelimit-remaining-requests')).to.equal('2');
    expect(response.headers.get('x-ratelimit-reset-requests')).to.equal('45s');
    expect(response.headers.get('x-ratelimit-limit-tokens')).to.equal('10000');
    expect(Number(response.headers.get('x-ratelimit-remaining-tokens'))).to.be.within(1, 9_999);

    const streamed = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', input: 'hi', stream: true }),
    });
    expect(streamed.status).to.equal(200);
    expect(streamed.headers.get('x-ratelimit-limit-requests')).to.equal('3');
    expect(streamed.headers.get('x-ratelimit-remaining-requests')).to.equal('1');
    expect(await streamed.text()).to.include('response.completed');
  });

  it('sends both families of rate-limit headers on a 429, whichever limit refused it (openai SDK)', async () => {
    gw = await startGateway(rateConfig(upstream, { keys: [{ key: KEY, org: 'acme', rpm: 2, tpm: 10_000 }] }), { clock });
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    for (let i = 0; i < 2; i++) await client.chat.completions.create({ model: 'm', messages: USER });
    await settled(gw, 2);
    const byRequests = await client.chat.completions.create({ model: 'm', messages: USER }).catch((e) => e);
    expect(byRequests).to.be.instanceOf(OpenAI.RateLimitError);
    const family = (headers: Headers, kind: string) => ['limit', 'remaining', 'reset'].map((h) => headers.get(`x-ratelimit-${h}-${kind}`));
    expect(family(byRequests.headers, 'requests')).to.deep.equal(['2', '0', '45s']);
    // 2 x 60 tokens used this minute; the refused request took nothing
    expect(family(byRequests.headers, 'tokens')).to.deep.equal(['10000', '9880', '45s']);
    await gw.close();

    gw = await startGateway(rateConfig(upstream, { keys: [{ key: KEY_2, org: 'acme', rpm: 10, tpm: 100 }] }), { clock });
    const second = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_2, maxRetries: 0 });
    for (let i = 0; i < 2; i++) await second.chat.completions.create({ model: 'm', messages: USER });
    await settled(gw, 2);
    const byTokens = await second.chat.completions.create({ model: 'm', messages: USER }).catch((e) => e);
    expect(byTokens).to.be.instanceOf(OpenAI.RateLimitError);
    expect(family(byTokens.headers, 'tokens')).to.deep.equal(['100', '0', '45s']);
    expect(family(byTokens.headers, 'requests')).to.deep.equal(['10', '8', '45s']);
  });

  it('reserves an inline image as an image\u2019s tokens, not its base64, so a request beside a vision request is not refused', async () => {
    gw = await startGateway(rateConfig(upstream, { keys: [{ key: KEY, org: 'acme', tpm: 20_000 }] }), { clock });
    // a 300 KB picture: about 75,000 tokens read as text, some 1,600 as the model bills it
    const picture = `data:image/png;base64,${'iVBORw0KGgo'.repeat(27_000)}`;
    upstream.script = (req) =>
      JSON.stringify(req.body).includes('image_url')
        ? { kind: 'json', body: chatCompletion('a chart', { prompt_tokens: 1_700, completion_tokens: 20, total_tokens: 1_720 }), delayMs: 500 }
        : { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 40, completion_tokens: 20, total_tokens: 60 }) };
    const seen = upstream.requests.length;
    const vision = post(gw, KEY, { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in it?' }, { type: 'image_url', image_url: { url: picture } }] }] });
    while (upstream.requests.length === seen) await new Promise((r) => setTimeout(r, 10));
    const beside = await post(gw, KEY);
    expect({ status: beside.status, error: beside.json.error?.message }).to.deep.equal({ status: 200, error: undefined });
    expect(Number(beside.header('x-ratelimit-remaining-tokens'))).to.be.above(15_000);
    expect((await vision).status).to.equal(200);
  });

  it('reserves a PDF sent as a chat file part by its pages, not its base64, so a request beside it is not refused (openai SDK)', async () => {
    gw = await startGateway(rateConfig(upstream, { keys: [{ key: KEY, org: 'acme', tpm: 20_000 }] }), { clock });
    // a three-page PDF of 300 KB (a scanned picture on a page): some 100,000 tokens read as base64 text
    const pdf = threePagePdf(300_000).toString('base64');
    upstream.script = (req) =>
      JSON.stringify(req.body).includes('file_data')
        ? { kind: 'json', body: chatCompletion('a report', { prompt_tokens: 6_000, completion_tokens: 20, total_tokens: 6_020 }), delayMs: 500 }
        : { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 40, completion_tokens: 20, total_tokens: 60 }) };
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const seen = upstream.requests.length;
    const reading = client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'file', file: { filename: 'report.pdf', file_data: `data:application/pdf;base64,${pdf}` } }, { type: 'text', text: 'Summarise it.' }] }],
    });
    while (upstream.requests.length === seen) await new Promise((r) => setTimeout(r, 10));
    const beside = await post(gw, KEY);
    expect({ status: beside.status, error: beside.json.error?.message }).to.deep.equal({ status: 200, error: undefined });
    expect(Number(beside.header('x-ratelimit-remaining-tokens'))).to.be.above(1_000);
    expect((await reading).choices[0].message.content).to.equal('a report');
  });

  it('does not read an image edit\u2019s uploaded picture as prompt tokens: a generation beside it is not refused (openai SDK)', async () => {
    const images = await new FakeImagesUpstream().start();
    try {
      images.answer = async (rec) => {
        if (rec.path.endsWith('/edits')) await new Promise((r) => setTimeout(r, 500));
        return { status: 200, body: { created: 1700000000, data: [{ b64_json: TINY_PNG.toString('base64') }], usage: { input_tokens: 300, output_tokens: 1056, total_tokens: 1356 } } };
      };
      gw = await testConfig()
        .withKey(KEY, { id: 'painter', tpm: 20_000 })
        .withOpenAI('oai', images, 'sk-provider')
        .withModel('painter', { model: 'gpt-image-1', kind: 'image' })
        .start({ clock });
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
      // a 300 KB photo: 75,000 tokens if its bytes were prompt text
      const photo = Buffer.concat([TINY_PNG.subarray(0, 8), Buffer.alloc(300_000, 7)]);
      const edit = client.images.edit({ model: 'painter', prompt: 'add a hat', image: await toFile(photo, 'fox.png', { type: 'image/png' }) });
      while (!images.requests.some((r) => r.path.endsWith('/edits'))) await new Promise((r) => setTimeout(r, 10));
      const beside = await client.images.generate({ model: 'painter', prompt: 'a fox' }).then(
        () => 'ok',
        (e) => `${e.status} ${e.message}`,
      );
      expect(beside).to.equal('ok');
      expect((await edit).data).to.have.length(1);
    } finally {
      await images.stop();
    }
  });

  it('does not count a refused request against the window', async () => {
    gw = await startGateway(rateConfig(upstream, { keys: [{ key: KEY, org: 'acme', rpm: 1, maxBudget: 0 }] }), { clock });
    // every request is refused by the (empty) budget; none of them uses up the request limit
    for (let i = 0; i < 3; i++) expect((await post(gw, KEY)).json.error.code).to.equal('budget_exceeded');
  });

  it('sends no rate-limit headers for a key without limits', async () => {
    gw = await startGateway(rateConfig(upstream, { keys: [{ key: KEY, org: 'acme' }] }), { clock });
    const r = await post(gw, KEY);
    expect(r.status).to.equal(200);
    expect(r.header('x-ratelimit-limit-requests')).to.equal(null);
  });

  describe('two gateway instances sharing a real redis-server', () => {
    let redis: RedisServer;
    before(async () => {
      redis = await startRedis();
    });
    after(async () => redis?.stop());

    it('shares one request window between the instances', async () => {
      const config = rateConfig(upstream, { store: { url: redis.url }, keys: [{ key: KEY, org: 'acme', rpm: 5 }] });
      const a = await startGateway(config, { clock });
      const b = await startGateway(config, { clock });
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 10; i++) statuses.push((await post(i % 2 ? b : a, KEY)).status);
        expect(statuses).to.deep.equal([200, 200, 200, 200, 200, 429, 429, 429, 429, 429]);
        // 50 at once in the next window: still exactly 5
        clock.advance(60_000);
        const burst = await Promise.all(Array.from({ length: 50 }, (_, i) => post(i % 2 ? b : a, KEY).then((r) => r.status)));
        expect(burst.filter((s) => s === 200)).to.have.length(5);
        expect(burst.filter((s) => s === 429)).to.have.length(45);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('applies an organization\'s changed limit on the other instance too', async () => {
      const config = rateConfig(upstream, { store: { url: redis.url } });
      const a = await startGateway(config, { clock });
      const b = await startGateway(config, { clock });
      try {
        const admin = (method: string, path: string, body: object) =>
          fetch(`${a.url}${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        expect((await admin('POST', '/admin/v1/organizations', { id: 'globex', rpm: 1000 })).status).to.equal(201);
        const created = (await (await admin('POST', '/admin/v1/keys', { org: 'globex' })).json()) as { key: string };
        expect((await post(b, created.key)).header('x-ratelimit-limit-requests')).to.equal('1000');
        expect((await admin('PATCH', '/admin/v1/organizations/globex', { maxBudget: 0 })).status).to.equal(200);
        // the injected clock stands still: only the change event can end b's cached copy
        await eventually(async () => ((await post(b, created.key)).json.error?.code === 'budget_exceeded' ? true : undefined));
      } finally {
        await a.close();
        await b.close();
      }
    });
  });

  it('tells an /mcp client when to try a rate-limited tool call again: data.retryAfter, and Retry-After on a single message', async () => {
    const docs = await FakeMcpServer.start({ tools: { search: { handler: () => ({ content: [{ type: 'text', text: 'found' }] }) } } });
    try {
      gw = await startGateway(rateConfig(upstream, { keys: [{ key: KEY, org: 'acme', rpm: 1 }], mcpServers: [{ name: 'docs', url: docs.url }], mcp: { healthCheckIntervalSeconds: 0 } }), { clock });
      const rpc = (body: unknown) =>
        fetch(`${gw!.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', 'x-gateway-api-key': `Bearer ${KEY}` }, body: JSON.stringify(body) });
      const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'docs-search', arguments: {} } });
      expect(((await (await rpc(call(1))).json()) as any).result.content[0].text).to.equal('found');

      const refused = await rpc(call(2));
      expect(refused.status).to.equal(200);
      expect(refused.headers.get('retry-after')).to.equal('45');
      const body = (await refused.json()) as any;
      expect(body.error.code).to.equal(-32004);
      expect(body.error.data).to.deep.equal({ code: 'rate_limit_exceeded', retryAfter: 45 });

      // a batch's answers each carry their own pause; the HTTP answer speaks for none of them
      clock.advance(30_000);
      const batch = await rpc([call(3), { jsonrpc: '2.0', id: 4, method: 'ping' }]);
      expect(batch.headers.get('retry-after')).to.equal(null);
      const answers = (await batch.json()) as any[];
      expect(answers[0].error.data).to.deep.equal({ code: 'rate_limit_exceeded', retryAfter: 15 });
      expect(answers[1].result).to.deep.equal({});
    } finally {
      await docs.close();
    }
  });

  it('counts a gateway_proxy tool call on /mcp as one request: a key with rpm 1 makes one a minute, not none', async () => {
    gw = await startGateway(rateConfig(upstream, { keys: [{ key: KEY, org: 'acme', rpm: 1 }] }), { clock });
    const call = async (id: number) => {
      const res = await fetch(`${gw!.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${KEY}` },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'm', arguments: { prompt: 'hi' } } }),
      });
      return (await res.json()) as any;
    };
    const first = await call(1);
    expect(first.result?.content, JSON.stringify(first)).to.deep.equal([{ type: 'text', text: 'ok' }]);
    expect((await call(2)).error?.data).to.deep.equal({ code: 'rate_limit_exceeded', retryAfter: 45 });
    clock.advance(60_000);
    expect((await call(3)).result?.content).to.deep.equal([{ type: 'text', text: 'ok' }]);
  });

  it('uses the official SDK\'s error type for a rate-limited request', async () => {
    gw = await startGateway(rateConfig(upstream, { keys: [{ key: KEY, org: 'acme', rpm: 1 }] }), { clock });
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    await client.chat.completions.create({ model: 'm', messages: USER });
    const err = await client.chat.completions.create({ model: 'm', messages: USER }).catch((e) => e);
    expect(err).to.be.instanceOf(OpenAI.RateLimitError);
    expect(err.code).to.equal('rate_limit_exceeded');
    expect(err.headers.get('retry-after')).to.equal('45');
  });
});

/** A PDF of three pages, the first drawing an embedded picture of about `pictureBytes` (a scan). */
function threePagePdf(pictureBytes: number): Buffer {
  const picture = Buffer.alloc(pictureBytes);
  for (let i = 0; i < pictureBytes; i++) picture[i] = (i * 7919) % 251;
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let length = 0;
  const add = (chunk: string | Buffer) => {
    const b = typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk;
    parts.push(b);
    length += b.length;
  };
  const object = (n: number, body: (string | Buffer)[]) => {
    offsets[n] = length;
    add(`${n} 0 obj\n`);
    body.forEach(add);
    add('\nendobj\n');
  };
  add('%PDF-1.4\n');
  object(1, ['<< /Type /Catalog /Pages 2 0 R >>']);
  object(2, ['<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >>']);
  for (const n of [3, 4, 5]) object(n, [`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]${n === 3 ? ' /Resources << /XObject << /Im1 6 0 R >> >>' : ''} >>`]);
  object(6, [`<< /Type /XObject /Subtype /Image /Width 100 /Height ${Math.floor(pictureBytes / 300)} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Length ${pictureBytes} >>\nstream\n`, picture, '\nendstream']);
  const xref = length;
  add(`xref\n0 7\n0000000000 65535 f \n${offsets.slice(1).map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`);
  add(`trailer\n<< /Size 7 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  return Buffer.concat(parts);
}
