import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path, { join } from 'node:path';
import { expect } from 'chai';
import OpenAI from 'openai';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { FakeMcpServer } from '../support/fake-mcp-server';
import { FakeOpenAI, chatCompletion } from '../support/fake-openai';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { API_VERSION, FakeAzure } from '../providers/azure-openai/fake-azure-upstream';

/**
 * Canary values in every configured and registered credential. None of them is shaped like an API key,
 * so only scrubbing by value can catch them; the upstreams echo every request header they get back in
 * their error bodies, as a careless (or hostile) upstream does.
 */
const CANARY = {
  admin: 'canary.admin.0a1b2c',
  member: 'canary.member.3d4e5f',
  providerKey: 'canary.provider.6a7b8c',
  providerHeader: 'canary.prov-header.9d0e',
  mcpToken: 'canary.mcp-token.1f2a3b',
  mcpHeader: 'canary.mcp-header.4c5d',
  apiUser: 'canary.api-user.6e7f',
  apiPassword: 'canary.api-pass.8a9b',
  apiHeader: 'canary.api-header.0c1d',
};

const echoHeaders = (headers: Record<string, unknown>) => `upstream got ${JSON.stringify(headers)}`;

describe('configured and registered secrets are scrubbed from errors and logs', () => {
  let model: FakeOpenAI;
  let mcp: FakeMcpServer;
  let gw: TestGateway;
  const seen: string[] = [];

  before(async () => {
    model = await new FakeOpenAI().start();
    mcp = await FakeMcpServer.start({ tools: { lookup: { description: 'Look up' } } });
    gw = await testConfig()
      .withKey(CANARY.member, { id: 'member' })
      .withOpenAI('oai', model, CANARY.providerKey, { headers: { 'x-tenant': CANARY.providerHeader } })
      .withModel('m')
      .withMcpServer('cfg', mcp.url, { org: 'acme', auth: { type: 'bearer', token: CANARY.mcpToken }, staticHeaders: { 'x-cfg': CANARY.mcpHeader } })
      .with({ adminKey: CANARY.admin, mcp: { healthCheckIntervalSeconds: 0, discoveryTimeoutSeconds: 2 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await mcp.close();
    await model.stop();
  });

  async function send(path: string, key: string, body: unknown, headerName = 'authorization') {
    const res = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', [headerName]: headerName === 'x-api-key' ? key : `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    seen.push(text);
    return { status: res.status, text };
  }

  it('model upstream errors that echo the request headers (OpenAI and Anthropic shapes, JSON and stream)', async () => {
    const chat = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    for (const [status, expected] of [[400, 400], [500, 502], [401, 502]] as const) {
      model.script = (req) => ({ kind: 'json', status, body: { error: { message: echoHeaders(req.headers), type: 'invalid_request_error' } } });
      const res = await send('/v1/chat/completions', CANARY.member, chat);
      expect(res.status, res.text).to.equal(expected);
    }
    // the upstream did get the secrets, so an echo would have carried them
    expect(model.last.headers['x-tenant']).to.equal(CANARY.providerHeader);
    model.script = (req) => ({ kind: 'json', status: 400, body: { error: { message: echoHeaders(req.headers) } } });
    const stream = await send('/v1/chat/completions', CANARY.member, { ...chat, stream: true });
    expect(stream.status).to.equal(400);
    const messages = await send('/native/v1/messages', CANARY.member, { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, 'x-api-key');
    expect(messages.status).to.equal(400);
    expect(messages.text).to.include('upstream got');
    model.script = (req) => ({ kind: 'raw', status: 503, body: echoHeaders(req.headers) });
    expect((await send('/v1/chat/completions', CANARY.member, chat)).status).to.be.oneOf([502, 503]);
  });

  it('MCP upstream errors that echo the request headers, for a config server and a registered one', async () => {
    const registered = await fetch(`${gw.url}/admin/v1/mcp/servers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CANARY.admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'api', url: mcp.url, org: 'acme', auth: { type: 'basic', username: CANARY.apiUser, password: CANARY.apiPassword }, staticHeaders: { 'x-api': CANARY.apiHeader } }),
    });
    seen.push(await registered.text());
    expect(registered.status).to.equal(201);

    const rpc = (method: string, params?: unknown) => send('/mcp', CANARY.member, { jsonrpc: '2.0', id: 1, method, params }, 'x-gateway-api-key');
    const names = (JSON.parse((await rpc('tools/list')).text).result.tools as { name: string }[]).map((t) => t.name).filter((n) => n.endsWith('lookup'));
    expect(names).to.have.length(2);

    mcp.failWithStatus = 500;
    mcp.failBody = (headers) => echoHeaders(headers);
    for (const name of names) await rpc('tools/call', { name, arguments: {} });
    mcp.failWithStatus = 400;
    for (const name of names) await rpc('tools/call', { name, arguments: {} });
    const health = await fetch(`${gw.url}/admin/v1/mcp/servers/api/health`, { method: 'POST', headers: { authorization: `Bearer ${CANARY.admin}` } });
    seen.push(await health.text());
    mcp.failWithStatus = undefined;
    mcp.failBody = undefined;
    // the upstream got the registered credentials
    expect(JSON.stringify(mcp.requests.map((r) => r.headers))).to.include(CANARY.apiHeader);
  });

  it('an upstream error message of 300 KB of dotted words is scrubbed and answered, not held for minutes by the URL pattern', async () => {
    // every "a" after a dot could start a URL scheme: a pattern that rescans to the end from each one is
    // quadratic, and froze the event loop for every organisation
    const hostile = 'a.'.repeat(150_000);
    model.script = { kind: 'json', status: 400, body: { error: { message: `Unrecognized request argument supplied: ${hostile}see https://internal.example/x` } } };
    const res = await send('/v1/chat/completions', CANARY.member, { model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).to.equal(400);
    const message = JSON.parse(res.text).error.message as string;
    expect(message.startsWith('Unrecognized request argument supplied: a.a.a.')).to.equal(true);
    expect(message).to.have.length(1001);
  });

  it('an MCP upstream whose error body is 300 KB of dotted words gets its tool call answered', async () => {
    const rpc = (method: string, params?: unknown) => send('/mcp', CANARY.member, { jsonrpc: '2.0', id: 1, method, params }, 'x-gateway-api-key');
    const name = (JSON.parse((await rpc('tools/list')).text).result.tools as { name: string }[]).map((t) => t.name).find((n) => n.endsWith('lookup'))!;
    mcp.failWithStatus = 500;
    mcp.failBody = () => 'a.'.repeat(150_000);
    try {
      const res = await rpc('tools/call', { name, arguments: {} });
      expect(res.status).to.equal(200);
      expect(JSON.parse(res.text).error.data.code).to.be.a('string');
    } finally {
      mcp.failWithStatus = undefined;
      mcp.failBody = undefined;
    }
  });

  it('found no canary in any response, log line or request-log entry', async () => {
    const requestLog = await gw.gateway.services.requestLog.query({ limit: 100 });
    const everything = [...seen, JSON.stringify(requestLog), gw.logLines.join('')].join('\n');
    expect(everything).to.include('[redacted]'); // the echoes did come back, scrubbed
    for (const [name, value] of Object.entries(CANARY)) expect(everything, name).to.not.include(value);
  });
});

describe('a secret read with env() in a plugin\'s options is scrubbed like a provider key', () => {
  // not key-shaped: only scrubbing by value can catch it
  const MODERATION_KEY = 'canary.moderation-key.5e6f7a';
  let model: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    model = await new FakeOpenAI().start();
    model.script = { kind: 'json', body: chatCompletion('answered') };
    gw = await testConfig()
      .withKey('sk-member-plugin-secret', { id: 'member', guardrails: ['moderate'] })
      .withOpenAI('oai', model, 'sk-provider-plugin-secret')
      .withModel('m')
      .with({
        plugins: [path.join(__dirname, '..', 'guardrails', 'fixtures', 'keyed-guardrail.js')],
        guardrails: [{ id: 'moderate', engine: 'keyed-moderation', phase: 'pre', options: { apiKey: { $env: 'MODERATION_KEY' } } }],
      })
      .start({ env: { MODERATION_KEY } });
  });
  after(async () => {
    await gw.close();
    await model.stop();
  });

  it('keeps a guardrail plugin\'s key out of the block reason the client gets and out of its log lines', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-member-plugin-secret', maxRetries: 0 });
    const err = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    const apiError = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(apiError.code).to.equal('guardrail_blocked');
    expect(apiError.message).to.include('The moderation service refused the key [redacted].');
    expect(model.requests).to.have.length(0);
    // the plugin did log the key: the line is there, scrubbed
    const lines = gw.logLines.join('');
    expect(lines).to.include('moderation service refused key [redacted]');
    const requestLog = await gw.gateway.services.requestLog.query({ limit: 10 });
    expect([apiError.message, JSON.stringify(apiError.error), lines, JSON.stringify(requestLog)].join('\n')).to.not.include(MODERATION_KEY);
  });
});

describe('basic-auth credentials of MCP servers are scrubbed in the form they are sent in', () => {
  const CONFIG = { username: 'canary.cfg-user.2b3c', password: 'canary.cfg-pass.4d5e' };
  const REGISTERED = { username: 'canary.reg-user.6f7a', password: 'canary.reg-pass.8b9c' };
  // what goes on the wire, and what an upstream echoing our headers sends back
  const basic = (c: { username: string; password: string }) => Buffer.from(`${c.username}:${c.password}`).toString('base64');
  const ADMIN = 'canary.admin.basic.5a6b';
  const MEMBER = 'canary.member.basic.7c8d';
  let mcp: FakeMcpServer;
  let gw: TestGateway;
  const seen: string[] = [];

  before(async () => {
    mcp = await FakeMcpServer.start({
      tools: {
        lookup: {
          description: 'Look up',
          // a JSON-RPC error of the upstream's own words, which the member gets as the tool's error text
          handler: (_args, headers) => {
            throw new McpError(ErrorCode.InternalError, echoHeaders(headers));
          },
        },
      },
    });
    gw = await testConfig()
      .withKey(MEMBER, { id: 'member' })
      .withMcpServer('cfg', mcp.url, { org: 'acme', auth: { type: 'basic', ...CONFIG } })
      .with({ adminKey: ADMIN, mcp: { healthCheckIntervalSeconds: 0, discoveryTimeoutSeconds: 2 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await mcp.close();
  });

  it('keeps the base64 of user:password out of tool errors and logs', async () => {
    const registered = await fetch(`${gw.url}/admin/v1/mcp/servers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'api', url: mcp.url, org: 'acme', auth: { type: 'basic', ...REGISTERED } }),
    });
    seen.push(await registered.text());
    expect(registered.status).to.equal(201);
    const rpc = async (method: string, params?: unknown) => {
      const res = await fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': `Bearer ${MEMBER}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      const text = await res.text();
      seen.push(text);
      return text;
    };
    const names = (JSON.parse(await rpc('tools/list')).result.tools as { name: string }[]).map((t) => t.name).filter((n) => n.endsWith('lookup'));
    expect(names).to.have.length(2);
    for (const name of names) {
      const result = JSON.parse(await rpc('tools/call', { name, arguments: {} })).result;
      expect(result.isError, name).to.equal(true);
      expect(result.content[0].text, name).to.include('upstream got');
    }
    mcp.failWithStatus = 500;
    mcp.failBody = (headers) => echoHeaders(headers);
    try {
      for (const name of names) await rpc('tools/call', { name, arguments: {} });
    } finally {
      mcp.failWithStatus = undefined;
      mcp.failBody = undefined;
    }
    // both servers were sent their credentials, so an echo carries them
    const sent = JSON.stringify(mcp.requests.map((r) => r.headers));
    expect(sent).to.include(basic(CONFIG)).and.to.include(basic(REGISTERED));
    const requestLog = await gw.gateway.services.requestLog.query({ limit: 100 });
    const everything = [...seen, JSON.stringify(requestLog), gw.logLines.join('')].join('\n');
    expect(everything).to.include('upstream got');
    for (const [name, value] of Object.entries({ config: basic(CONFIG), registered: basic(REGISTERED) })) expect(everything, name).to.not.include(value);
  });
});

describe('credentials the gateway was not told about are scrubbed by their shape', () => {
  const b64url = (v: string) => Buffer.from(v).toString('base64url');
  // an Entra access token as `az account get-access-token` prints it: a bare JWT, obtained at run time
  const ENTRA_JWT = [
    b64url(JSON.stringify({ typ: 'JWT', alg: 'RS256', kid: 'kid-1' })),
    b64url(JSON.stringify({ aud: 'https://cognitiveservices.azure.com', exp: Math.floor(Date.now() / 1000) + 3600, oid: 'user-1' })),
    b64url('a-signature-of-256-bytes-in-real-life'),
  ].join('.');
  const OTHER = {
    googleApiKey: 'AIzaSyD4x9Qw7_kL2mN8pR5tV1bC3eF6gH0jK-z',
    githubPat: 'github_pat_11ABCDEFG0abcdefghijKL_mnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV',
    githubServerToken: 'ghs_16C7e42F292c6912E7710c838347Ae178B4a',
    awsSecretBesideId: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    awsSecretLabelled: 'je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY',
  };
  let azure: FakeAzure;
  let gw: TestGateway;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-entra-'));
    writeFileSync(join(dir, 'token'), `${ENTRA_JWT}\n`);
    azure = await new FakeAzure().start();
    azure.bearers = [ENTRA_JWT];
    gw = await testConfig()
      .withKey('sk-member-shapes', { id: 'member' })
      .withProvider({ id: 'azure-entra', type: 'azure-openai', baseUrl: azure.url, entraTokenCommand: `cat '${join(dir, 'token')}'`, apiVersion: API_VERSION })
      .withModel('m', { model: 'gpt-4o-mini' })
      .with({ routing: { retries: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await azure.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function everything(texts: string[]) {
    const requestLog = await gw.gateway.services.requestLog.query({ limit: 100 });
    return [...texts, JSON.stringify(requestLog), gw.logLines.join('')].join('\n');
  }

  it('keeps a bare JWT an upstream echoes (an Entra token from a command) out of the error, the logs and the request log', async () => {
    const seen: string[] = [];
    for (const status of [400, 500]) {
      // the upstream quotes the token without its "Bearer "
      azure.reply = (req) => ({ kind: 'json', status, body: { error: { message: `token ${String(req.headers.authorization).slice('Bearer '.length)} lacks the role for this deployment`, type: 'invalid_request_error' } } });
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-member-shapes' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
      });
      seen.push(await res.text());
      expect(res.status).to.equal(status === 400 ? 400 : 502);
    }
    // the token did go out, so the echo carried it
    expect(azure.last.headers.authorization).to.equal(`Bearer ${ENTRA_JWT}`);
    expect(seen[0]).to.include('token [redacted] lacks the role');
    expect(await everything(seen)).to.not.include(ENTRA_JWT.split('.')[1]);
  });

  it('keeps Google API keys, GitHub tokens and AWS secret keys out of an upstream error, and leaves dotted versions and file names alone', async () => {
    const message = [
      `key ${OTHER.googleApiKey} is not valid;`,
      `fetching with ${OTHER.githubPat} and ${OTHER.githubServerToken} failed;`,
      `credentials AKIAIOSFODNN7EXAMPLE ${OTHER.awsSecretBesideId} and aws_secret_access_key=${OTHER.awsSecretLabelled} rejected;`,
      'see release v2.14.3-rc.1 and config.prod.yaml',
    ].join(' ');
    azure.reply = () => ({ kind: 'json', status: 400, body: { error: { message, type: 'invalid_request_error' } } });
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-member-shapes' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await res.text();
    expect(res.status).to.equal(400);
    const said = JSON.parse(text).error.message as string;
    expect(said).to.include('key [redacted] is not valid;').and.to.include('see release v2.14.3-rc.1 and config.prod.yaml');
    const all = await everything([text]);
    for (const [name, value] of Object.entries(OTHER)) expect(all, name).to.not.include(value);
  });
});

describe('a per-user token an MCP server quotes in its error is scrubbed by its shape', () => {
  const b64url = (v: string) => Buffer.from(v).toString('base64url');
  // the user's own id token, forwarded as x-mcp-crm-authorization: the gateway never had it configured
  const USER_JWT = [b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' })), b64url(JSON.stringify({ sub: 'user-7', exp: 4102444800 })), b64url('signature-bytes-of-the-idp')].join('.');
  const MEMBER = 'sk-member-mcp-shapes';
  let mcp: FakeMcpServer;
  let gw: TestGateway;

  before(async () => {
    mcp = await FakeMcpServer.start({
      tools: {
        lookup: {
          description: 'Look up',
          handler: (_args, headers) => {
            throw new McpError(ErrorCode.InternalError, `token ${String(headers.authorization).replace(/^Bearer /, '')} has expired`);
          },
        },
      },
    });
    gw = await testConfig()
      .withKey(MEMBER, { id: 'member' })
      .withMcpServer('crm', mcp.url, { org: 'acme', forwardHeaders: ['authorization'] })
      .with({ mcp: { healthCheckIntervalSeconds: 0, discoveryTimeoutSeconds: 2 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await mcp.close();
  });

  it('keeps the token out of the tool error, the logs and the request log', async () => {
    const rpc = async (method: string, params?: unknown) => {
      const res = await fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': `Bearer ${MEMBER}`, 'x-mcp-crm-authorization': `Bearer ${USER_JWT}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      return res.text();
    };
    const name = (JSON.parse(await rpc('tools/list')).result.tools as { name: string }[]).map((t) => t.name).find((n) => n.endsWith('lookup'))!;
    const text = await rpc('tools/call', { name, arguments: {} });
    // the server was sent the token, so its error did quote it
    expect(mcp.requests.some((r) => r.headers.authorization === `Bearer ${USER_JWT}`)).to.equal(true);
    expect(text).to.include('token [redacted] has expired');
    const requestLog = await gw.gateway.services.requestLog.query({ limit: 100 });
    expect([text, JSON.stringify(requestLog), gw.logLines.join('')].join('\n')).to.not.include(USER_JWT.split('.')[1]);
  });
});
