import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { eventually } from '../support/eventually';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const ADMIN = 'sk-admin-CANARY-5150';

async function api(gw: TestGateway, method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
}

describe('management API: keys, organizations, logs, spend', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await testConfig()
      .withOrg('acme')
      .withOrg('globex')
      .withKey('sk-acme-admin', { id: 'acme-admin', role: 'admin' })
      .withKey('sk-acme-member', { id: 'acme-member' })
      .withKey('sk-globex', { org: 'globex', id: 'globex-member' })
      .withProvider({ id: 'echo', type: 'echo' })
      .withModel('echo', { price: { inputPerMTok: 1000000, outputPerMTok: 0 } })
      .with({ adminKey: ADMIN })
      .start();
  });
  after(() => gw.close());

  it('creates a key whose secret is shown once, works at once, and is never listed again', async () => {
    const created = await api(gw, 'POST', '/admin/v1/keys', ADMIN, { org: 'acme', name: 'bot', models: ['echo'] });
    expect(created.status).to.equal(201);
    const secret = created.body.key as string;
    expect(secret).to.match(/^sk-mg-/);
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: secret, maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'ping' }] });
    expect(answer.choices[0].message.content).to.equal('ping');
    const list = await api(gw, 'GET', '/admin/v1/keys', ADMIN);
    expect(list.text).to.not.include(secret);
    expect(list.text).to.not.include('digest');
    const read = await api(gw, 'GET', `/admin/v1/keys/${created.body.id}`, ADMIN);
    expect(read.body).to.include({ id: created.body.id, org: 'acme', name: 'bot' });
    expect(read.text).to.not.include(secret);

    const revoked = await api(gw, 'DELETE', `/admin/v1/keys/${created.body.id}`, ADMIN);
    expect(revoked.body.deleted).to.equal(true);
    await new Promise((r) => setTimeout(r, 10));
  });

  it('lets an organization admin manage only its own organization', async () => {
    const own = await api(gw, 'POST', '/admin/v1/keys', 'sk-acme-admin', { name: 'mine' });
    expect(own.status).to.equal(201);
    expect(own.body.org).to.equal('acme');
    const other = await api(gw, 'POST', '/admin/v1/keys', 'sk-acme-admin', { org: 'globex' });
    expect(other.status).to.equal(403);
    const list = await api(gw, 'GET', '/admin/v1/keys', 'sk-acme-admin');
    expect(list.body.data.every((k: { org: string }) => k.org === 'acme')).to.equal(true);
    expect((await api(gw, 'GET', '/admin/v1/keys/globex-member', 'sk-acme-admin')).status).to.equal(404);
    expect((await api(gw, 'GET', '/admin/v1/logs?org=globex', 'sk-acme-admin')).status).to.equal(403);
    expect((await api(gw, 'POST', '/admin/v1/organizations', 'sk-acme-admin', { id: 'x' })).status).to.equal(403);
  });

  it('narrows the key list to the organisation ?org= names, and refuses an organisation admin naming another', async () => {
    const globex = await api(gw, 'GET', '/admin/v1/keys?org=globex', ADMIN);
    expect(globex.status).to.equal(200);
    expect(globex.body.data.map((k: { id: string; org: string }) => `${k.org}:${k.id}`)).to.deep.equal(['globex:globex-member']);
    const other = await api(gw, 'GET', '/admin/v1/keys?org=globex', 'sk-acme-admin');
    expect(other.status).to.equal(403);
    expect(other.body.error).to.include({ type: 'permission_error', code: 'cross_org_denied' });
  });

  it('refuses members and unknown keys in the OpenAI error shape', async () => {
    const member = await api(gw, 'GET', '/admin/v1/logs', 'sk-acme-member');
    expect(member.status).to.equal(403);
    expect(member.body.error).to.include({ type: 'permission_error', code: 'not_admin' });
    const nobody = await api(gw, 'GET', '/admin/v1/logs', 'sk-nope');
    expect(nobody.status).to.equal(401);
  });

  it('creates organizations (platform admin) and rejects duplicates', async () => {
    expect((await api(gw, 'POST', '/admin/v1/organizations', ADMIN, { id: 'initech', name: 'Initech' })).status).to.equal(201);
    // a conflict (409, as a second MCP server of one name), not a malformed body (400)
    const again = await api(gw, 'POST', '/admin/v1/organizations', ADMIN, { id: 'initech' });
    expect(again.status).to.equal(409);
    expect(again.body.error).to.deep.include({ type: 'invalid_request_error', code: 'already_exists', param: 'id' });
    const declared = await api(gw, 'POST', '/admin/v1/organizations', ADMIN, { id: 'acme' });
    expect(declared.status).to.equal(409);
    const list = await api(gw, 'GET', '/admin/v1/organizations', ADMIN);
    expect(list.body.data.map((o: { id: string }) => o.id)).to.deep.equal(['acme', 'globex', 'initech']);
  });

  it('logs every request, newest first, with a cursor, and totals spend by key, org, model and day', async () => {
    const acme = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-acme-member', maxRetries: 0 });
    const globex = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-globex', maxRetries: 0 });
    await acme.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'abcd' }] });
    await acme.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'abcdefgh' }] });
    await globex.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'abcd' }] });
    await acme.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }).catch(() => undefined);

    const page1 = await api(gw, 'GET', '/admin/v1/logs?key=acme-member&limit=2', ADMIN);
    expect(page1.body.data).to.have.length(2);
    expect(page1.body.data[0]).to.include({ keyId: 'acme-member', org: 'acme', model: 'nope', status: 404, errorCode: 'model_not_found' });
    expect(page1.body.data[1]).to.include({ model: 'echo', deploymentId: 'echo/echo', status: 200, endpoint: 'chat', promptTokens: 2 });
    expect(page1.body.data[1]).to.have.keys('id', 'requestId', 'time', 'keyId', 'org', 'endpoint', 'model', 'deploymentId', 'promptTokens', 'completionTokens', 'cost', 'status', 'latencyMs', 'errorCode', 'outcome', 'details');
    const page2 = await api(gw, 'GET', `/admin/v1/logs?key=acme-member&limit=2&cursor=${page1.body.next_cursor}`, ADMIN);
    expect(page2.body.data[0].promptTokens).to.equal(1);

    const byOrg = await api(gw, 'GET', '/admin/v1/spend?groupBy=org', ADMIN);
    const acmeRow = byOrg.body.data.find((r: { group: string }) => r.group === 'acme');
    // 'ping' from the first test's key, then 'abcd' and 'abcdefgh': 1 + 1 + 2 tokens at $1 a token
    expect(acmeRow.cost).to.equal(4);
    expect((await api(gw, 'GET', '/admin/v1/spend?groupBy=day', ADMIN)).body.data[0].group).to.match(/^\d{4}-\d{2}-\d{2}$/);
    const orgAdminView = await api(gw, 'GET', '/admin/v1/spend?groupBy=key', 'sk-acme-admin');
    expect(orgAdminView.body.data.map((r: { group: string }) => r.group)).to.not.include('globex-member');
    expect((await api(gw, 'GET', '/admin/v1/spend?groupBy=colour', ADMIN)).status).to.equal(400);
  });

  it('records a model name of a megabyte cut to its first 1,024 characters, in the log, its line and the spend rollups', async () => {
    // every such 404 kept the whole name: in the log row, the access line and a rollup row that is never
    // deleted, so a key could fill the store and make the log page answer gigabytes
    const huge = `probe-${'m'.repeat(1_000_000)}`;
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-globex', 'content-type': 'application/json' },
      body: JSON.stringify({ model: huge, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(res.status).to.equal(404);
    await gw.gateway.services.pipeline.whenSettled(5_000);
    await gw.gateway.services.requestLog.writer.settled();
    const entry = (await api(gw, 'GET', '/admin/v1/logs?key=globex-member&limit=1', ADMIN)).body.data[0];
    expect(entry).to.include({ status: 404, errorCode: 'model_not_found' });
    expect(entry.model.length).to.equal(1025);
    expect(entry.model).to.equal(`${huge.slice(0, 1024)}…`);
    const byModel = await api(gw, 'GET', '/admin/v1/spend?groupBy=model', ADMIN);
    expect(byModel.text.length).to.be.below(100_000);
    expect(byModel.body.data.map((r: { group: string }) => r.group)).to.include(`${huge.slice(0, 1024)}…`);
    await new Promise((r) => setTimeout(r, 50)); // the access lines go out together every 20 ms
    const lines = gw.logLines.join('\n');
    expect(lines).to.include(`${huge.slice(0, 1024)}…`);
    expect(lines).to.not.include(huge.slice(0, 1025));
  });

  it('logs and counts a request whose body the endpoint refuses (not JSON, missing a field), as any other refused request', async () => {
    const send = async (path: string, body: string, key = 'sk-globex') => {
      const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
      return { status: res.status, requestId: res.headers.get('x-gateway-request-id'), body: (await res.json()) as { error: { code: string } } };
    };
    const notJson = await send('/v1/chat/completions', '{"model": "echo", ');
    expect(notJson.status).to.equal(400);
    expect(notJson.body.error.code).to.equal('invalid_json');
    const noMessages = await send('/v1/chat/completions', JSON.stringify({ model: 'echo' }));
    expect(noMessages.status).to.equal(400);
    expect(noMessages.body.error.code).to.equal('missing_required_parameter');
    // without a valid key it stays the 401, and nothing about the body
    expect((await send('/v1/chat/completions', '{"model": "echo", ', 'sk-unknown-key')).status).to.equal(401);
    await gw.gateway.services.pipeline.whenSettled(5_000);

    const entries = (await api(gw, 'GET', '/admin/v1/logs?key=globex-member&status=400&limit=10', ADMIN)).body.data as Record<string, unknown>[];
    const notJsonEntry = entries.find((e) => e.requestId === notJson.requestId);
    const noMessagesEntry = entries.find((e) => e.requestId === noMessages.requestId);
    expect(notJsonEntry).to.include({ keyId: 'globex-member', org: 'globex', endpoint: 'chat', model: null, status: 400, errorCode: 'invalid_json', cost: 0 });
    expect(noMessagesEntry).to.include({ keyId: 'globex-member', org: 'globex', endpoint: 'chat', model: 'echo', status: 400, errorCode: 'missing_required_parameter' });
    await new Promise((r) => setTimeout(r, 50)); // the access lines go out together every 20 ms
    const lines = gw.logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request');
    expect(lines.filter((l) => l.requestId === notJson.requestId || l.requestId === noMessages.requestId)).to.have.length(2);
    const metrics = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
    expect(metrics).to.match(/^gateway_requests_total\{endpoint="chat",model="echo",status="400"\} [1-9]/m);
    expect(metrics).to.match(/^gateway_requests_total\{endpoint="chat",model="other",status="401"\} [1-9]/m);
  });

  it('logs a Responses request whose body the endpoint refuses, as it does a chat one', async () => {
    const res = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { authorization: 'Bearer sk-globex', 'content-type': 'application/json' }, body: JSON.stringify({ model: 'echo', input: 42 }) });
    expect(res.status).to.equal(400);
    const requestId = res.headers.get('x-gateway-request-id');
    const code = ((await res.json()) as { error: { code: string } }).error.code;
    await gw.gateway.services.pipeline.whenSettled(5_000);
    const entries = (await api(gw, 'GET', '/admin/v1/logs?key=globex-member&status=400&limit=10', ADMIN)).body.data as Record<string, unknown>[];
    expect(entries.find((e) => e.requestId === requestId)).to.include({ keyId: 'globex-member', endpoint: 'responses', model: 'echo', status: 400, errorCode: code });
  });

  it('never shows the admin key in a response or the gateway output', async () => {
    const res = await api(gw, 'GET', '/admin/v1/keys', ADMIN);
    expect(res.text).to.not.include(ADMIN);
    expect(gw.logLines.join('')).to.not.include(ADMIN);
  });
});

