/**
 * Prometheus metrics at GET /metrics (issue 17 point 2): scraped after a known set of requests (chat, an
 * MCP tool call, a guardrail block, a budget refusal, an upstream retry) with the expected counter
 * values; who may scrape; bounded labels (no key values, unknown names are "other").
 */
import { expect } from 'chai';
import OpenAI from 'openai';
import { request } from 'undici';
import { FakeOpenAI, chatChunks, chatCompletion } from '../support/fake-openai';
import { FakeMcpServer } from '../support/fake-mcp-server';
import { eventually } from '../support/eventually';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const KEY = 'sk-metrics-CANARY-1702';
const BROKE = 'sk-metrics-broke-CANARY-1703';
const ADMIN = 'sk-metrics-admin-CANARY-1704';
const TOKEN = 'metrics-token-CANARY-1705';

/** The value of one sample in the Prometheus text format, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const found = new Map([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => found.get(k) === v)) return Number(m[3]);
  }
  return undefined;
}

describe('Prometheus metrics at GET /metrics', function () {
  this.timeout(30_000);
  let upstream: FakeOpenAI;
  let docs: FakeMcpServer;
  let gw: TestGateway;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    docs = await FakeMcpServer.start({ tools: { search: { handler: () => ({ content: [{ type: 'text', text: 'found' }] }) } } });
    gw = await testConfig()
      .withKey(KEY, { id: 'metered' })
      .withKey(BROKE, { id: 'broke', maxBudget: 0.00001 })
      .withOpenAI('oai', upstream, 'sk-provider-metrics-CANARY')
      .withModel('gpt-test', { model: 'upstream-model', price: { inputPerMTok: 1000, outputPerMTok: 2000 } })
      .withMcpServer('docs', docs.url)
      .with({
        adminKey: ADMIN,
        metrics: { token: TOKEN },
        mcp: { healthCheckIntervalSeconds: 0 },
        routing: { retries: 1 },
        guardrails: [{ id: 'house-rules', engine: 'block', phase: 'pre', default: true, options: { words: ['project falcon'] } }],
      })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
    await docs.close();
  });

  const scrape = async (auth = `Bearer ${ADMIN}`) => {
    const res = await fetch(`${gw.url}/metrics`, { headers: { authorization: auth } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    return res.text();
  };

  it('counts requests, tokens, cost, attempts, tool calls, guardrail verdicts and limit refusals', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
    // 1. two plain chats
    await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'one' }] });
    await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'two' }] });
    // 2. an upstream retry: 503 then 200 (the same deployment, after a backoff)
    let calls = 0;
    upstream.script = () => (++calls === 1 ? { kind: 'json', status: 503, body: { error: { message: 'busy' } } } : { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) });
    await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'three' }] });
    upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
    // 3. a guardrail block
    const blocked = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'about project falcon' }] }).catch((e) => e);
    expect(blocked.status).to.equal(400);
    // 4. a budget refusal: the first request spends past the tiny budget, the second is refused
    const broke = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: BROKE, maxRetries: 0 });
    await broke.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'spend' }] });
    const refused = await broke.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'more' }] }).catch((e) => e);
    expect(refused.status).to.equal(429);
    // 5. an unknown model (label "other") and an MCP tool call
    await client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }).catch(() => undefined);
    const tool = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': `Bearer ${KEY}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'docs-search', arguments: { q: 'x' } } }),
    });
    expect(await tool.text()).to.include('found');
    // 6. a key the gateway does not know: no log entry, but counted
    const stranger = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-nobody-knows-this', maxRetries: 0 });
    expect((await stranger.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e)).status).to.equal(401);

    const text = await scrape();
    expect(sample(text, 'gateway_requests_total', { endpoint: 'chat', model: 'gpt-test', status: '200' })).to.equal(4);
    expect(sample(text, 'gateway_requests_total', { endpoint: 'chat', model: 'gpt-test', status: '400' })).to.equal(1);
    expect(sample(text, 'gateway_requests_total', { endpoint: 'chat', model: 'gpt-test', status: '429' })).to.equal(1);
    expect(sample(text, 'gateway_requests_total', { endpoint: 'chat', model: 'other', status: '404' })).to.equal(1);
    expect(sample(text, 'gateway_requests_total', { endpoint: 'mcp', model: '', status: '200' })).to.equal(1);
    expect(sample(text, 'gateway_requests_total', { endpoint: 'chat', model: 'gpt-test', status: '401' })).to.equal(1);
    expect(sample(text, 'gateway_request_duration_seconds_count', { endpoint: 'chat' })).to.equal(8);
    expect(sample(text, 'gateway_tokens_total', { model: 'gpt-test', type: 'input' })).to.equal(40);
    expect(sample(text, 'gateway_tokens_total', { model: 'gpt-test', type: 'output' })).to.equal(20);
    // 4 answered chats x (10 x 1000 + 5 x 2000) / 1e6
    expect(sample(text, 'gateway_cost_usd_total', { model: 'gpt-test' })).to.be.closeTo(0.08, 1e-9);
    expect(sample(text, 'gateway_upstream_attempts_total', { deployment: 'oai/upstream-model', outcome: 'success' })).to.equal(4);
    expect(sample(text, 'gateway_upstream_attempts_total', { deployment: 'oai/upstream-model', outcome: 'retried' })).to.equal(1);
    expect(sample(text, 'gateway_mcp_tool_calls_total', { server: 'docs', tool: 'search', status: 'ok' })).to.equal(1);
    expect(sample(text, 'gateway_guardrail_verdicts_total', { guardrail: 'house-rules', verdict: 'block' })).to.equal(1);
    expect(sample(text, 'gateway_guardrail_verdicts_total', { guardrail: 'house-rules', verdict: 'allow' })).to.be.at.least(4);
    expect(sample(text, 'gateway_limit_refusals_total', { reason: 'budget' })).to.equal(1);
    expect(sample(text, 'gateway_deployment_healthy', { deployment: 'oai/upstream-model' })).to.equal(1);
    expect(sample(text, 'gateway_log_writes_queued')).to.equal(0);
    expect(sample(text, 'gateway_log_writes_total')).to.equal(8);
    expect(sample(text, 'gateway_log_write_failures_total')).to.equal(0);
    // the log writer writes its entries in batches (one appendLogs per event-loop turn)
    expect(sample(text, 'gateway_store_operation_duration_seconds_count', { operation: 'appendLogs' })).to.be.within(1, 8);
    // the budget counters are store calls too
    expect(sample(text, 'gateway_store_operation_duration_seconds_count', { operation: 'incrByFloat' })).to.be.at.least(2);
    expect(sample(text, 'gateway_store_failures_total', { operation: 'appendLogs' })).to.equal(undefined);
    expect(sample(text, 'gateway_event_loop_lag_seconds', { quantile: '0.99' })).to.be.a('number');
    // bounded labels: no key value or id, no client text
    for (const secret of [KEY, BROKE, ADMIN, TOKEN, 'sk-nobody-knows-this', 'metered', 'no-such-model', 'falcon']) expect(text).to.not.include(secret);
  });

  it('reads the event loop\'s lag without its 20 ms sampling interval: well under it when idle, at least a stall\'s length when blocked', async () => {
    const lag = async (quantile: string) => sample(await scrape(), 'gateway_event_loop_lag_seconds', { quantile })!;
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
    // an idle loop runs its timers on time: the reading was never under about 0.02 s, the sampling interval
    // itself. Each reading covers the time since the previous scrape; on a busy machine the process may
    // really wait for a core now and then, so some quiet stretch is enough.
    await scrape();
    await eventually(async () => {
      await pause(300);
      return (await lag('mean')) < 0.01;
    }, 6000);
    await pause(100);
    const until = Date.now() + 250;
    while (Date.now() < until); // the gateway runs in this process: its loop stalls for 250 ms
    await pause(100);
    // the stall may begin anywhere in a sampling interval: the timer due in it fires at most 250 ms late,
    // and at least 250 ms less one interval, less a little more where a loaded host ran that timer itself
    // late (0.2299 was read so once): 0.2 s is ten sampling intervals, twenty times an idle loop's reading
    expect(await lag('max')).to.be.at.least(0.2);
  });

  it('reads a stall of the event loop that begins as a scrape is answered, in the next scrape', async () => {
    const maxLag = (text: string) => sample(text, 'gateway_event_loop_lag_seconds', { quantile: 'max' })!;
    for (let i = 0; i < 3; i++) {
      const scraped = await request(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(scraped.statusCode).to.equal(200);
      // the gateway runs in this process: its loop stalls for 150 ms from the moment the scrape's answer arrives
      const until = Date.now() + 150;
      while (Date.now() < until);
      await scraped.body.text();
      await new Promise((r) => setTimeout(r, 60));
      // at least the stall less one 20 ms sampling interval; the scrape's reset dropped the sample after it
      expect(maxLag(await scrape())).to.be.at.least(0.13);
    }
  });

  it('counts an upstream failure after which nothing is tried again as failed, not retried', async () => {
    const attempts = async () => {
      const text = await scrape();
      const of = (outcome: string) => sample(text, 'gateway_upstream_attempts_total', { deployment: 'oai/upstream-model', outcome }) ?? 0;
      return { retried: of('retried'), failed: of('failed') };
    };
    const before = await attempts();
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    // retries: 1, so two attempts: the first is tried again, the second is the last and reaches the client
    upstream.script = { kind: 'json', status: 503, body: { error: { message: 'busy' } } };
    try {
      const err = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'busy' }] }).catch((e) => e);
      expect(err.status).to.equal(502);
    } finally {
      upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
    }
    const after = await attempts();
    expect({ retried: after.retried - before.retried, failed: after.failed - before.failed }).to.deep.equal({ retried: 1, failed: 1 });
  });

  it('counts a stream its upstream cut halfway as a failed attempt, and one that ended as a success', async () => {
    // a gateway of its own: the streams here are not the shared gateway's to time
    const own = await testConfig()
      .withKey(KEY)
      .withOpenAI('oai', upstream, 'sk-provider-metrics-CANARY')
      .withModel('gpt-test', { model: 'upstream-model' })
      .with({ metrics: { public: true } })
      .start();
    const attempts = async () => {
      const text = await (await fetch(`${own.url}/metrics`)).text();
      const of = (outcome: string) => sample(text, 'gateway_upstream_attempts_total', { deployment: 'oai/upstream-model', outcome }) ?? 0;
      return { success: of('success'), failed: of('failed') };
    };
    const before = await attempts();
    const client = new OpenAI({ baseURL: `${own.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const read = async () => {
      let text = '';
      for await (const chunk of await client.chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'stream' }] })) text += chunk.choices[0]?.delta?.content ?? '';
      return text;
    };
    try {
      upstream.script = { kind: 'sse', events: chatChunks(['one', 'two', 'three']), cutAfter: 2 };
      const cut = await read().catch((e) => e);
      expect(cut).to.be.instanceOf(Error);
      expect(cut.message).to.include('broke in the middle of the stream');
      upstream.script = { kind: 'sse', events: chatChunks(['one', 'two']) };
      expect(await read()).to.equal('onetwo');
      const after = await eventually(async () => {
        const now = await attempts();
        return now.success + now.failed - before.success - before.failed === 2 ? now : undefined;
      });
      // the cut stream was counted a success at its first frame: a deployment breaking every stream showed no failure
      expect({ success: after.success - before.success, failed: after.failed - before.failed }).to.deep.equal({ success: 1, failed: 1 });
    } finally {
      upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
      await own.close();
    }
  });

  it('does not count an attempt the client gave up on as a failure of the deployment', async () => {
    const failed = async () => sample(await scrape(), 'gateway_upstream_attempts_total', { deployment: 'oai/upstream-model', outcome: 'failed' }) ?? 0;
    const before = await failed();
    const seen = upstream.requests.length;
    upstream.script = { kind: 'hang' };
    try {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
      const abort = new AbortController();
      const answer = client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'slow' }] }, { signal: abort.signal }).catch((e) => e);
      // the attempt is under way at the upstream when the client hangs up
      await eventually(() => upstream.requests.length > seen);
      abort.abort();
      expect(await answer).to.be.instanceOf(Error);
      await eventually(async () => (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0]?.status === 499);
    } finally {
      upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
    }
    // the deployment did not fail: alerts on its failed attempts fired whenever users pressed stop
    expect(await failed()).to.equal(before);
  });

  it('does not count a request the deployment cannot express, never sent, as a failed attempt of it', async () => {
    const claude = await testConfig()
      .withKey(KEY)
      .withProvider({ id: 'claude', type: 'anthropic', baseUrl: upstream.url, apiKey: 'sk-ant-metrics-CANARY-1706' })
      .withModel('claude-only', { model: 'claude-sonnet-4-5' })
      .with({ metrics: { public: true } })
      .start();
    try {
      const seen = upstream.requests.length;
      const client = new OpenAI({ baseURL: `${claude.url}/v1`, apiKey: KEY, maxRetries: 0 });
      // n: 2 has no Messages form: the client's error, answered before anything goes upstream
      const refused = await client.chat.completions.create({ model: 'claude-only', messages: [{ role: 'user', content: 'two answers' }], n: 2 }).catch((e) => e);
      expect(refused.status).to.equal(400);
      expect(refused.error.code).to.equal('unsupported_parameter');
      expect(upstream.requests.length).to.equal(seen);
      const text = await eventually(async () => {
        const scraped = await (await fetch(`${claude.url}/metrics`)).text();
        return sample(scraped, 'gateway_requests_total', { endpoint: 'chat', model: 'claude-only', status: '400' }) === 1 ? scraped : undefined;
      });
      // it was counted `failed`: alerts on a deployment's failed attempts fired for a client's bad requests
      expect(text).to.not.match(/^gateway_upstream_attempts_total\{/m);
      expect(sample(text, 'gateway_deployment_healthy', { deployment: 'claude/claude-sonnet-4-5' })).to.equal(1);
    } finally {
      await claude.close();
    }
  });

  it('counts the tool calls of two organisations\' servers of the same name apart, by the organisation that owns each', async () => {
    const theirs = await FakeMcpServer.start({ tools: { search: { handler: () => ({ content: [{ type: 'text', text: 'no' }], isError: true }) } } });
    const OTHER_KEY = 'sk-metrics-beta-CANARY-1707';
    const two = await testConfig()
      .withOrg('acme')
      .withOrg('beta')
      .withKey(KEY, { id: 'acme-bot' })
      .withKey(OTHER_KEY, { id: 'beta-bot', org: 'beta' })
      .withMcpServer('docs', docs.url, { org: 'acme' })
      .withMcpServer('docs', theirs.url, { org: 'beta' })
      .with({ metrics: { public: true }, mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
    try {
      const call = (key: string) =>
        fetch(`${two.url}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': `Bearer ${key}` },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search', arguments: { q: 'x' } } }),
        }).then((r) => r.text());
      expect(await call(KEY)).to.include('found');
      expect(await call(OTHER_KEY)).to.include('"isError":true');
      const text = await eventually(async () => {
        const scraped = await (await fetch(`${two.url}/metrics`)).text();
        return sample(scraped, 'gateway_mcp_tool_calls_total', { server: 'docs', tool: 'search', status: 'tool_error' }) === 1 ? scraped : undefined;
      });
      // one series held both: beta's failing server showed as acme's "docs" too
      expect(sample(text, 'gateway_mcp_tool_calls_total', { server: 'docs', tool: 'search', status: 'ok', org: 'acme' })).to.equal(1);
      expect(sample(text, 'gateway_mcp_tool_calls_total', { server: 'docs', tool: 'search', status: 'tool_error', org: 'beta' })).to.equal(1);
      expect(sample(text, 'gateway_mcp_tool_calls_total', { server: 'docs', tool: 'search', status: 'ok', org: 'beta' })).to.equal(undefined);
    } finally {
      await two.close();
      await theirs.close();
    }
  });

  it('counts a tool call the client gave up on apart from the calls that failed', async () => {
    const calls = async () => {
      const text = await scrape();
      const of = (status: string) => sample(text, 'gateway_mcp_tool_calls_total', { server: 'docs', tool: 'search', status }) ?? 0;
      return { error: of('error'), clientAbort: of('client_abort') };
    };
    const before = await calls();
    const seen = docs.requestsFor('tools/call').length;
    docs.holdRpc = 'tools/call';
    try {
      const abort = new AbortController();
      const answer = fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': `Bearer ${KEY}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'docs-search', arguments: { q: 'slow' } } }),
        signal: abort.signal,
      }).catch((e) => e);
      // the call is under way at the upstream when the client hangs up
      await eventually(() => docs.requestsFor('tools/call').length > seen);
      abort.abort();
      expect(await answer).to.be.instanceOf(Error);
      await eventually(async () => {
        const last = (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0];
        return last?.model?.startsWith('MCP: ') && last.status === 499;
      });
    } finally {
      docs.releaseHeld();
    }
    // the server did not fail: alerts on failed tool calls fired whenever a user pressed stop
    const after = await calls();
    expect({ error: after.error - before.error, clientAbort: after.clientAbort - before.clientAbort }).to.deep.equal({ error: 0, clientAbort: 1 });
  });

  it('counts the model list and the management API refused for a missing or unknown key, as a chat one is', async () => {
    const stranger = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-nobody-knows-this', maxRetries: 0 });
    expect((await stranger.models.list().catch((e) => e)).status).to.equal(401);
    expect((await stranger.models.retrieve('gpt-test').catch((e) => e)).status).to.equal(401);
    expect((await stranger.models.retrieve('no-such-model').catch((e) => e)).status).to.equal(401);
    expect((await fetch(`${gw.url}/admin/v1/keys`)).status).to.equal(401);
    // a body the management API cannot read still waits behind the key, and that 401 counts too
    const unread = await fetch(`${gw.url}/admin/v1/keys`, { method: 'POST', headers: { authorization: 'Bearer sk-nobody-knows-this', 'content-type': 'application/json' }, body: '{"org": ' });
    expect(unread.status).to.equal(401);

    const text = await scrape();
    expect(sample(text, 'gateway_requests_total', { endpoint: 'models', model: '', status: '401' })).to.equal(1);
    expect(sample(text, 'gateway_requests_total', { endpoint: 'models', model: 'gpt-test', status: '401' })).to.equal(1);
    expect(sample(text, 'gateway_requests_total', { endpoint: 'models', model: 'other', status: '401' })).to.equal(1);
    expect(sample(text, 'gateway_requests_total', { endpoint: 'admin', model: '', status: '401' })).to.equal(2);
    expect(sample(text, 'gateway_request_duration_seconds_count', { endpoint: 'models' })).to.equal(3);
    expect(sample(text, 'gateway_request_duration_seconds_count', { endpoint: 'admin' })).to.equal(2);
    expect(text).to.not.include('no-such-model');
  });

  it('counts and logs the management API refused to a member key (403 not_admin), as a chat refusal is', async () => {
    const refused = async () => sample(await scrape(), 'gateway_requests_total', { endpoint: 'admin', model: '', status: '403' }) ?? 0;
    const before = await refused();
    const get = await fetch(`${gw.url}/admin/v1/keys`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(get.status).to.equal(403);
    expect(((await get.json()) as { error: { code: string } }).error.code).to.equal('not_admin');
    // a body the management API cannot read waits behind the key: the same refusal
    const unread = await fetch(`${gw.url}/admin/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: '{"org": ' });
    expect(unread.status).to.equal(403);
    expect(((await unread.json()) as { error: { code: string } }).error.code).to.equal('not_admin');
    expect((await refused()) - before).to.equal(2);
    const ids = [get.headers.get('x-gateway-request-id'), unread.headers.get('x-gateway-request-id')];
    const lines = await eventually(() => {
      const found = gw.logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request' && ids.includes(l.requestId as string));
      return found.length === 2 ? found : undefined;
    });
    for (const line of lines) expect(line).to.include({ keyId: 'metered', org: 'acme', endpoint: 'admin', status: 403, errorCode: 'not_admin', outcome: 'error', cost: 0 });
  });

  it('counts the model list refused with a body it cannot read, as without one', async () => {
    const refused = async () => {
      const text = await scrape();
      const of = (model: string, status: string) => sample(text, 'gateway_requests_total', { endpoint: 'models', model, status }) ?? 0;
      return { list: of('', '401'), model: of('gpt-test', '401'), admin: of('', '403') };
    };
    const before = await refused();
    // a GET with a body (undici sends one; fetch will not): the body is read, and refused, before the route
    const get = (path: string, key: string) => request(`${gw.url}${path}`, { method: 'GET', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"broken": ' });
    const stranger = await get('/v1/models', 'sk-nobody-knows-this');
    expect(stranger.statusCode).to.equal(401);
    await stranger.body.dump();
    const one = await get('/v1/models/gpt-test', 'sk-nobody-knows-this');
    expect(one.statusCode).to.equal(401);
    await one.body.dump();
    const admin = await get('/v1/models', ADMIN);
    expect(admin.statusCode).to.equal(403);
    expect(((await admin.body.json()) as { error: { code: string } }).error.code).to.equal('admin_key_not_allowed');
    const after = await refused();
    // answered beside the route, these were in no count: a flood of bad keys with a body went unseen
    expect({ list: after.list - before.list, model: after.model - before.model, admin: after.admin - before.admin }).to.deep.equal({ list: 1, model: 1, admin: 1 });
  });

  it('counts the model list refused to the admin key (403), as a chat one is', async () => {
    const counts = async () => {
      const text = await scrape();
      return { models: sample(text, 'gateway_requests_total', { endpoint: 'models', model: '', status: '403' }) ?? 0, chat: sample(text, 'gateway_requests_total', { endpoint: 'chat', model: 'gpt-test', status: '403' }) ?? 0 };
    };
    const before = await counts();
    const admin = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: ADMIN, maxRetries: 0 });
    const chat = await admin.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(chat.status).to.equal(403);
    const list = await admin.models.list().catch((e) => e);
    expect(list.status).to.equal(403);
    expect(list.error.code).to.equal('admin_key_not_allowed');
    const after = await counts();
    expect({ models: after.models - before.models, chat: after.chat - before.chat }).to.deep.equal({ models: 1, chat: 1 });
  });

  it('counts /mcp refused for a missing or unknown key, as a chat one is', async () => {
    const counts = async () => {
      const text = await scrape();
      return { requests: sample(text, 'gateway_requests_total', { endpoint: 'mcp', model: '', status: '401' }) ?? 0, timed: sample(text, 'gateway_request_duration_seconds_count', { endpoint: 'mcp' }) ?? 0 };
    };
    const before = await counts();
    const post = (headers: Record<string, string>, body: string) =>
      fetch(`${gw.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body });
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const none = await post({}, list);
    expect(none.status).to.equal(401);
    expect(((await none.json()) as { error: { code: number } }).error.code).to.equal(-32001);
    expect((await post({ 'x-gateway-api-key': 'Bearer sk-nobody-knows-this' }, list)).status).to.equal(401);
    expect((await post({ authorization: 'Bearer sk-nobody-knows-this' }, list)).status).to.equal(401);
    // a body /mcp cannot read still waits behind the key, and that 401 counts too
    expect((await post({ authorization: 'Bearer sk-nobody-knows-this' }, '{"jsonrpc": ')).status).to.equal(401);

    const after = await counts();
    expect(after.requests - before.requests).to.equal(4);
    expect(after.timed - before.timed).to.equal(4);
    expect(await scrape()).to.not.include('sk-nobody-knows-this');
  });

  it('counts and logs a body /mcp cannot read from a valid key, as a chat one is', async () => {
    const refused = async () => {
      const text = await scrape();
      return { bad: sample(text, 'gateway_requests_total', { endpoint: 'mcp', model: '', status: '400' }) ?? 0, type: sample(text, 'gateway_requests_total', { endpoint: 'mcp', model: '', status: '415' }) ?? 0 };
    };
    const before = await refused();
    const post = (type: string, body: string) => fetch(`${gw.url}/mcp`, { method: 'POST', headers: { 'content-type': type, accept: 'application/json, text/event-stream', 'x-gateway-api-key': `Bearer ${KEY}` }, body });
    const broken = await post('application/json', '{"jsonrpc": ');
    expect(broken.status).to.equal(400);
    expect(((await broken.json()) as { error: { code: number } }).error.code).to.equal(-32700);
    const form = await post('application/x-www-form-urlencoded', 'a=1');
    expect(form.status).to.equal(415);
    await form.text();
    const after = await refused();
    expect({ bad: after.bad - before.bad, type: after.type - before.type }).to.deep.equal({ bad: 1, type: 1 });
    const ids = [broken.headers.get('x-gateway-request-id'), form.headers.get('x-gateway-request-id')];
    const lines = await eventually(() => {
      const found = gw.logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request' && ids.includes(l.requestId as string));
      return found.length === 2 ? found : undefined;
    });
    expect(lines.map((l) => [l.keyId, l.endpoint, l.status])).to.deep.equal([['metered', 'mcp', 400], ['metered', 'mcp', 415]]);
  });

  it('counts and logs a /mcp request refused for how it is put (an Accept it cannot answer, no body, an empty batch)', async () => {
    const refused = async () => {
      const text = await scrape();
      return { bad: sample(text, 'gateway_requests_total', { endpoint: 'mcp', model: '', status: '400' }) ?? 0, accept: sample(text, 'gateway_requests_total', { endpoint: 'mcp', model: '', status: '406' }) ?? 0 };
    };
    const before = await refused();
    const post = (accept: string, body: string) => fetch(`${gw.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept, 'x-gateway-api-key': `Bearer ${KEY}` }, body });
    const message = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const html = await post('text/html', message);
    expect(html.status).to.equal(406);
    await html.text();
    const empty = await post('application/json, text/event-stream', '');
    expect(empty.status).to.equal(400);
    expect(((await empty.json()) as { error: { code: number } }).error.code).to.equal(-32700);
    const batch = await post('application/json, text/event-stream', '[]');
    expect(batch.status).to.equal(400);
    expect(((await batch.json()) as { error: { code: number } }).error.code).to.equal(-32600);
    const after = await refused();
    expect({ bad: after.bad - before.bad, accept: after.accept - before.accept }).to.deep.equal({ bad: 2, accept: 1 });
    const ids = [html, empty, batch].map((r) => r.headers.get('x-gateway-request-id'));
    const lines = await eventually(() => {
      const found = gw.logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request' && ids.includes(l.requestId as string));
      return found.length === 3 ? found : undefined;
    });
    expect(lines.map((l) => [l.keyId, l.endpoint, l.status, l.errorCode])).to.deep.equal([
      ['metered', 'mcp', 406, 'not_acceptable'],
      ['metered', 'mcp', 400, 'invalid_json'],
      ['metered', 'mcp', 400, 'invalid_request'],
    ]);
  });

  it('counts a body refused on the Responses and images endpoints, as a chat one is (with or without a valid key)', async () => {
    const counts = async () => {
      const text = await scrape();
      // no model was read: the label is "other", as for a chat body that could not be read
      const of = (endpoint: string, status: string) => sample(text, 'gateway_requests_total', { endpoint, model: 'other', status }) ?? 0;
      return { responses401: of('responses', '401'), responses415: of('responses', '415'), images401: of('images', '401'), images400: of('images', '400'), chat415: of('chat', '415') };
    };
    const before = await counts();
    const post = (path: string, key: string, type: string, body: string) =>
      fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': type }, body });
    // a body the endpoint cannot read waits behind the key: the stranger gets the 401, counted
    expect((await post('/v1/responses', 'sk-nobody-knows-this', 'text/plain', 'hello')).status).to.equal(401);
    expect((await post('/v1/images/generations', 'sk-nobody-knows-this', 'application/json', '{"prompt": ')).status).to.equal(401);
    // a caller with a valid key gets the refusal, counted as chat counts its own
    expect((await post('/v1/chat/completions', KEY, 'text/plain', 'hello')).status).to.equal(415);
    const unsupported = await post('/v1/responses', KEY, 'text/plain', 'hello');
    expect(unsupported.status).to.equal(415);
    const broken = await post('/v1/images/generations', KEY, 'application/json', '{"prompt": ');
    expect(broken.status).to.equal(400);
    // and each has its log entry, under the request id it was answered with
    for (const [res, endpoint] of [[unsupported, 'responses'], [broken, 'images']] as const) {
      const requestId = res.headers.get('x-gateway-request-id');
      expect(requestId).to.be.a('string');
      await eventually(async () => (await gw.gateway.services.requestLog.query({ limit: 5 })).data.some((e) => e.requestId === requestId && e.endpoint === endpoint && e.status === res.status && e.keyId === 'metered'));
    }

    const after = await counts();
    expect({
      responses401: after.responses401 - before.responses401,
      responses415: after.responses415 - before.responses415,
      images401: after.images401 - before.images401,
      images400: after.images400 - before.images400,
      chat415: after.chat415 - before.chat415,
    }).to.deep.equal({ responses401: 1, responses415: 1, images401: 1, images400: 1, chat415: 1 });
    expect(await scrape()).to.not.include('sk-nobody-knows-this');
  });

  it('counts the time to the first token of a stream', async () => {
    upstream.script = { kind: 'sse', events: [{ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'upstream-model', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: 'stop' }] }] };
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'stream' }] });
    for await (const _ of stream);
    const text = await scrape();
    expect(sample(text, 'gateway_time_to_first_token_seconds_count', { model: 'gpt-test' })).to.equal(1);
  });

  it('times the first token of a Responses stream once, however many model rounds its tool loop runs', async () => {
    const echo = await testConfig()
      .withKey(KEY)
      .withProvider({ id: 'local', type: 'echo' })
      .withModel('echo')
      .withMcpServer('docs', docs.url)
      .with({ metrics: { public: true }, mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
    try {
      const client = new OpenAI({ baseURL: `${echo.url}/v1`, apiKey: KEY, maxRetries: 0 });
      // two streamed model rounds: the tool call, then the answer
      const stream = await client.responses.create({
        model: 'echo',
        stream: true,
        input: 'call docs-search {"q": "x"}',
        tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }],
      });
      let text = '';
      for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
      expect(text).to.equal('found');
      // the request is counted when it settles, which may be just after the client has its last event
      const metrics = await eventually(async () => {
        const text = await (await fetch(`${echo.url}/metrics`)).text();
        return sample(text, 'gateway_requests_total', { endpoint: 'responses', model: 'echo', status: '200' }) === 1 ? text : undefined;
      });
      expect(sample(metrics, 'gateway_time_to_first_token_seconds_count', { model: 'echo' })).to.equal(1);
    } finally {
      await echo.close();
    }
  });

  it('counts a Responses request once, not once more for each tool call its loop runs', async () => {
    const echo = await testConfig()
      .withKey(KEY)
      .withProvider({ id: 'local', type: 'echo' })
      .withModel('echo')
      .withMcpServer('docs', docs.url)
      .with({ metrics: { public: true }, mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
    try {
      const client = new OpenAI({ baseURL: `${echo.url}/v1`, apiKey: KEY, maxRetries: 0 });
      const { data: response, response: raw } = await client.responses
        .create({
          model: 'echo',
          input: 'call docs-search {"q": "x"}',
          tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }],
        })
        .withResponse();
      expect(response.output.filter((item) => item.type === 'mcp_call')).to.have.length(1);
      expect(response.output_text).to.equal('found');
      const requestId = raw.headers.get('x-gateway-request-id');
      await eventually(async () => (await echo.gateway.services.requestLog.query({ limit: 5 })).data.some((e) => e.requestId === requestId));
      const text = await (await fetch(`${echo.url}/metrics`)).text();
      // one client request: its tool call is a tool call (gateway_mcp_tool_calls_total), not a second request
      expect(sample(text, 'gateway_requests_total', { endpoint: 'responses', model: 'echo', status: '200' })).to.equal(1);
      expect(sample(text, 'gateway_requests_total', { endpoint: 'responses', model: '' })).to.equal(undefined);
      expect(sample(text, 'gateway_request_duration_seconds_count', { endpoint: 'responses' })).to.equal(1);
      expect(sample(text, 'gateway_mcp_tool_calls_total', { server: 'docs', tool: 'search', status: 'ok' })).to.equal(1);
    } finally {
      await echo.close();
    }
  });

  it('counts the cached tokens of a Responses request as it does those of a chat request', async () => {
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 6 } };
    upstream.script = { kind: 'json', body: chatCompletion('ok', usage) };
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const cached = async () => sample(await scrape(), 'gateway_tokens_total', { model: 'gpt-test', type: 'cached' }) ?? 0;
    // counted when the log entry is written, which may be just after the client has its answer
    const logged = (requestId: string | null) => eventually(async () => (await gw.gateway.services.requestLog.query({ limit: 5 })).data.some((e) => e.requestId === requestId));
    const before = await cached();
    const chat = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'cached chat' }] }).withResponse();
    await logged(chat.response.headers.get('x-gateway-request-id'));
    expect(await cached()).to.equal(before + 6);
    const { data: response, response: raw } = await client.responses.create({ model: 'gpt-test', input: 'cached response' }).withResponse();
    expect(response.usage?.input_tokens_details.cached_tokens).to.equal(6);
    await logged(raw.headers.get('x-gateway-request-id'));
    expect(await cached()).to.equal(before + 12);
  });

  it('writes the log entry and access line of an answer whose upstream reported a count as 1e999 (Infinity once parsed), and counts its real counts', async () => {
    const counts = async () => {
      const text = await scrape();
      return { input: sample(text, 'gateway_tokens_total', { model: 'gpt-test', type: 'input' }) ?? 0, cached: sample(text, 'gateway_tokens_total', { model: 'gpt-test', type: 'cached' }) ?? 0 };
    };
    const before = await counts();
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 4242 } };
    upstream.script = { kind: 'raw', status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(chatCompletion('ok', usage)).replace('4242', '1e999') };
    try {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
      const { data, response } = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'infinite cache' }] }).withResponse();
      expect(data.choices[0].message.content).to.equal('ok');
      const requestId = response.headers.get('x-gateway-request-id')!;
      // the metrics refused Infinity and the spend stage's settle failed before the entry was written:
      // the request was in neither the log nor the spend
      const entry = await eventually(async () => (await gw.gateway.services.requestLog.query({ limit: 5 })).data.find((e) => e.requestId === requestId));
      expect(entry).to.deep.include({ promptTokens: 10, completionTokens: 5, status: 200 });
      expect(entry.cost).to.be.above(0);
      await eventually(() => gw.logLines.some((l) => l.includes(requestId) && l.includes('"msg":"request"')));
      expect(gw.logLines.filter((l) => l.includes('stage settle failed'))).to.deep.equal([]);
    } finally {
      upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
    }
    const after = await counts();
    expect({ input: after.input - before.input, cached: after.cached - before.cached }).to.deep.equal({ input: 10, cached: 0 });
  });

  it('counts the tokens and cost of a gateway_proxy tool call under the model it ran, not under an empty model', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('second opinion', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
    const counts = async () => {
      const text = await scrape();
      const of = (name: string, labels: Record<string, string>) => sample(text, name, labels) ?? 0;
      return {
        input: of('gateway_tokens_total', { model: 'gpt-test', type: 'input' }),
        output: of('gateway_tokens_total', { model: 'gpt-test', type: 'output' }),
        cost: of('gateway_cost_usd_total', { model: 'gpt-test' }),
        unnamedInput: of('gateway_tokens_total', { model: '', type: 'input' }),
        unnamedCost: of('gateway_cost_usd_total', { model: '' }),
        mcpRequests: of('gateway_requests_total', { endpoint: 'mcp', model: '', status: '200' }),
      };
    };
    const before = await counts();
    const tool = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': `Bearer ${KEY}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'gateway_proxy-gpt_test', arguments: { prompt: 'what do you think?' } } }),
    });
    expect(await tool.text()).to.include('second opinion');
    await eventually(async () => (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0]?.model === 'MCP: gateway_proxy-gpt_test');
    const after = await counts();
    // (10 x 1000 + 5 x 2000) / 1e6: a model call's spend reads under its model on a dashboard
    expect({
      input: after.input - before.input,
      output: after.output - before.output,
      cost: Number((after.cost - before.cost).toFixed(9)),
      unnamedInput: after.unnamedInput - before.unnamedInput,
      unnamedCost: after.unnamedCost - before.unnamedCost,
      mcpRequests: after.mcpRequests - before.mcpRequests,
    }).to.deep.equal({ input: 10, output: 5, cost: 0.02, unnamedInput: 0, unnamedCost: 0, mcpRequests: 1 });
  });

  it('lets the admin key and the metrics token scrape, and refuses anyone else in the OpenAI error shape', async () => {
    expect(sample(await scrape(`Bearer ${TOKEN}`), 'gateway_limit_refusals_total', { reason: 'budget' })).to.equal(1);
    const none = await fetch(`${gw.url}/metrics`);
    expect(none.status).to.equal(401);
    expect(((await none.json()) as { error: { type: string } }).error.type).to.equal('authentication_error');
    const wrong = await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Bearer not-the-token' } });
    expect(wrong.status).to.equal(401);
    // a client key is a valid credential, but not one that reads metrics
    const member = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(member.status).to.equal(403);
    expect(((await member.json()) as { error: { code: string } }).error.code).to.equal('not_metrics_reader');
  });

  it('is open with metrics.public, and answers 404 with metrics.enabled false', async () => {
    const open = await testConfig().withKey(KEY).with({ metrics: { public: true } }).start();
    const off = await testConfig().withKey(KEY).with({ adminKey: ADMIN, metrics: { enabled: false } }).start();
    try {
      const res = await fetch(`${open.url}/metrics`);
      expect(res.status).to.equal(200);
      expect(await res.text()).to.include('# TYPE gateway_requests_total counter');
      const disabled = await fetch(`${off.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(disabled.status).to.equal(404);
      expect(((await disabled.json()) as { error: { code: string } }).error.code).to.equal('metrics_disabled');
    } finally {
      await open.close();
      await off.close();
    }
  });

  it('refuses an unknown metrics field at load, naming its path', async () => {
    const err = await testConfig().with({ metrics: { tokn: 'x' } as never }).start().catch((e: Error) => e);
    expect((err as Error).message).to.include('metrics');
    expect((err as Error).message).to.include('tokn');
  });
});
