import { expect } from 'chai';
import { FakeMcpServer } from '../support/fake-mcp-server';
import { startGateway, type TestGateway } from '../support/start-gateway';
import { adminApi, callTool, leaked } from './secrets-support';

const ADMIN = 'sk-admin-CANARY-bind-1';
const ACME_ADMIN = 'sk-acme-admin-CANARY-bind-2';
const ACME_MEMBER = 'sk-acme-member-CANARY-bind-3';
const TOKEN = 'platform-token-CANARY-bind-4';
const HEADER_VALUE = 'static-header-CANARY-bind-5';
const NEW_TOKEN = 'org-token-CANARY-bind-6';

/**
 * Attack 3 of issue 11: the platform admin registers a server for an organisation with a bearer token;
 * that organisation's admin PATCHes only its URL to a server of its own and would receive the token on
 * the next call. Credentials are bound to their origin: the move drops them.
 */
describe('stored MCP credentials are bound to the origin they were given for', () => {
  let honest: FakeMcpServer;
  let attacker: FakeMcpServer;
  let gw: TestGateway;
  let id: string;

  beforeEach(async () => {
    honest = await FakeMcpServer.start({ tools: { search: { description: 'Search' } } });
    attacker = await FakeMcpServer.start({ tools: { search: { description: 'Search' } } });
    gw = await startGateway({
      adminKey: ADMIN,
      organizations: [{ id: 'acme' }],
      keys: [
        { key: ACME_ADMIN, org: 'acme', role: 'admin', id: 'acme-admin' },
        { key: ACME_MEMBER, org: 'acme', id: 'acme-member' },
      ],
      // both fake upstreams are on loopback; the egress rule is another test's subject
      mcp: { healthCheckIntervalSeconds: 0, allowPrivateUpstreams: true },
    });
    const created = await adminApi(gw, ADMIN, 'POST', '/admin/v1/mcp/servers', {
      name: 'docs', url: honest.url, org: 'acme', auth: { type: 'bearer', token: TOKEN }, staticHeaders: { 'x-tenant-secret': HEADER_VALUE },
    });
    expect(created.status).to.equal(201);
    id = created.body.id;
  });
  afterEach(async () => {
    await gw.close();
    await honest.close();
    await attacker.close();
  });

  const attackerSaw = () => attacker.requests.map((r) => JSON.stringify(r.headers)).join('\n');

  it("drops the token when an organisation admin moves the server's URL to another origin", async () => {
    const patched = await adminApi(gw, ACME_ADMIN, 'PATCH', `/admin/v1/mcp/servers/${id}`, { url: attacker.url });
    expect(patched.status).to.equal(200);
    expect(patched.body).to.deep.include({ credentialsDropped: true, droppedCredentials: ['auth', 'staticHeaders'], auth: { type: 'none' }, staticHeaders: [] });
    expect(patched.body.message).to.match(/another origin/);
    expect(patched.body.notices.some((n: string) => n.startsWith('Credentials dropped:'))).to.equal(true);
    const read = await adminApi(gw, ACME_ADMIN, 'GET', `/admin/v1/mcp/servers/${id}`);
    expect(read.body.auth).to.deep.equal({ type: 'none' });

    const result = await callTool(gw, ACME_MEMBER, 'search', { q: 'x' });
    expect(result.isError ?? false).to.equal(false);
    expect(attacker.requestsFor('tools/call')).to.have.length(1);
    for (const r of attacker.requests) {
      expect(r.headers.authorization).to.equal(undefined);
      expect(r.headers['x-tenant-secret']).to.equal(undefined);
    }
    expect(leaked(attackerSaw(), [TOKEN, HEADER_VALUE])).to.deep.equal([]);
    expect(leaked([patched.text, read.text, gw.logLines.join('')].join('\n'), [TOKEN, HEADER_VALUE])).to.deep.equal([]);
  });

  it('treats a change of scheme or port as another origin too, and keeps nothing for the old one', async () => {
    const httpsUrl = honest.url.replace('http://', 'https://');
    const patched = await adminApi(gw, ADMIN, 'PATCH', `/admin/v1/mcp/servers/${id}`, { url: httpsUrl });
    expect(patched.body.credentialsDropped).to.equal(true);
    // back to the original URL: the dropped token does not come back either
    const back = await adminApi(gw, ADMIN, 'PATCH', `/admin/v1/mcp/servers/${id}`, { url: honest.url });
    expect(back.body).to.deep.include({ credentialsDropped: false, auth: { type: 'none' } });
    await callTool(gw, ACME_MEMBER, 'search');
    expect(honest.requestsFor('tools/call').at(-1)!.headers.authorization).to.equal(undefined);
  });

  it('uses credentials supplied in the same request as the new URL, and drops only what was not supplied', async () => {
    const patched = await adminApi(gw, ACME_ADMIN, 'PATCH', `/admin/v1/mcp/servers/${id}`, { url: attacker.url, auth: { type: 'bearer', token: NEW_TOKEN } });
    expect(patched.body).to.deep.include({ credentialsDropped: true, droppedCredentials: ['staticHeaders'], auth: { type: 'bearer' }, staticHeaders: [] });
    await callTool(gw, ACME_MEMBER, 'search');
    expect(attacker.requestsFor('tools/call')[0].headers.authorization).to.equal(`Bearer ${NEW_TOKEN}`);
    expect(leaked(attackerSaw(), [TOKEN, HEADER_VALUE])).to.deep.equal([]);
  });

  it('keeps the credentials when only the path changes on the same origin', async () => {
    const samePlace = `${new URL(honest.url).origin}/other/mcp`;
    const patched = await adminApi(gw, ACME_ADMIN, 'PATCH', `/admin/v1/mcp/servers/${id}`, { url: samePlace });
    expect(patched.body).to.deep.include({ credentialsDropped: false, url: samePlace, auth: { type: 'bearer' }, staticHeaders: ['x-tenant-secret'] });
    expect(patched.body.message).to.equal(undefined);
    await callTool(gw, ACME_MEMBER, 'search');
    const call = honest.requestsFor('tools/call').at(-1)!;
    expect(call.headers.authorization).to.equal(`Bearer ${TOKEN}`);
    expect(call.headers['x-tenant-secret']).to.equal(HEADER_VALUE);
  });
});