describe('management API: roles an organisation admin may give', () => {
  it('refuses an organisation admin that PATCHes a key to the platform_admin role (and so would reach other organisations)', async () => {
    const gw = await testConfig()
      .withOrg('acme')
      .withOrg('globex')
      .withKey('sk-acme-admin-review', { id: 'acme-admin', role: 'admin' })
      .withKey('sk-globex-member-review', { org: 'globex', id: 'globex-member' })
      .with({ adminKey: 'sk-admin-review-core' })
      .start();
    try {
      const asAcme = { authorization: 'Bearer sk-acme-admin-review', 'content-type': 'application/json' };
      const created = await fetch(`${gw.url}/admin/v1/keys`, { method: 'POST', headers: asAcme, body: JSON.stringify({ name: 'acme-helper' }) });
      expect(created.status).to.equal(201);
      const { key: secret, id: helperId } = (await created.json()) as { key: string; id: string };

      const patched = await fetch(`${gw.url}/admin/v1/keys/${helperId}`, { method: 'PATCH', headers: asAcme, body: JSON.stringify({ role: 'platform_admin' }) });
      expect(patched.status).to.equal(400);
      expect(((await patched.json()) as { error: { param: string } }).error.param).to.equal('role');

      const keys = await fetch(`${gw.url}/admin/v1/keys`, { headers: { authorization: `Bearer ${secret}` } });
      expect(keys.status).to.equal(403);
      const own = await fetch(`${gw.url}/admin/v1/keys`, { headers: asAcme });
      const ids = ((await own.json()) as { data: { id: string; role?: string }[] }).data.map((k) => [k.id, k.role ?? 'member']);
      expect(ids).to.deep.equal([['acme-admin', 'admin'], [helperId, 'member']]);
    } finally {
      await gw.close();
    }
  });
});

