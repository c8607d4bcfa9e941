import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { McpServerRegistry, configServerId, configServerProblems, type RegistryActor } from '../../../../core/apis/mcp/server-registry';
import { toPublicView } from '../../../../core/apis/mcp/server-record';
import { MemoryBackend } from '../../../../core/store/memory-backend';
import { openStore } from '../../../../core/store/open-store';
import type { StoreBackend } from '../../../../core/store/store-backend';

const clock = { now: () => Date.parse('2026-01-01T00:00:00Z') };
const platform: RegistryActor = { platformAdmin: true, org: null };
const acmeAdmin: RegistryActor = { platformAdmin: false, org: 'acme' };
const globexAdmin: RegistryActor = { platformAdmin: false, org: 'globex' };
const publicLookup = async () => ['93.184.216.34'];
const CANARY = 'canary-secret-7f3a';

function registry(store: StoreBackend = new MemoryBackend(), allowPrivateUpstreams = false) {
  return new McpServerRegistry(store, clock, { allowPrivateUpstreams, lookup: publicLookup, orgExists: (o) => ['acme', 'globex'].includes(o) });
}

async function rejection(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('core/apis/mcp/server-registry', () => {
  it('loads config servers with stable ids and keeps their secrets out of the store', async () => {
    const store = new MemoryBackend();
    const r = registry(store);
    await r.init([{ name: 'docs', url: 'http://127.0.0.1:9/mcp', org: 'acme', visibility: 'private', auth: { type: 'bearer', token: CANARY }, staticHeaders: { 'x-team': CANARY } }]);
    const [record] = r.list();
    expect(record.id).to.equal(configServerId('acme', 'docs'));
    expect(record).to.include({ name: 'docs', alias: 'docs', org: 'acme', source: 'config', authType: 'bearer', egressRestricted: false });
    expect(r.upstreamHeaders(record.id)).to.deep.equal({ 'x-team': CANARY, authorization: `Bearer ${CANARY}` });
    const everythingStored = JSON.stringify([await store.collection('mcp_servers').all(), await store.collection('mcp_server_secrets').all()]);
    expect(everythingStored).to.not.include(CANARY);
  });

  it('shows auth type and header names only, never a credential or header value', async () => {
    const r = registry();
    const record = await r.register(platform, {
      name: 'Public Search', url: 'https://search.example/mcp', visibility: 'public',
      auth: { type: 'api_key', header: 'X-Search-Key', key: CANARY }, staticHeaders: { 'X-Team': CANARY }, forwardHeaders: ['Authorization'],
    });
    const view = toPublicView(record);
    expect(JSON.stringify(view)).to.not.include(CANARY);
    expect(view).to.deep.include({
      name: 'Public_Search', alias: 'Public_Search', org: null, visibility: 'public',
      auth: { type: 'api_key', header: 'x-search-key' }, staticHeaders: ['x-team'], forwardHeaders: ['authorization'],
    });
    expect(view.health).to.deep.equal({ status: 'unknown', consecutiveFailures: 0 });
  });

  it('hides a password or query values written into the URL', async () => {
    const r = registry();
    const record = await r.register(platform, { name: 'zap', url: `https://svc:${CANARY}@mcp.example/s/mcp?api_key=${CANARY}&region=eu`, visibility: 'public' });
    expect(toPublicView(record).url).to.equal('https://svc:***@mcp.example/s/mcp?api_key=***&region=***');
    expect(JSON.stringify(toPublicView(record))).to.not.include(CANARY);
  });

  it('refuses a credential or static header value no HTTP client sends (a token pasted with its line break)', async () => {
    const r = registry();
    const cases = [
      { input: { auth: { type: 'bearer' as const, token: `${CANARY}\n` } }, param: 'auth.token' },
      { input: { auth: { type: 'api_key' as const, key: `${CANARY}\r\nx-evil: 1` } }, param: 'auth.key' },
      { input: { staticHeaders: { 'x-team': 'a\u0000b' } }, param: 'staticHeaders.x-team' },
    ];
    for (const { input, param } of cases) {
      const err = await rejection(r.register(acmeAdmin, { name: 'docs', url: 'https://a.example/mcp', ...input }));
      expect(err.status, param).to.equal(400);
      expect(err.param).to.equal(param);
      expect(err.message).to.equal(`${param}: must be sendable as an HTTP header value (no line break or control character)`);
      expect(err.message).to.not.include(CANARY);
    }
    expect(r.list()).to.deep.equal([]);
  });

  it('refuses "-" in names and aliases, and duplicate names within one organisation', async () => {
    const r = registry();
    expect((await rejection(r.register(acmeAdmin, { name: 'my-docs', url: 'https://a.example/mcp' }))).message).to.include('name: "my-docs" contains "-"');
    expect((await rejection(r.register(acmeAdmin, { name: 'docs', alias: 'd-1', url: 'https://a.example/mcp' }))).param).to.equal('alias');
    await r.register(acmeAdmin, { name: 'docs', url: 'https://a.example/mcp' });
    const dup = await rejection(r.register(acmeAdmin, { name: 'docs', url: 'https://b.example/mcp' }));
    expect(dup.status).to.equal(409);
    expect(dup.code).to.equal('mcp_server_exists');
    // the same name in another organisation is fine
    await r.register(globexAdmin, { name: 'docs', url: 'https://c.example/mcp' });
  });

  it('refuses an alias already used in the same organisation (it prefixes tool names)', async () => {
    const r = registry();
    await r.register(acmeAdmin, { name: 'docs', url: 'https://a.example/mcp' });
    const err = await rejection(r.register(acmeAdmin, { name: 'docs2', alias: 'docs', url: 'https://b.example/mcp' }));
    expect(err.status).to.equal(409);
    expect(err.param).to.equal('alias');
    expect(err.message).to.equal('The alias "docs" is already used by MCP server "docs" in organization acme.');
  });

  it('refuses to boot when a config server clashes with one registered through the API', async () => {
    const store = new MemoryBackend();
    const first = registry(store);
    await first.init([]);
    await first.register(acmeAdmin, { name: 'docs', url: 'https://a.example/mcp' });
    const err = await rejection(registry(store).init([{ name: 'docs', url: 'https://b.example/mcp', org: 'acme', visibility: 'private' }]));
    expect(err.name).to.equal('ConfigError');
    expect(err.message).to.equal('mcpServers[0]: the name or alias of "docs" is already used by MCP server "docs" (registered through the management API) in organization acme; rename one of them');
  });

  it('refuses to boot with a config server whose header names cannot be sent, as the API refuses them', async () => {
    const cases: [object, string][] = [
      [{ staticHeaders: { __PROTO__: 'v' } }, 'mcpServers[0].staticHeaders: "__PROTO__" cannot be sent as a header by the HTTP client; choose another name'],
      [{ forwardHeaders: ['__proto__'] }, 'mcpServers[0].forwardHeaders: "__proto__" cannot be sent as a header by the HTTP client; choose another name'],
      [{ forwardHeaders: ['bad header'] }, 'mcpServers[0].forwardHeaders: "bad header" is not a header name'],
      [{ staticHeaders: { Host: 'elsewhere' } }, 'mcpServers[0].staticHeaders: "Host" is set by the gateway and cannot be configured'],
      [{ auth: { type: 'api_key', key: 'k', header: '__Proto__' } }, 'mcpServers[0].auth.header: must be a header name'],
    ];
    for (const [fields, message] of cases) {
      const err = await rejection(registry().init([{ name: 'docs', url: 'https://b.example/mcp', visibility: 'public', ...fields } as never]));
      expect(err.name, message).to.equal('ConfigError');
      expect(err.message).to.equal(message);
    }
  });

  it('refuses to boot with a config server whose credential or static header value ends in a line break (a secret read from a file), naming the field, never the value', async () => {
    const cases: [object, string][] = [
      [{ auth: { type: 'bearer', token: `${CANARY}\n` } }, 'auth.token'],
      [{ auth: { type: 'api_key', key: `${CANARY}\r\n` } }, 'auth.key'],
      [{ staticHeaders: { 'x-team': `${CANARY}\n` } }, 'staticHeaders.x-team'],
    ];
    for (const [fields, param] of cases) {
      const message = `mcpServers[0].${param}: must be sendable as an HTTP header value (no line break or control character)`;
      const server = { name: 'docs', url: 'https://b.example/mcp', visibility: 'public', ...fields } as never;
      const err = await rejection(registry().init([server]));
      expect(err.name, param).to.equal('ConfigError');
      expect(err.message).to.equal(message);
      // `model-gateway check` reports it too
      expect(configServerProblems([server])).to.deep.equal([message]);
    }
  });

  it('refuses other transports and non-HTTP URLs', async () => {
    const r = registry();
    expect((await rejection(r.register(platform, { name: 'x', url: 'https://a.example/mcp', transport: 'stdio', visibility: 'public' }))).message).to.include('stdio and the old SSE transport are not accepted');
    expect((await rejection(r.register(platform, { name: 'x', url: 'file:///bin/sh', visibility: 'public' }))).param).to.equal('url');
  });

  it("keeps an organisation admin inside its own organisation: no public servers, no other org's servers", async () => {
    const r = registry();
    expect((await rejection(r.register(acmeAdmin, { name: 'x', url: 'https://a.example/mcp', visibility: 'public' }))).status).to.equal(403);
    expect((await rejection(r.register(acmeAdmin, { name: 'x', url: 'https://a.example/mcp', org: 'globex' }))).status).to.equal(403);
    const own = await r.register(acmeAdmin, { name: 'x', url: 'https://a.example/mcp' });
    expect(own).to.include({ org: 'acme', visibility: 'private', egressRestricted: true });
    expect(r.listFor(globexAdmin)).to.deep.equal([]);
    expect((await rejection(r.update(globexAdmin, own.id, { description: 'mine now' }))).status).to.equal(404);
    expect((await rejection(r.remove(globexAdmin, own.id))).status).to.equal(404);
    expect(r.getFor(acmeAdmin, 'x').id).to.equal(own.id);
  });

  it('refuses loopback and private upstreams from an organisation admin unless the config allows them', async () => {
    const r = registry();
    const err = await rejection(r.register(acmeAdmin, { name: 'x', url: 'http://127.0.0.1:8080/mcp' }));
    expect(err.param).to.equal('url');
    expect(err.message).to.include('loopback, private or link-local');
    expect((await rejection(r.register(acmeAdmin, { name: 'y', url: 'http://169.254.169.254/mcp' }))).param).to.equal('url');
    // the platform admin is trusted, and so is an operator who allows private upstreams
    await r.register(platform, { name: 'local', url: 'http://127.0.0.1:8080/mcp', org: 'acme' });
    await registry(new MemoryBackend(), true).register(acmeAdmin, { name: 'x', url: 'http://127.0.0.1:8080/mcp' });
  });

  it('applies the egress rule to whoever set the URL: an org admin editing other fields keeps a trusted URL working', async () => {
    const r = registry();
    const created = await r.register(platform, { name: 'local', url: 'http://127.0.0.1:8080/mcp', org: 'acme' });
    const edited = await r.update(acmeAdmin, created.id, { description: 'edited by the org admin' });
    expect(edited.record.egressRestricted).to.equal(false);
    expect(await r.egressCheck(created.id)).to.equal(undefined);
    expect((await rejection(r.update(acmeAdmin, created.id, { url: 'http://10.0.0.8/mcp' }))).param).to.equal('url');
    const moved = await r.update(acmeAdmin, created.id, { url: 'https://public.example/mcp' });
    expect(moved.record.egressRestricted).to.equal(true);
  });

  it('keeps write-only values on update unless the patch replaces them', async () => {
    const r = registry();
    const created = await r.register(acmeAdmin, { name: 'docs', url: 'https://a.example/mcp', auth: { type: 'bearer', token: 'one' } });
    await r.update(acmeAdmin, created.id, { description: 'Docs' });
    expect(r.upstreamHeaders(created.id)).to.deep.equal({ authorization: 'Bearer one' });
    await r.update(acmeAdmin, created.id, { auth: { type: 'bearer', token: 'two' } });
    expect(r.upstreamHeaders(created.id)).to.deep.equal({ authorization: 'Bearer two' });
    expect(r.get(created.id)!.description).to.equal('Docs');
  });

  it('refuses to change or remove a config server through the API', async () => {
    const r = registry();
    await r.init([{ name: 'docs', url: 'http://127.0.0.1:9/mcp', org: 'acme', visibility: 'private' }]);
    expect((await rejection(r.update(platform, configServerId('acme', 'docs'), { description: 'x' }))).code).to.equal('mcp_server_from_config');
    expect((await rejection(r.remove(acmeAdmin, 'docs'))).code).to.equal('mcp_server_from_config');
  });

  it('persists API servers, their secrets and tool states in a SQLite store across restarts', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mcp-registry-'));
    const url = `sqlite://${path.join(dir, 'gw.db')}`;
    try {
      let store = await openStore(url);
      const first = registry(store);
      await first.init([]);
      const created = await first.register(acmeAdmin, { name: 'docs', url: 'https://a.example/mcp', auth: { type: 'bearer', token: 'persisted' } });
      created.tools.search = { status: 'enabled', currentHash: 'h', approvedHash: 'h', firstSeenAt: 't', present: true };
      await first.save(created);
      await store.close();

      store = await openStore(url);
      const second = registry(store);
      await second.init([]);
      expect(second.get(created.id)!.tools.search.status).to.equal('enabled');
      expect(second.upstreamHeaders(created.id)).to.deep.equal({ authorization: 'Bearer persisted' });
      await second.remove(acmeAdmin, created.id);
      expect(second.list()).to.deep.equal([]);
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('encrypts, at the next start, secrets an older version stored in clear, and still uses them', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mcp-registry-'));
    const url = `sqlite://${path.join(dir, 'gw.db')}`;
    try {
      let store = await openStore(url);
      const first = registry(store);
      await first.init([]);
      const created = await first.register(acmeAdmin, { name: 'docs', url: 'https://a.example/mcp' });
      // what a version without encryption at rest left in the store
      await store.collection('mcp_server_secrets').set(created.id, { auth: { type: 'bearer', token: CANARY }, staticHeaders: {} });
      await store.close();

      store = await openStore(url);
      const second = registry(store);
      await second.init([]);
      expect(second.upstreamHeaders(created.id)).to.deep.equal({ authorization: `Bearer ${CANARY}` });
      const raw = JSON.stringify(await store.collection('mcp_server_secrets').all());
      expect(raw).to.include('aes-256-gcm').and.not.include(CANARY);
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps a token in the URL with the secrets: the record shows it redacted, connections and the secret list get it whole', async () => {
    const r = registry();
    const created = await r.register(acmeAdmin, { name: 'docs', url: `https://svc:${CANARY}-pw@a.example/mcp?token=${CANARY}-q` });
    expect(created.url).to.equal('https://svc:***@a.example/mcp?token=***');
    expect(r.upstreamUrl(created.id)).to.equal(`https://svc:${CANARY}-pw@a.example/mcp?token=${CANARY}-q`);
    expect(r.secretValues()).to.include.members([`${CANARY}-pw`, `${CANARY}-q`]);
    // a same-origin patch of other fields keeps the full URL
    await r.update(acmeAdmin, created.id, { description: 'Docs' });
    expect(r.upstreamUrl(created.id)).to.equal(`https://svc:${CANARY}-pw@a.example/mcp?token=${CANARY}-q`);
  });

  it('drops a config server that was removed from the config file', async () => {
    const store = new MemoryBackend();
    await registry(store).init([{ name: 'docs', url: 'http://127.0.0.1:9/mcp', visibility: 'public' }]);
    const again = registry(store);
    await again.init([]);
    expect(again.list()).to.deep.equal([]);
  });
});
