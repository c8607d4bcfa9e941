import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import type { ModelConfig, RoutingConfig } from '../../core/config/types';
import { FakeOpenAI, chatChunks, chatCompletion, type RecordedRequest, type Script } from '../support/fake-openai';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { FakeClock } from '../core/limits/fake-clock';
import { eventually } from '../support/eventually';

const KEY = 'sk-client-reliability-1';
const ADMIN = 'sk-admin-reliability-1';
const USER = [{ role: 'user' as const, content: 'hi' }];

/**
 * A loopback address nothing listens on: connecting to it is refused. Port 1, not a free port found and
 * closed again: a later test's server may be given that port, and the "dead" deployment then answered
 * (a 401 from another fake upstream, once, in CI's Node 26 pass).
 */
const REFUSED_URL = 'http://127.0.0.1:1';

/** Answer with each script in turn, the last one for every further request. */
function inTurn(...scripts: Script[]): (req: RecordedRequest) => Script {
  let i = 0;
  return () => scripts[Math.min(i++, scripts.length - 1)];
}

const ok = (text = 'Hello from upstream'): Script => ({ kind: 'json', body: chatCompletion(text) });
const failing = (status: number, headers: Record<string, string> = {}): Script => ({ kind: 'json', status, headers, body: { error: { message: `failure ${status}`, type: 'server_error' } } });