describe('management API: an organisation created here and later written into the config file', () => {
  it('is the config file\'s after a restart: listed once, with the limits the gateway enforces, not beside a stale stored copy', async () => {
    const store = { url: `sqlite://${path.join(mkdtempSync(path.join(tmpdir(), 'mg-admin-orgs-')), 'gateway.db')}` };
    const first = await testConfig().withOrg('acme').with({ adminKey: ADMIN, store }).start();
    try {
      const created = await api(first, 'POST', '/admin/v1/organizations', ADMIN, { id: 'beta', name: 'Beta (API)', maxBudget: 5 });
      expect(created.status).to.equal(201);
    } finally {
      await first.close();
    }

    const second = await testConfig().withOrg('acme').withOrg('beta', { name: 'Beta (file)', rpm: 100 }).with({ adminKey: ADMIN, store }).start();
    try {
      const list = await api(second, 'GET', '/admin/v1/organizations', ADMIN);
      expect(list.body.data.filter((o: { id: string }) => o.id === 'beta')).to.deep.equal([{ id: 'beta', name: 'Beta (file)', rpm: 100 }]);
      // the file's beta has no budget: none is shown as if it were checked
      const budgets = await api(second, 'GET', '/admin/v1/budgets', ADMIN);
      expect(budgets.body.data.filter((b: { kind: string }) => b.kind === 'org')).to.deep.equal([]);
      const patched = await api(second, 'PATCH', '/admin/v1/organizations/beta', ADMIN, { rpm: 5 });
      expect(patched.body.error.code).to.equal('config_organization_read_only');
    } finally {
      await second.close();
    }
  });
});

