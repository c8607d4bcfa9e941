import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import type { SqliteBackend } from '../../core/store/sqlite-backend';
import { FakeOpenAI, chatChunks } from '../support/fake-openai';
import { startRedis, type RedisServer } from '../support/redis-server';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const KEY = 'sk-storage-CANARY-81';

describe('Responses storage: chained responses stored compactly, a cap per key', () => {
  let dir: string;
  let gw: TestGateway;
  let client: OpenAI;

  /** the bytes of the stored responses in the SQLite file's kv table */
  const storedBytes = (): number =>
    ((gw.gateway.services.store as SqliteBackend).db.prepare("SELECT coalesce(sum(length(value)), 0) AS n FROM kv WHERE key LIKE 'responses:%'").get() as { n: number }).n;
  const storedCount = (): number => ((gw.gateway.services.store as SqliteBackend).db.prepare("SELECT count(*) AS n FROM kv WHERE key LIKE 'responses:%'").get() as { n: number }).n;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'gw-responses-storage-'));
    gw = await testConfig()
      .withKey(KEY, { id: 'storage' })
      .withProvider({ id: 'local', type: 'echo' })
      .withModel('echo')
      .with({
        store: { url: `sqlite://${path.join(dir, 'gateway.db')}`, sweepIntervalSeconds: 0 },
        responses: { maxStoredPerKey: 40 },
      })
      .start();
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores 31 chained requests in space linear in the conversation, and still continues the whole of it', async () => {
    const turn = (i: number) => `turn ${i} `.repeat(4_000); // ~30 KB each
    let previous: string | undefined;
    const growth: number[] = [];
    for (let i = 0; i < 31; i++) {
      const before = storedBytes();
      const data: OpenAI.Responses.Response = await client.responses.create({ model: 'echo', input: turn(i), ...(previous ? { previous_response_id: previous } : {}) });
      growth.push(storedBytes() - before);
      previous = data.id;
    }
    const total = storedBytes();
    console.log(`      31 chained responses: ${total} bytes stored; first ${growth[0]}, last ${growth[30]}`);
    // each response adds its own turn (input and echoed answer), not the whole history again
    expect(growth[30]).to.be.lessThan(growth[0] * 1.5);
    expect(total).to.be.lessThan(growth[0] * 31 * 1.5);

    // the 32nd request still sees the whole conversation (the echo answers with the last user message,
    // so ask the model for something the gateway assembles: the usage of the full prompt)
    const next = await client.responses.create({ model: 'echo', input: 'and now?', previous_response_id: previous });
    expect(next.usage!.input_tokens).to.be.greaterThan(31 * 2 * 4_000);
  });

  it('keeps at most responses.maxStoredPerKey responses per key, the oldest evicted', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 45; i++) ids.push((await client.responses.create({ model: 'echo', input: `single ${i}` })).id);
    const oldest = await client.responses.create({ model: 'echo', input: 'x', previous_response_id: ids[0] }).then(() => undefined, (e) => e);
    expect(oldest).to.be.instanceOf(OpenAI.BadRequestError);
    const newest = await client.responses.create({ model: 'echo', input: 'x', previous_response_id: ids[44] });
    expect(newest.status).to.equal('completed');
    expect(storedCount()).to.equal(40);
  });

  it('says clearly when a response continues one that was evicted', async () => {
    let previous = (await client.responses.create({ model: 'echo', input: 'start' })).id;
    const first = previous;
    for (let i = 0; i < 40; i++) previous = (await client.responses.create({ model: 'echo', input: `more ${i}`, previous_response_id: previous })).id;
    expect(storedCount()).to.equal(40);
    const err = await client.responses.create({ model: 'echo', input: 'x', previous_response_id: previous }).then(() => undefined, (e) => e);
    expect(err).to.be.instanceOf(OpenAI.NotFoundError);
    expect(err.error).to.include({ code: 'previous_response_expired', param: 'previous_response_id' });
    expect(err.error.message).to.include(first);
  });
});

describe('Responses storage: a conversation in use keeps its start', () => {
  it('renews the links of a chain that is continued, so its first response outlives its own hour', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gw-responses-renew-'));
    const clock = { t: Date.now(), now() { return this.t; } };
    const gw = await testConfig()
      .withKey(KEY, { id: 'storage' })
      .withProvider({ id: 'local', type: 'echo' })
      .withModel('echo')
      .with({ store: { url: `sqlite://${path.join(dir, 'gateway.db')}`, sweepIntervalSeconds: 0 } })
      .start({ clock });
    try {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
      const minutes = 60_000;
      const first = await client.responses.create({ model: 'echo', input: 'first words' });
      clock.t += 40 * minutes;
      const second = await client.responses.create({ model: 'echo', input: 'second', previous_response_id: first.id });
      clock.t += 40 * minutes; // the first response's own hour has passed
      const third = await client.responses.create({ model: 'echo', input: 'third', previous_response_id: second.id });
      expect(third.status).to.equal('completed');
      clock.t += 61 * minutes; // nobody continued it for more than an hour: gone
      const late = await client.responses.create({ model: 'echo', input: 'late', previous_response_id: third.id }).then(() => undefined, (e) => e);
      expect(late).to.be.instanceOf(OpenAI.BadRequestError);
    } finally {
      await gw.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Responses storage: a store that stops answering while the response runs', () => {
  let redis: RedisServer;
  let upstream: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    redis = await startRedis();
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey(KEY, { id: 'storage' })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model' })
      .with({ routing: { retries: 0 }, store: { url: redis.url, sweepIntervalSeconds: 0 } })
      .start();
  });
  after(async () => {
    redis.resume();
    await gw.close();
    await upstream.stop();
    await redis.stop();
  });

  it('ends the stream with response.failed (store_unavailable) alone, never after a response.completed', async () => {
    // the store freezes while the model answers: the answer streams, the response cannot be stored
    upstream.script = () => (redis.pause(), { kind: 'sse', events: chatChunks(['Hel', 'lo']) });
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const types: string[] = [];
    try {
      const stream = await client.responses.create({ model: 'gpt-test', input: 'hi', stream: true });
      const error = await (async () => {
        for await (const event of stream) types.push(event.type);
      })().then(() => undefined, (e) => e);
      expect(error).to.be.instanceOf(OpenAI.APIError);
      expect(error.code).to.equal('store_unavailable');
    } finally {
      redis.resume();
    }
    expect(types).to.include('response.output_text.delta');
    // the SDK raised at the error event: before it, the client had been told the response was complete
    expect(types).to.not.include('response.completed');
  });
});