describe('reliability: retries, fallbacks, cooldowns and timeouts (openai SDK, fake upstreams failing on cue)', () => {
  let primary: FakeOpenAI;
  let backup: FakeOpenAI;
  let dead: string;
  let gw: TestGateway | undefined;
  let clock: FakeClock;

  before(async () => {
    primary = await new FakeOpenAI().start();
    backup = await new FakeOpenAI().start();
    dead = REFUSED_URL;
  });
  after(async () => {
    await primary.stop();
    await backup.stop();
  });
  beforeEach(() => {
    clock = new FakeClock();
    for (const fake of [primary, backup]) {
      fake.requests.length = 0;
      fake.script = ok(fake === primary ? 'from primary' : 'from backup');
    }
  });
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  const MAIN_WITH_BACKUP: ModelConfig[] = [
    { name: 'main', provider: 'primary', model: 'm', id: 'primary/main', fallbacks: ['backup'] },
    { name: 'backup', provider: 'backup', model: 'm', id: 'backup/main' },
  ];

  async function boot(models: ModelConfig[] = MAIN_WITH_BACKUP, routing: RoutingConfig = {}): Promise<OpenAI> {
    gw = await testConfig()
      .withKey(KEY, { id: 'app' })
      .withProvider({ id: 'primary', type: 'openai', baseUrl: `${primary.url}/v1` })
      .withProvider({ id: 'backup', type: 'openai', baseUrl: `${backup.url}/v1` })
      .withProvider({ id: 'dead', type: 'openai', baseUrl: `${dead}/v1` })
      .withProvider({ id: 'claude', type: 'anthropic', baseUrl: dead, apiKey: 'sk-ant-reliability' })
      .with({ adminKey: ADMIN, models, routing })
      .start({ clock });
    return new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
  }

  async function admin(path: string, method = 'GET'): Promise<any> {
    const res = await fetch(`${gw!.url}${path}`, { method, headers: { authorization: `Bearer ${ADMIN}` } });
    expect(res.status, path).to.equal(200);
    return res.json();
  }

  /** The log entry of the most recent request (written just after the answer was sent). */
  async function lastLogEntry(requests: number): Promise<any> {
    return eventually(async () => {
      const page = await admin('/admin/v1/logs?limit=1000');
      return page.data.length >= requests ? page.data[0] : undefined;
    });
  }

  async function statusOf(promise: Promise<unknown>): Promise<{ status: number; code: string }> {
    try {
      await promise;
    } catch (err) {
      const e = err as InstanceType<typeof OpenAI.APIError>;
      return { status: e.status as number, code: e.code as string };
    }
    throw new Error('the request succeeded');
  }

  describe('retries', () => {
    it('retries a 500 on the same deployment after a jittered backoff and serves the second answer', async () => {
      const client = await boot();
      primary.script = inTurn(failing(500), ok('second try'));
      const { data, response } = await client.chat.completions.create({ model: 'main', messages: USER }).withResponse();
      expect(data.choices[0].message.content).to.equal('second try');
      expect(response.headers.get('x-gateway-model-id')).to.equal('primary/main');
      expect(primary.requests).to.have.length(2);
      expect(backup.requests).to.have.length(0);
      // first retry: 250 ms backoff with equal jitter -> between 125 and 250 ms (fake time, no real wait)
      expect(clock.sleeps).to.have.length(1);
      expect(clock.sleeps[0]).to.be.within(125, 250);
      const entry = await lastLogEntry(1);
      expect(entry.status).to.equal(200);
      expect(entry.deploymentId).to.equal('primary/main');
      expect(entry.details.attempts).to.deep.equal([
        { deploymentId: 'primary/main', status: 500, error: 'upstream_error' },
        { deploymentId: 'primary/main', status: 200 },
      ]);
      expect(entry.details.retries).to.equal(1);
    });

    it('honours Retry-After of a 429 before trying the same deployment again', async () => {
      const client = await boot();
      primary.script = inTurn(failing(429, { 'retry-after': '3' }), ok('after the pause'));
      const data = await client.chat.completions.create({ model: 'main', messages: USER });
      expect(data.choices[0].message.content).to.equal('after the pause');
      expect(primary.requests).to.have.length(2);
      expect(clock.sleeps).to.have.length(1);
      expect(clock.sleeps[0]).to.be.at.least(3000);
    });

    it('honours retry-after-ms (Azure OpenAI) before Retry-After, to the millisecond', async () => {
      const client = await boot();
      primary.script = inTurn(failing(429, { 'retry-after-ms': '4500', 'retry-after': '5' }), ok('after the pause'));
      const data = await client.chat.completions.create({ model: 'main', messages: USER });
      expect(data.choices[0].message.content).to.equal('after the pause');
      expect(clock.sleeps).to.have.length(1);
      expect(clock.sleeps[0]).to.be.within(4500, 4999);
    });

    it('does not wait for a Retry-After longer than a minute: it moves on to the fallback', async () => {
      const client = await boot();
      primary.script = failing(429, { 'retry-after': '600' });
      const { response } = await client.chat.completions.create({ model: 'main', messages: USER }).withResponse();
      expect(response.headers.get('x-gateway-model-id')).to.equal('backup/main');
      expect(primary.requests).to.have.length(1);
      expect(clock.sleeps).to.deep.equal([]);
    });

    for (const [status, expected] of [
      [400, { status: 400, code: 'upstream_invalid_request' }],
      [401, { status: 502, code: 'upstream_auth_failed' }],
      [403, { status: 502, code: 'upstream_auth_failed' }],
      [404, { status: 502, code: 'upstream_not_found' }],
    ] as const) {
      it(`never retries or falls back on an upstream ${status}`, async () => {
        const client = await boot();
        primary.script = failing(status);
        expect(await statusOf(client.chat.completions.create({ model: 'main', messages: USER }))).to.deep.equal(expected);
        expect(primary.requests).to.have.length(1);
        expect(backup.requests).to.have.length(0);
      });
    }

    it('answers with the last failure, with its Retry-After, when every attempt fails', async () => {
      const client = await boot(MAIN_WITH_BACKUP, { retries: 0 });
      primary.script = failing(503);
      backup.script = failing(429, { 'retry-after': '7' });
      const res = await fetch(`${gw!.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'main', messages: USER }),
      });
      expect(res.status).to.equal(429);
      expect(res.headers.get('retry-after')).to.equal('7');
      expect(((await res.json()) as any).error.code).to.equal('upstream_rate_limited');
      expect(primary.requests).to.have.length(1);
      expect(backup.requests).to.have.length(1);
      void client;
    });
  });

  describe('fallbacks', () => {
    it('falls back to the next model when the deployment refuses connections, and logs the attempts', async () => {
      const client = await boot(
        [
          { name: 'main', provider: 'dead', model: 'm', id: 'dead/main', fallbacks: ['backup'] },
          { name: 'backup', provider: 'backup', model: 'm', id: 'backup/main' },
        ],
        { retries: 1 },
      );
      const { data, response } = await client.chat.completions.create({ model: 'main', messages: USER }).withResponse();
      expect(data.choices[0].message.content).to.equal('from backup');
      expect(response.headers.get('x-gateway-model-id')).to.equal('backup/main');
      expect(backup.last.body.model).to.equal('m');
      const entry = await lastLogEntry(1);
      expect(entry.model).to.equal('main');
      expect(entry.deploymentId).to.equal('backup/main');
      expect(entry.details.attempts).to.deep.equal([
        { deploymentId: 'dead/main', status: 502, error: 'upstream_unreachable' },
        { deploymentId: 'dead/main', status: 502, error: 'upstream_unreachable' },
        { deploymentId: 'backup/main', status: 200 },
      ]);
      expect(entry.details.fallback).to.deep.equal({ from: 'main', to: 'backup' });
    });

    it('tries the fallbacks in the order they are listed', async () => {
      const client = await boot(
        [
          { name: 'main', provider: 'dead', model: 'm', id: 'dead/main', fallbacks: ['second', 'third'] },
          { name: 'second', provider: 'primary', model: 'm', id: 'primary/second' },
          { name: 'third', provider: 'backup', model: 'm', id: 'backup/third' },
        ],
        { retries: 0 },
      );
      primary.script = failing(502);
      const { response } = await client.chat.completions.create({ model: 'main', messages: USER }).withResponse();
      expect(response.headers.get('x-gateway-model-id')).to.equal('backup/third');
      expect(primary.requests).to.have.length(1);
      expect(backup.requests).to.have.length(1);
    });
  });

  it('skips a fallback that cannot take the request (n: 2 on Claude) and answers with the failure that led to it, or from the next fallback', async () => {
    const client = await boot(
      [
        { name: 'main', provider: 'primary', model: 'm', id: 'primary/main', fallbacks: ['claude-spare'] },
        { name: 'main-2', provider: 'primary', model: 'm', id: 'primary/main-2', fallbacks: ['claude-spare', 'backup'] },
        { name: 'claude-spare', provider: 'claude', model: 'claude-sonnet-4-5', id: 'claude/spare' },
        { name: 'backup', provider: 'backup', model: 'm', id: 'backup/main' },
      ],
      { retries: 0 },
    );
    primary.script = failing(503);
    expect(await statusOf(client.chat.completions.create({ model: 'main', messages: USER, n: 2 }))).to.deep.equal({ status: 502, code: 'upstream_error' });
    // the failure answered is the primary's: the log entry names it
    expect(await lastLogEntry(1)).to.include({ status: 502, deploymentId: 'primary/main', errorCode: 'upstream_error' });
    const { data, response } = await client.chat.completions.create({ model: 'main-2', messages: USER, n: 2 }).withResponse();
    expect(data.choices[0].message.content).to.equal('from backup');
    expect(response.headers.get('x-gateway-model-id')).to.equal('backup/main');
    expect(backup.last.body.n).to.equal(2);
    const entry = await lastLogEntry(2);
    expect(entry.details.attempts).to.deep.equal([
      { deploymentId: 'primary/main-2', status: 503, error: 'upstream_error' },
      { deploymentId: 'claude/spare', status: 400, error: 'unsupported_parameter' },
      { deploymentId: 'backup/main', status: 200 },
    ]);
  });

  it('tries a model\u2019s only deployment in cooldown when its fallback cannot take the request (n: 2 on Claude), rather than a 400 about the client\u2019s valid request', async () => {
    const client = await boot(
      [
        { name: 'main', provider: 'primary', model: 'm', id: 'primary/main', fallbacks: ['claude-spare'] },
        { name: 'claude-spare', provider: 'claude', model: 'claude-sonnet-4-5', id: 'claude/spare' },
      ],
      { retries: 0, cooldown: { failures: 1 } },
    );
    primary.script = failing(503);
    expect(await statusOf(client.chat.completions.create({ model: 'main', messages: USER, n: 2 }))).to.deep.equal({ status: 502, code: 'upstream_error' });
    expect((await admin('/admin/v1/deployments')).data.find((d: any) => d.id === 'primary/main').state).to.equal('cooling_down');
    primary.script = ok('back already');
    const { data, response } = await client.chat.completions.create({ model: 'main', messages: USER, n: 2 }).withResponse();
    expect(data.choices[0].message.content).to.equal('back already');
    expect(response.headers.get('x-gateway-model-id')).to.equal('primary/main');
    expect(primary.last.body.n).to.equal(2);
  });

  it('skips a deployment of a mixed group that cannot take the request (n: 2 on Claude) and serves it from one that can', async () => {
    const client = await boot(
      [
        { name: 'mixed', provider: 'claude', model: 'claude-sonnet-4-5', id: 'claude/mixed', weight: 1000 },
        { name: 'mixed', provider: 'primary', model: 'm', id: 'primary/mixed', weight: 1 },
      ],
      { retries: 1 },
    );
    for (let i = 0; i < 3; i++) {
      const { data, response } = await client.chat.completions.create({ model: 'mixed', messages: USER, n: 2 }).withResponse();
      expect(data.choices[0].message.content).to.equal('from primary');
      expect(response.headers.get('x-gateway-model-id')).to.equal('primary/mixed');
    }
    expect(primary.requests).to.have.length(3);
    // a request no deployment of the group can express is still the client's error
    await gw!.close();
    const lone = await boot([{ name: 'claude-only', provider: 'claude', model: 'claude-sonnet-4-5', id: 'claude/only' }]);
    expect(await statusOf(lone.chat.completions.create({ model: 'claude-only', messages: USER, n: 2 }))).to.deep.equal({ status: 400, code: 'unsupported_parameter' });
  });

  it('counts in the access line only the attempts sent upstream, not a deployment skipped because it cannot express the request', async () => {
    const client = await boot(
      [
        { name: 'mixed', provider: 'claude', model: 'claude-sonnet-4-5', id: 'claude/mixed', weight: 1000 },
        { name: 'mixed', provider: 'primary', model: 'm', id: 'primary/mixed', weight: 1 },
      ],
      { retries: 1 },
    );
    const { response } = await client.chat.completions.create({ model: 'mixed', messages: USER, n: 2 }).withResponse();
    expect(response.headers.get('x-gateway-model-id')).to.equal('primary/mixed');
    expect(primary.requests).to.have.length(1);
    const id = response.headers.get('x-gateway-request-id');
    const line = await eventually(() => gw!.logLines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'request' && l.requestId === id));
    // one request went upstream: the line read 2, as if the deployment that never got it had been tried
    expect(line).to.include({ deployment: 'primary/mixed', status: 200, attempts: 1 });
  });

  describe('timeouts', () => {
    it('gives up on a hanging upstream after x-gateway-timeout seconds and falls back', async () => {
      const client = await boot(MAIN_WITH_BACKUP, { retries: 0 });
      primary.script = { kind: 'hang' };
      const { response } = await client.chat.completions.create({ model: 'main', messages: USER }, { headers: { 'x-gateway-timeout': '0.3' } }).withResponse();
      expect(response.headers.get('x-gateway-model-id')).to.equal('backup/main');
      const entry = await lastLogEntry(1);
      expect(entry.details.attempts[0]).to.deep.equal({ deploymentId: 'primary/main', status: 504, error: 'upstream_timeout' });
    });

    it('does not cool a deployment down for a client\'s own x-gateway-timeout shorter than the deployment\'s: other clients keep it', async () => {
      const client = await boot(MAIN_WITH_BACKUP, { retries: 0 });
      primary.script = { kind: 'json', body: chatCompletion('from primary'), delayMs: 400 };
      for (let i = 0; i < 3; i++) {
        const { response } = await client.chat.completions.create({ model: 'main', messages: USER }, { headers: { 'x-gateway-timeout': '0.05' } }).withResponse();
        expect(response.headers.get('x-gateway-model-id')).to.equal('backup/main');
      }
      const entry = await lastLogEntry(3);
      expect(entry.details.attempts[0]).to.deep.equal({ deploymentId: 'primary/main', status: 504, error: 'upstream_timeout' });
      expect((await admin('/admin/v1/deployments')).data.find((d: any) => d.id === 'primary/main').state).to.equal('healthy');
      const { data, response } = await client.chat.completions.create({ model: 'main', messages: USER }).withResponse();
      expect(data.choices[0].message.content).to.equal('from primary');
      expect(response.headers.get('x-gateway-model-id')).to.equal('primary/main');
    });

    it('applies the model\'s own first-byte timeout (models[].timeouts)', async () => {
      const client = await boot([{ name: 'slow', provider: 'primary', model: 'm', id: 'primary/slow', timeouts: { firstByteMs: 200 } }], { retries: 0 });
      primary.script = { kind: 'hang' };
      expect(await statusOf(client.chat.completions.create({ model: 'slow', messages: USER }))).to.deep.equal({ status: 504, code: 'upstream_timeout' });
    });

    it('ends a stream that goes idle between chunks, without retrying it', async () => {
      const client = await boot(MAIN_WITH_BACKUP);
      primary.script = { kind: 'sse', events: chatChunks(['one', 'two']), eventDelayMs: 2_000 };
      const stream = await client.chat.completions.create({ model: 'main', messages: USER, stream: true }, { headers: { 'x-gateway-timeout': '0.3' } });
      let error: any;
      try {
        for await (const _chunk of stream) void _chunk;
      } catch (err) {
        error = err;
      }
      expect(error?.error?.code ?? error?.code).to.equal('upstream_idle_timeout');
      expect(primary.requests).to.have.length(1);
      expect(backup.requests).to.have.length(0);
    });

    it('ends a stream that runs past the model\'s total timeout (models[].timeouts.totalMs)', async () => {
      const client = await boot([{ name: 'capped', provider: 'primary', model: 'm', id: 'primary/capped', timeouts: { totalMs: 400 } }]);
      primary.script = { kind: 'sse', events: chatChunks(Array.from({ length: 40 }, (_, i) => `w${i} `)), eventDelayMs: 50 };
      const stream = await client.chat.completions.create({ model: 'capped', messages: USER, stream: true });
      let text = '';
      let error: any;
      try {
        for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      } catch (err) {
        error = err;
      }
      expect(text).to.match(/^w0 w1 /);
      expect(text).to.not.include('w39');
      expect(error?.error?.code ?? error?.code).to.equal('upstream_total_timeout');
      expect(primary.requests).to.have.length(1);
    });

    it('rejects an x-gateway-timeout that is not a positive number of seconds', async () => {
      const client = await boot();
      const result = await statusOf(client.chat.completions.create({ model: 'main', messages: USER }, { headers: { 'x-gateway-timeout': 'soon' } }));
      expect(result).to.deep.equal({ status: 400, code: 'invalid_timeout' });
      expect(primary.requests).to.have.length(0);
    });

    it('refuses an invalid x-gateway-timeout before admission: the refused request does not use up the key\u2019s rpm', async () => {
      gw = await testConfig()
        .withKey(KEY, { id: 'app', rpm: 1 })
        .withProvider({ id: 'primary', type: 'openai', baseUrl: `${primary.url}/v1` })
        .with({ models: [{ name: 'main', provider: 'primary', model: 'm', id: 'primary/main' }] })
        .start({ clock });
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
      expect(await statusOf(client.chat.completions.create({ model: 'main', messages: USER }, { headers: { 'x-gateway-timeout': '-1' } }))).to.deep.equal({ status: 400, code: 'invalid_timeout' });
      const data = await client.chat.completions.create({ model: 'main', messages: USER }, { headers: { 'x-gateway-timeout': '5' } });
      expect(data.choices[0].message.content).to.equal('from primary');
      expect(primary.requests).to.have.length(1);
    });
  });

  describe('streams', () => {
    it('treats a 200 stream whose first event is an error as a failure and retries it', async () => {
      const client = await boot();
      primary.script = inTurn({ kind: 'sse', events: [{ error: { message: 'The server is overloaded', type: 'server_error' } }] }, { kind: 'sse', events: chatChunks(['Hel', 'lo'], { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 }) });
      const stream = await client.chat.completions.create({ model: 'main', messages: USER, stream: true });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      expect(text).to.equal('Hello');
      expect(primary.requests).to.have.length(2);
      const entry = await lastLogEntry(1);
      expect(entry.details.attempts[0]).to.deep.equal({ deploymentId: 'primary/main', status: 502, error: 'upstream_stream_error' });
    });

    it('never retries once bytes have reached the client: a stream cut midway ends with an error', async () => {
      const client = await boot();
      primary.script = { kind: 'sse', events: chatChunks(['partial', 'never sent']), cutAfter: 2 };
      const stream = await client.chat.completions.create({ model: 'main', messages: USER, stream: true });
      let text = '';
      let error: any;
      try {
        for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      } catch (err) {
        error = err;
      }
      expect(text).to.equal('partial');
      expect(error, 'the stream ends with an error event').to.exist;
      expect(primary.requests).to.have.length(1);
      expect(backup.requests).to.have.length(0);
      const entry = await lastLogEntry(1);
      expect(entry.details.attempts ?? [{ deploymentId: 'primary/main', status: 200 }]).to.have.length(1);
    });
  });

  it('never retries an image edit, whose files are streamed through and cannot be sent twice', async () => {
    const client = await boot(
      [
        { name: 'painter', provider: 'primary', model: 'gpt-image-1', id: 'primary/painter', kind: 'image', fallbacks: ['painter-2'] },
        { name: 'painter-2', provider: 'backup', model: 'gpt-image-1', id: 'backup/painter', kind: 'image' },
      ],
      { retries: 2 },
    );
    primary.script = failing(500);
    const image = await toFile(Buffer.from('not really a png'), 'cat.png', { type: 'image/png' });
    const result = await statusOf(client.images.edit({ model: 'painter', prompt: 'add a hat', image }));
    expect(result).to.deep.equal({ status: 502, code: 'upstream_error' });
    expect(primary.requests).to.have.length(1);
    expect(primary.last.rawBody).to.include('not really a png');
    expect(backup.requests).to.have.length(0);
  });

  it('cools down an image deployment whose edits keep failing, though an edit is never retried, and sends the next edit to the fallback', async () => {
    const client = await boot(
      [
        { name: 'painter', provider: 'primary', model: 'gpt-image-1', id: 'primary/painter', kind: 'image', fallbacks: ['painter-2'] },
        { name: 'painter-2', provider: 'backup', model: 'gpt-image-1', id: 'backup/painter', kind: 'image' },
      ],
      { retries: 0 },
    );
    primary.script = failing(500);
    backup.script = { kind: 'json', body: { created: 1700000000, data: [{ b64_json: 'aGF0' }] } };
    const png = () => toFile(Buffer.from('not really a png'), 'cat.png', { type: 'image/png' });
    for (let i = 0; i < 3; i++) expect(await statusOf(client.images.edit({ model: 'painter', prompt: 'add a hat', image: await png() }))).to.deep.equal({ status: 502, code: 'upstream_error' });
    const cooling = (await admin('/admin/v1/deployments')).data.find((d: any) => d.id === 'primary/painter');
    expect(cooling).to.include({ state: 'cooling_down', failures: 3 });
    const { data, response } = await client.images.edit({ model: 'painter', prompt: 'add a hat', image: await png() }).withResponse();
    expect(data.data?.[0].b64_json).to.equal('aGF0');
    expect(response.headers.get('x-gateway-model-id')).to.equal('backup/painter');
    expect(primary.requests).to.have.length(3);
  });

  it('does not cool an image deployment down for edits that time out: an edit\'s deadline runs while its client uploads', async () => {
    const client = await boot([{ name: 'painter', provider: 'primary', model: 'gpt-image-1', id: 'primary/painter', kind: 'image', timeouts: { firstByteMs: 200 } }], { retries: 0 });
    primary.script = { kind: 'hang' };
    const png = () => toFile(Buffer.from('not really a png'), 'cat.png', { type: 'image/png' });
    for (let i = 0; i < 3; i++) expect(await statusOf(client.images.edit({ model: 'painter', prompt: 'add a hat', image: await png() }))).to.deep.equal({ status: 504, code: 'upstream_timeout' });
    const deployment = (await admin('/admin/v1/deployments')).data.find((d: any) => d.id === 'primary/painter');
    expect(deployment).to.include({ state: 'healthy' });
  });

  describe('cooldowns and deployment health', () => {
    it('skips a deployment that failed 3 times for 5 s, shows it in the management API, then uses it again', async () => {
      const client = await boot(MAIN_WITH_BACKUP, { retries: 0 });
      primary.script = failing(500);
      for (let i = 0; i < 3; i++) {
        const { response } = await client.chat.completions.create({ model: 'main', messages: USER }).withResponse();
        expect(response.headers.get('x-gateway-model-id')).to.equal('backup/main');
      }
      expect(primary.requests).to.have.length(3);

      const cooling = (await admin('/admin/v1/deployments')).data.find((d: any) => d.id === 'primary/main');
      expect(cooling).to.include({ state: 'cooling_down', failures: 3, cooldown_until: new Date(clock.t + 5000).toISOString() });
      expect(cooling.last_error.code).to.equal('upstream_error');

      await client.chat.completions.create({ model: 'main', messages: USER });
      expect(primary.requests, 'skipped while cooling down').to.have.length(3);
      expect(backup.requests).to.have.length(4);

      clock.advance(5_000);
      primary.script = ok('recovered');
      const data = await client.chat.completions.create({ model: 'main', messages: USER });
      expect(data.choices[0].message.content).to.equal('recovered');
      expect(primary.requests).to.have.length(4);
      const healthy = (await admin('/admin/v1/deployments')).data.find((d: any) => d.id === 'primary/main');
      expect(healthy).to.include({ state: 'healthy', cooldown_until: null, successes: 1 });
    });

    it('follows routing.cooldown settings and lets the platform admin end a cooldown early', async () => {
      const client = await boot(MAIN_WITH_BACKUP, { retries: 0, cooldown: { failures: 1, cooldownSeconds: 60 } });
      primary.script = failing(502);
      await client.chat.completions.create({ model: 'main', messages: USER });
      const list = await admin('/admin/v1/deployments');
      expect(list.cooldown, 'the settings in use, as in routing.cooldown').to.deep.equal({ failures: 1, windowSeconds: 60, cooldownSeconds: 60 });
      expect(list.data.find((d: any) => d.id === 'primary/main').state).to.equal('cooling_down');
      const reset = await admin(`/admin/v1/deployments/${encodeURIComponent('primary/main')}/reset`, 'POST');
      expect(reset.state).to.equal('healthy');
      primary.script = ok('back');
      expect((await client.chat.completions.create({ model: 'main', messages: USER })).choices[0].message.content).to.equal('back');
    });

    it('still tries a lone deployment in cooldown rather than refusing the request', async () => {
      const client = await boot([{ name: 'solo', provider: 'primary', model: 'm', id: 'primary/solo' }], { retries: 0 });
      primary.script = failing(500);
      for (let i = 0; i < 3; i++) expect((await statusOf(client.chat.completions.create({ model: 'solo', messages: USER }))).status).to.equal(502);
      primary.script = ok('still here');
      const data = await client.chat.completions.create({ model: 'solo', messages: USER });
      expect(data.choices[0].message.content).to.equal('still here');
    });
  });

  describe('load balancing', () => {
    it('spreads requests over the deployments of a model group', async () => {
      const client = await boot(
        [
          { name: 'pool', provider: 'primary', model: 'm', id: 'primary/pool', weight: 1 },
          { name: 'pool', provider: 'backup', model: 'm', id: 'backup/pool', weight: 1 },
        ],
        { retries: 0 },
      );
      const served = new Set<string>();
      for (let i = 0; i < 40; i++) {
        const { response } = await client.chat.completions.create({ model: 'pool', messages: USER }).withResponse();
        served.add(response.headers.get('x-gateway-model-id')!);
      }
      expect([...served].sort()).to.deep.equal(['backup/pool', 'primary/pool']);
      expect(primary.requests.length + backup.requests.length).to.equal(40);
    });

    it('least-busy: sends a request to the deployment with nothing in flight', async () => {
      const client = await boot(
        [
          { name: 'pool', provider: 'primary', model: 'm', id: 'primary/pool' },
          { name: 'pool', provider: 'backup', model: 'm', id: 'backup/pool' },
        ],
        { strategy: 'least-busy', retries: 0 },
      );
      for (const fake of [primary, backup]) fake.script = { kind: 'json', body: chatCompletion('slow'), delayMs: 300 };
      const slow = client.chat.completions.create({ model: 'pool', messages: USER }).withResponse();
      const busy = await eventually(() => (primary.requests.length ? 'primary/pool' : backup.requests.length ? 'backup/pool' : undefined));
      const { response } = await client.chat.completions.create({ model: 'pool', messages: USER }).withResponse();
      expect(response.headers.get('x-gateway-model-id')).to.not.equal(busy);
      expect((await slow).response.headers.get('x-gateway-model-id')).to.equal(busy);
    });

    it('honours a deployment\'s Retry-After when it comes round again after another deployment of the group', async () => {
      const POOL: ModelConfig[] = [
        { name: 'pool', provider: 'primary', model: 'm', id: 'primary/pool' },
        { name: 'pool', provider: 'backup', model: 'm', id: 'backup/pool' },
      ];
      // three attempts over two deployments: the third goes back to the one that asked for a 3 s pause
      const client = await boot(POOL, { retries: 2 });
      for (const fake of [primary, backup]) fake.script = inTurn(failing(429, { 'retry-after': '3' }), ok('after the pause'));
      const data = await client.chat.completions.create({ model: 'pool', messages: USER });
      expect(data.choices[0].message.content).to.equal('after the pause');
      expect(primary.requests.length + backup.requests.length).to.equal(3);
      expect(clock.sleeps).to.have.length(1);
      expect(clock.sleeps[0]).to.be.at.least(3000);

      // a deployment asking for more than a minute is not tried again in this request at all
      await gw!.close();
      for (const fake of [primary, backup]) {
        fake.requests.length = 0;
        fake.script = failing(429, { 'retry-after': '600' });
      }
      const again = await boot(POOL, { retries: 2 });
      expect(await statusOf(again.chat.completions.create({ model: 'pool', messages: USER }))).to.deep.equal({ status: 429, code: 'upstream_rate_limited' });
      expect(primary.requests).to.have.length(1);
      expect(backup.requests).to.have.length(1);
    });

    it('retries a failing deployment\'s request on another deployment of the group without waiting', async () => {
      const client = await boot(
        [
          { name: 'pool', provider: 'dead', model: 'm', id: 'dead/pool' },
          { name: 'pool', provider: 'backup', model: 'm', id: 'backup/pool' },
        ],
        { retries: 1 },
      );
      for (let i = 0; i < 6; i++) {
        const { response } = await client.chat.completions.create({ model: 'pool', messages: USER }).withResponse();
        expect(response.headers.get('x-gateway-model-id')).to.equal('backup/pool');
      }
      expect(clock.sleeps).to.deep.equal([]);
    });
  });
});