describe('management API: spend by key when two organisations each have a key of one declared id', () => {
  it('answers one row per organisation\'s key, with its org, not one row summing both', async () => {
    const gw = await testConfig()
      .withOrg('acme')
      .withOrg('globex')
      .withKey('sk-acme-bot-spend', { id: 'bot' })
      .withKey('sk-globex-bot-spend', { org: 'globex', id: 'bot' })
      .withProvider({ id: 'echo', type: 'echo' })
      .withModel('echo', { price: { inputPerMTok: 1000000, outputPerMTok: 0 } })
      .with({ adminKey: ADMIN })
      .start();
    try {
      await new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-acme-bot-spend', maxRetries: 0 }).chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'abcd' }] });
      await new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-globex-bot-spend', maxRetries: 0 }).chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'abcdefgh' }] });
      const byKey = await eventually(async () => {
        const res = await api(gw, 'GET', '/admin/v1/spend?groupBy=key', ADMIN);
        return res.body.total_cost === 3 ? res : undefined;
      });
      expect(byKey.body.data.map((r: { group: string; org: string; cost: number; requests: number }) => [r.group, r.org, r.cost, r.requests])).to.have.deep.members([
        ['bot', 'acme', 1, 1],
        ['bot', 'globex', 2, 1],
      ]);
    } finally {
      await gw.close();
    }
  });
});

