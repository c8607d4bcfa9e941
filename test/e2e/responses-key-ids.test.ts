import { expect } from 'chai';
import OpenAI from 'openai';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const ADMIN = 'sk-admin-keyids-CANARY-71';
const GLOBEX_ADMIN = 'sk-globex-admin-keyids-CANARY-72';

describe('key ids are unique forever, and stored responses stay with their key and organisation', () => {
  let gw: TestGateway;
  const asAdmin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  const asGlobex = { authorization: `Bearer ${GLOBEX_ADMIN}`, 'content-type': 'application/json' };
  const client = (key: string) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
  const createKey = async (headers: Record<string, string>, body: object) => {
    const res = await fetch(`${gw.url}/admin/v1/keys`, { method: 'POST', headers, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  };

  before(async () => {
    gw = await testConfig()
      .withOrg('acme')
      .withOrg('globex')
      .withKey(GLOBEX_ADMIN, { org: 'globex', id: 'globex-admin', role: 'admin' })
      // the same declared id in two organisations: only the organisation tells them apart
      .withKey('sk-acme-bot-keyids-CANARY-73', { id: 'bot' })
      .withKey('sk-globex-bot-keyids-CANARY-74', { org: 'globex', id: 'bot' })
      .withProvider({ id: 'local', type: 'echo' })
      .withModel('echo')
      .with({ adminKey: ADMIN })
      .start();
  });
  after(() => gw.close());

  it("refuses a revoked key's id to another organisation (400 naming 'id'), so its stored responses stay unreachable", async () => {
    const acme = await createKey(asAdmin, { org: 'acme', name: 'bot' });
    expect(acme.status).to.equal(201);
    expect(acme.body.id).to.match(/^key_[A-Za-z0-9_-]{24}$/);
    const stored = await client(acme.body.key).responses.create({ model: 'echo', input: 'acme secret plans' });

    const revoked = await fetch(`${gw.url}/admin/v1/keys/${acme.body.id}`, { method: 'DELETE', headers: asAdmin });
    expect(revoked.status).to.equal(200);

    const claim = await createKey(asGlobex, { id: acme.body.id, name: 'bot' });
    expect(claim.status).to.equal(400);
    expect(claim.body.error).to.include({ param: 'id', type: 'invalid_request_error' });
    // the same answer for an id nobody has: creating a key says nothing about other organisations' ids
    const fresh = await createKey(asGlobex, { id: 'never-used', name: 'bot' });
    expect(fresh.status).to.equal(400);
    expect(fresh.body.error.message).to.equal(claim.body.error.message);

    const globex = await createKey(asGlobex, { name: 'bot' });
    expect(globex.status).to.equal(201);
    expect(globex.body.id).to.not.equal(acme.body.id);
    const err = await client(globex.body.key)
      .responses.create({ model: 'echo', input: 'what were they?', previous_response_id: stored.id })
      .then(() => undefined, (e) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(JSON.stringify(err.error)).to.not.include('acme secret plans');

    // the revoked key is gone from the API (a tombstone only keeps its id taken)
    expect((await fetch(`${gw.url}/admin/v1/keys/${acme.body.id}`, { headers: asAdmin })).status).to.equal(404);
    const list = (await (await fetch(`${gw.url}/admin/v1/keys`, { headers: asAdmin })).json()) as any;
    expect(list.data.map((k: any) => k.id)).to.not.include(acme.body.id);
  });

  it("does not let a key read a response stored under another organisation's key with the same id", async () => {
    const stored = await client('sk-acme-bot-keyids-CANARY-73').responses.create({ model: 'echo', input: 'acme only' });
    const err = await client('sk-globex-bot-keyids-CANARY-74')
      .responses.create({ model: 'echo', input: 'and then?', previous_response_id: stored.id })
      .then(() => undefined, (e) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    const mine = await client('sk-acme-bot-keyids-CANARY-73').responses.create({ model: 'echo', input: 'and then?', previous_response_id: stored.id });
    expect(mine.status).to.equal('completed');
  });

  it('refuses at boot a config key id of the generated shape', async () => {
    const err = await testConfig()
      .withKey('sk-shape-keyids-CANARY-75', { id: 'key_AAAAAAAAAAAAAAAAAAAAAAAA' })
      .start().then(() => undefined, (e) => e);
    expect(String(err?.message)).to.include('generated id');
  });
});
