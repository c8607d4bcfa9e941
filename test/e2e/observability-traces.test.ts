/**
 * OpenTelemetry traces (issue 17 point 3): exported over OTLP/HTTP to a loopback receiver, protobuf and
 * JSON; a span per request with a child per stage, per upstream attempt and per MCP upstream call; GenAI
 * attributes and the cost; the client's traceparent continued, and propagated to the model upstream and
 * to the MCP upstream.
 */
import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import OpenAI from 'openai';
import { FakeOpenAI, chatCompletion } from '../support/fake-openai';
import { FakeMcpServer } from '../support/fake-mcp-server';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const KEY = 'sk-traces-CANARY-1701';
const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';
const STAGES = ['auth', 'scope', 'route', 'pre-guardrail', 'call', 'post-guardrail', 'spend'].map((s) => `stage ${s}`);

/** `00-<trace>-<span>-01` -> its parts */
function parseTraceparent(value: unknown): { traceId: string; spanId: string } {
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(String(value));
  if (!m) throw new Error(`not a traceparent: ${String(value)}`);
  return { traceId: m[1], spanId: m[2] };
}

describe('OpenTelemetry traces over OTLP/HTTP', function () {
  this.timeout(30_000);
  let upstream: FakeOpenAI;
  let docs: FakeMcpServer;
  let receiver: OtlpReceiver;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    docs = await FakeMcpServer.start({ tools: { search: { handler: () => ({ content: [{ type: 'text', text: 'found it' }] }) } } });
    receiver = await OtlpReceiver.start();
  });
  after(async () => {
    await upstream.stop();
    await docs.close();
    await receiver.stop();
  });
  beforeEach(() => {
    receiver.spans.length = 0;
    receiver.contentTypes.length = 0;
    upstream.requests.length = 0;
    docs.requests.length = 0;
  });

  function start(env: Record<string, string>): Promise<TestGateway> {
    return testConfig()
      .withKey(KEY, { id: 'tracer' })
      .withOpenAI('oai', upstream, 'sk-provider-traces-CANARY')
      .withModel('gpt-test', { model: 'upstream-model', price: { inputPerMTok: 1, outputPerMTok: 2 } })
      .withProvider({ id: 'local', type: 'echo' })
      .withModel('echo')
      .withMcpServer('docs', docs.url)
      .with({ mcp: { healthCheckIntervalSeconds: 0 } })
      .start({ env: { ...process.env, ...env } });
  }

  function expectStageChildren(root: ReceivedSpan): ReceivedSpan {
    const names = receiver.childrenOf(root).map((s) => s.name);
    expect(names).to.include.members(STAGES);
    return receiver.childrenOf(root).find((s) => s.name === 'stage call')!;
  }

  it('continues the client traceparent through a chat request: stages, the upstream attempt, GenAI attributes (http/protobuf)', async () => {
    const gw = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    try {
      upstream.script = { kind: 'json', body: chatCompletion('traced', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, defaultHeaders: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` } });
      await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
    } finally {
      await gw.close(); // flushes the batch
    }
    expect(receiver.contentTypes[0]).to.equal('application/x-protobuf');
    const root = await receiver.waitFor((s) => s.name === 'chat gpt-test');
    expect(root).to.deep.include({ traceId: CLIENT_TRACE, parentSpanId: CLIENT_SPAN, kind: 2, service: 'model-gateway' });
    expect(root.attributes).to.deep.include({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-test',
      'gen_ai.response.model': 'upstream-model',
      'gen_ai.usage.input_tokens': 10,
      'gen_ai.usage.output_tokens': 5,
      'gateway.cost_usd': 0.00002,
      'gateway.deployment.id': 'oai/upstream-model',
      'http.response.status_code': 200,
    });
    const call = expectStageChildren(root);
    const [attempt] = receiver.childrenOf(call);
    expect(attempt).to.deep.include({ name: 'chat upstream-model', kind: 3 });
    expect(attempt.attributes).to.deep.include({ 'gen_ai.request.model': 'upstream-model', 'gateway.deployment.id': 'oai/upstream-model', 'http.response.status_code': 200 });
    // the upstream saw the same trace, with the attempt as its parent
    expect(parseTraceparent(upstream.requests[0].headers.traceparent)).to.deep.equal({ traceId: CLIENT_TRACE, spanId: attempt.spanId });
  });

  it('names a Messages request\'s upstream attempt `chat <upstream model>` with its GenAI operation, as a chat request\'s', async () => {
    const gw = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    try {
      upstream.script = { kind: 'json', body: chatCompletion('traced', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
      const client = new Anthropic({ baseURL: `${gw.url}/native`, apiKey: KEY, maxRetries: 0 });
      const message = await client.messages.create({ model: 'gpt-test', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
      expect(message.content[0]).to.deep.include({ type: 'text', text: 'traced' });
    } finally {
      await gw.close();
    }
    const root = await receiver.waitFor((s) => s.name === 'chat gpt-test');
    expect(root.attributes).to.deep.include({ 'gen_ai.operation.name': 'chat', 'gateway.endpoint': 'messages' });
    const [attempt] = receiver.childrenOf(expectStageChildren(root));
    // it was `messages upstream-model`, with no gen_ai.operation.name: GenAI views did not take it for a model call
    expect(attempt).to.deep.include({ name: 'chat upstream-model', kind: 3 });
    expect(attempt.attributes).to.deep.include({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'upstream-model', 'gateway.deployment.id': 'oai/upstream-model' });
  });

  it('traces an MCP tools/call and sends its traceparent to the MCP upstream (http/json)', async () => {
    const gw = await start({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'gw-under-test' });
    try {
      const res = await fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': `Bearer ${KEY}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'docs-search', arguments: { q: 'x' } } }),
      });
      expect(res.status).to.equal(200);
      expect(await res.text()).to.include('found it');
    } finally {
      await gw.close();
    }
    expect(receiver.contentTypes[0]).to.match(/^application\/json/);
    const root = await receiver.waitFor((s) => s.name === 'execute_tool docs-search');
    expect(root.service).to.equal('gw-under-test');
    expect(root.parentSpanId).to.equal('');
    expect(root.attributes).to.deep.include({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'docs-search', 'mcp.method.name': 'tools/call', 'gateway.mcp.server': 'docs' });
    const call = expectStageChildren(root);
    const [upstreamCall] = receiver.childrenOf(call);
    expect(upstreamCall).to.deep.include({ name: 'tools/call search', kind: 3 });
    expect(upstreamCall.attributes).to.deep.include({ 'gen_ai.tool.name': 'search', 'gateway.mcp.server': 'docs' });
    const toolPost = docs.requests.find((r) => r.rpcMethods.includes('tools/call'))!;
    expect(parseTraceparent(toolPost.headers.traceparent)).to.deep.equal({ traceId: root.traceId, spanId: upstreamCall.spanId });
  });

  it('makes a /mcp tool call a server span that continues the client traceparent, as a chat request is', async () => {
    const gw = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    try {
      const res = await fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': `Bearer ${KEY}`, traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'docs-search', arguments: { q: 'x' } } }),
      });
      expect(await res.text()).to.include('found it');
    } finally {
      await gw.close();
    }
    const root = await receiver.waitFor((s) => s.name === 'execute_tool docs-search');
    // a collector's span metrics and service graph count a service's requests by its server spans
    expect(root).to.deep.include({ traceId: CLIENT_TRACE, parentSpanId: CLIENT_SPAN, kind: 2 });
  });

  it('nests a Responses request: its model rounds and tool calls are child exchanges under its call stage', async () => {
    const gw = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/` });
    try {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY });
      const response = await client.responses.create({
        model: 'echo',
        input: 'call docs-search {"q": "falcon"}',
        tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }],
      });
      expect(response.output_text).to.equal('found it');
    } finally {
      await gw.close();
    }
    const root = await receiver.waitFor((s) => s.name === 'chat echo' && s.parentSpanId === '');
    const call = expectStageChildren(root);
    const children = receiver.childrenOf(call);
    // two model rounds (the tool call, then the answer) and the tool call between them
    expect(children.filter((s) => s.name === 'chat echo')).to.have.length(2);
    const tool = children.find((s) => s.name === 'execute_tool docs-search')!;
    expect(tool, children.map((s) => s.name).join(', ')).to.not.equal(undefined);
    expect(tool.kind).to.equal(1);
    const [upstreamCall] = receiver.childrenOf(expectStageChildren(tool));
    expect(upstreamCall.attributes['gen_ai.tool.name']).to.equal('search');
    const toolPost = docs.requests.find((r) => r.rpcMethods.includes('tools/call'))!;
    expect(parseTraceparent(toolPost.headers.traceparent)).to.deep.equal({ traceId: root.traceId, spanId: upstreamCall.spanId });
  });

  it('names the deployment that served a Responses request on its span, as its log line and entry do', async () => {
    const gw = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    try {
      upstream.script = { kind: 'json', body: chatCompletion('answered', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY });
      expect((await client.responses.create({ model: 'gpt-test', input: 'hi' })).output_text).to.equal('answered');
    } finally {
      await gw.close();
    }
    const root = await receiver.waitFor((s) => s.name === 'chat gpt-test' && s.parentSpanId === '');
    expect(root.attributes).to.deep.include({ 'gateway.endpoint': 'responses', 'gen_ai.usage.input_tokens': 10, 'gateway.deployment.id': 'oai/upstream-model' });
  });

  it('keeps a client\'s unknown model or tool name out of the span name (low-cardinality), and cuts one of a megabyte to its first 1,024 characters in the attributes, as the log does', async () => {
    // every such 404 kept the whole name in its span until the batch went out: 2,048 queued spans could
    // hold gigabytes, and the batch was too big for a collector to take
    const huge = `probe-${'m'.repeat(1_000_000)}`;
    const cut = `${huge.slice(0, 1024)}…`;
    const gw = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    try {
      const chat = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: huge, messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(chat.status).to.equal(404);
      const tool = await fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': `Bearer ${KEY}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: huge, arguments: {} } }),
      });
      expect(tool.status).to.equal(200);
    } finally {
      await gw.close();
    }
    // the name was `chat <the client's name>`: each request with a name of its own made a span name of its own
    const chatRoot = await receiver.waitFor((s) => s.attributes['gen_ai.request.model'] === cut);
    expect(chatRoot.name).to.equal('chat');
    const toolRoot = await receiver.waitFor((s) => s.attributes['gen_ai.tool.name'] === cut);
    expect(toolRoot.name).to.equal('execute_tool');
  });

  it('leaves the status of a request answered 4xx unset (the client\'s fault) and marks one answered 5xx an error, as OpenTelemetry\'s HTTP server conventions say', async () => {
    const gw = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    try {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
      expect((await client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e)).status).to.equal(404);
      upstream.script = { kind: 'json', status: 500, body: { error: { message: 'upstream broke' } } };
      try {
        expect((await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e)).status).to.equal(502);
      } finally {
        upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }) };
      }
    } finally {
      await gw.close();
    }
    const refused = await receiver.waitFor((s) => s.attributes['gen_ai.request.model'] === 'no-such-model' && s.kind === 2);
    expect(refused.name).to.equal('chat');
    expect(refused).to.deep.include({ kind: 2, statusCode: 0 });
    expect(refused.attributes).to.deep.include({ 'http.response.status_code': 404 });
    const failed = await receiver.waitFor((s) => s.name === 'chat gpt-test');
    expect(failed).to.deep.include({ kind: 2, statusCode: 2 });
    expect(failed.attributes).to.deep.include({ 'http.response.status_code': 502 });
  });

  it('keeps a client\'s resource URI out of the span names (MCP conventions), and cuts one of a megabyte in the attributes of the request\'s span and of the upstream call\'s', async () => {
    const files = await FakeMcpServer.start({ resourceTemplates: [{ uriTemplate: 'files:///{name}.{ext}', name: 'File', read: () => 'contents' }] });
    const uri = `files:///${'a'.repeat(1_000_000)}.txt`;
    const gw = await testConfig()
      .withKey(KEY, { id: 'tracer' })
      .withMcpServer('files', files.url, { visibility: 'public' })
      .with({ mcp: { healthCheckIntervalSeconds: 0 } })
      .start({ env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } });
    try {
      const read = await fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': `Bearer ${KEY}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri } }),
      });
      expect(await read.text()).to.include('contents');
    } finally {
      await gw.close();
      await files.close();
    }
    const cut = `${uri.slice(0, 1024)}…`;
    const root = await receiver.waitFor((s) => s.attributes['mcp.resource.uri'] === cut && s.kind !== 3);
    expect(root.name).to.equal('resources/read');
    const upstreamCall = receiver.childrenOf(expectStageChildren(root))[0];
    expect(upstreamCall.kind).to.equal(3);
    expect(upstreamCall.name).to.equal('resources/read');
    expect(upstreamCall.attributes['mcp.resource.uri']).to.equal(cut);
  });

  it('names the prompt of a prompts/get with gen_ai.prompt.name, not as a tool, on its span and on the upstream call\'s', async () => {
    const notes = await FakeMcpServer.start({ prompts: { summarize: { text: () => 'Summarize the notes.' } } });
    const gw = await testConfig()
      .withKey(KEY, { id: 'tracer' })
      .withMcpServer('notes', notes.url, { visibility: 'public' })
      .with({ mcp: { healthCheckIntervalSeconds: 0 } })
      .start({ env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } });
    try {
      const res = await fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': `Bearer ${KEY}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name: 'summarize' } }),
      });
      expect(await res.text()).to.include('Summarize the notes.');
    } finally {
      await gw.close();
      await notes.close();
    }
    const root = await receiver.waitFor((s) => s.name === 'prompts/get summarize' && s.kind === 2);
    // it was gen_ai.tool.name: a trace backend's tool views counted every prompt fetched as a tool call
    expect(root.attributes).to.deep.include({ 'mcp.method.name': 'prompts/get', 'gen_ai.prompt.name': 'summarize' });
    expect(root.attributes).to.not.have.property('gen_ai.tool.name');
    const [upstreamCall] = receiver.childrenOf(expectStageChildren(root));
    expect(upstreamCall).to.deep.include({ name: 'prompts/get summarize', kind: 3 });
    expect(upstreamCall.attributes).to.deep.include({ 'gen_ai.prompt.name': 'summarize', 'gateway.mcp.server': 'notes' });
    expect(upstreamCall.attributes).to.not.have.property('gen_ai.tool.name');
  });

  it('exports nothing and sends no traceparent upstream when no OTLP endpoint is set', async () => {
    const env = { ...process.env };
    delete env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
    const gw = await testConfig().withKey(KEY).withOpenAI('oai', upstream, 'sk-provider').withModel('gpt-test').start({ env });
    try {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, defaultHeaders: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` } });
      await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
    } finally {
      await gw.close();
    }
    expect(upstream.requests).to.have.length(1);
    expect(upstream.requests[0].headers.traceparent).to.equal(undefined);
    expect(receiver.spans).to.have.length(0);
  });

  it('refuses an OTLP protocol it cannot speak, naming the variable', async () => {
    const err = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).catch((e: Error) => e);
    expect(err).to.be.instanceOf(Error);
    expect((err as Error).message).to.include('OTEL_EXPORTER_OTLP_PROTOCOL');
    expect((err as Error).message).to.include('http/protobuf or http/json');
  });

  it('refuses an OTLP endpoint without an http(s) scheme at start, naming the variable, rather than exporting to nowhere', async () => {
    // `collector:4318` parses as a URL of scheme "collector:": the gateway started, and no span ever left it
    const base = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318' }).catch((e: Error) => e);
    expect(base).to.be.instanceOf(Error);
    expect((base as Error).message).to.equal('OTEL_EXPORTER_OTLP_ENDPOINT: must be an http(s) URL');
    const traces = await start({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector:4318/v1/traces' }).catch((e: Error) => e);
    expect(traces).to.be.instanceOf(Error);
    expect((traces as Error).message).to.equal('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: must be an http(s) URL');
  });

  it('names OTEL_EXPORTER_OTLP_TRACES_PROTOCOL when that is the variable whose protocol it cannot speak', async () => {
    const err = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' }).catch((e: Error) => e);
    expect(err).to.be.instanceOf(Error);
    // it named OTEL_EXPORTER_OTLP_PROTOCOL, a variable the operator had not set
    expect((err as Error).message).to.match(/^OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc" is not supported/);
  });

  it('reads an empty OTEL_EXPORTER_OTLP_TRACES_PROTOCOL as unset, as the OpenTelemetry specification says: OTEL_EXPORTER_OTLP_PROTOCOL applies', async () => {
    // a deployment template that leaves the variable blank: the start was refused ("" is not supported)
    const gw = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: '', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    try {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
      await client.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'hi' }] });
    } finally {
      await gw.close();
    }
    await receiver.waitFor((s) => s.name === 'chat echo');
    expect(receiver.contentTypes[0]).to.match(/^application\/json/);
  });
});