describe('management API: reading a key when two organisations each have a key of one declared id', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await testConfig()
      .withOrg('acme')
      .withOrg('globex')
      .withKey('sk-acme-bot-read', { id: 'bot', name: 'acme bot' })
      .withKey('sk-globex-bot-read', { org: 'globex', id: 'bot', name: 'globex bot' })
      .withKey('sk-globex-admin-read', { org: 'globex', id: 'globex-admin', role: 'admin' })
      .withProvider({ id: 'echo', type: 'echo' })
      .withModel('echo', { price: { inputPerMTok: 1000000, outputPerMTok: 0 } })
      .with({ adminKey: ADMIN })
      .start();
  });
  after(() => gw.close());

  it('lets the organisation admin read its own bot, and the platform admin pick one with ?org=', async () => {
    const own = await api(gw, 'GET', '/admin/v1/keys/bot', 'sk-globex-admin-read');
    expect(own.status).to.equal(200);
    expect(own.body).to.include({ id: 'bot', org: 'globex', name: 'globex bot' });
    const second = await api(gw, 'GET', '/admin/v1/keys/bot?org=globex', ADMIN);
    expect(second.status).to.equal(200);
    expect(second.body).to.include({ id: 'bot', org: 'globex', name: 'globex bot' });
    const first = await api(gw, 'GET', '/admin/v1/keys/bot?org=acme', ADMIN);
    expect(first.body).to.include({ id: 'bot', org: 'acme', name: 'acme bot' });
    expect((await api(gw, 'GET', '/admin/v1/keys/bot?org=acme', 'sk-globex-admin-read')).status).to.equal(403);
  });

  it('asks the platform admin for ?org= when two organisations have the key\'s id, rather than answering the first one\'s', async () => {
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const res = await api(gw, method, '/admin/v1/keys/bot', ADMIN, method === 'PATCH' ? { rpm: 5 } : undefined);
      expect(res.status, method).to.equal(400);
      expect(res.body.error, method).to.include({ type: 'invalid_request_error', code: 'missing_required_parameter', param: 'org' });
      expect(res.body.error.message, method).to.include('?org=');
    }
    // an id only one organisation has needs no ?org=
    const single = await api(gw, 'GET', '/admin/v1/keys/globex-admin', ADMIN);
    expect(single.status).to.equal(200);
    expect(single.body).to.include({ id: 'globex-admin', org: 'globex' });
    // and both bots are still there, unchanged
    expect((await api(gw, 'GET', '/admin/v1/keys/bot?org=acme', ADMIN)).body).to.include({ org: 'acme', name: 'acme bot' });
    expect((await api(gw, 'GET', '/admin/v1/keys/bot?org=globex', ADMIN)).body).to.not.have.property('rpm');
  });

  it('charts spend by key as one series per organisation\'s key, with its org', async () => {
    await new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-acme-bot-read', maxRetries: 0 }).chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'abcd' }] });
    await new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-globex-bot-read', maxRetries: 0 }).chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'abcdefgh' }] });
    const daily = await eventually(async () => {
      const res = await api(gw, 'GET', '/admin/v1/spend/daily?splitBy=key', ADMIN);
      return res.body.totals.cost === 3 ? res : undefined;
    });
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    expect(daily.body.series.map((s: { group: string; org: string; cost: number[] }) => [s.group, s.org, sum(s.cost)])).to.have.deep.members([
      ['bot', 'acme', 1],
      ['bot', 'globex', 2],
    ]);
    expect(daily.body.top.keys.map((r: { group: string; org: string; cost: number }) => [r.group, r.org, r.cost])).to.have.deep.members([
      ['bot', 'acme', 1],
      ['bot', 'globex', 2],
    ]);
  });
});
