import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { createClient } from '@keyv/redis';
import type { McpServerRecord } from '../../../../core/apis/mcp/server-record';
import { openStore } from '../../../../core/store/open-store';
import type { StoreBackend } from '../../../../core/store/store-backend';
import { eventually } from '../../../support/eventually';
import { FakeMcpServer } from '../../../support/fake-mcp-server';
import { startMcpHarness, type McpHarness } from '../../../support/mcp-harness';
import { startRedis, type RedisServer } from '../../../support/redis-server';

const platform = { platformAdmin: true, org: null };
const caller = { keyId: 'k', org: 'acme' };

describe('core/apis/mcp with two gateway instances on one Redis store', () => {
  let redis: RedisServer;
  let upstream: FakeMcpServer;
  let storeA: StoreBackend;
  let storeB: StoreBackend;
  let a: McpHarness;
  let b: McpHarness;

  before(async () => {
    redis = await startRedis();
  });
  after(async () => redis?.stop());
  beforeEach(async () => {
    upstream = await FakeMcpServer.start({ tools: { search: {} } });
    storeA = await openStore(redis.url);
    storeB = await openStore(redis.url);
    a = await startMcpHarness({ store: storeA });
    b = await startMcpHarness({ store: storeB });
  });
  afterEach(async () => {
    await a.gateway.stop();
    await b.gateway.stop();
    for (const store of [storeA, storeB]) {
      for (const record of await store.collection<{ id: string }>('mcp_servers').all()) {
        await store.collection('mcp_servers').delete(record.id);
        await store.collection('mcp_server_secrets').delete(record.id);
      }
    }
    await storeA.close();
    await storeB.close();
    await upstream.close();
  });

  const names = (h: McpHarness) => h.gateway.view.listTools(h.gateway.scope(caller, {})).map((t) => t.name);

  /** A server registered and checked through a, then loaded and checked by b's periodic check, which is over. */
  async function checkedOnBoth() {
    const record = await a.gateway.registry.register(platform, { name: 'docs', url: upstream.url, org: 'acme' });
    await a.gateway.health.check(record.id);
    b.timer.fire();
    await eventually(() => names(b).length === 1);
    await b.gateway.health.running(record.id);
    return record;
  }

  it('serves a server registered on one instance from the other after its next periodic check', async () => {
    const record = await a.gateway.registry.register(platform, { name: 'docs', url: upstream.url, org: 'acme', auth: { type: 'bearer', token: 'shared-secret' } });
    await a.gateway.health.check(record.id);
    expect(names(a)).to.deep.equal(['search']);
    expect(names(b)).to.deep.equal([]);

    b.timer.fire();
    await eventually(() => names(b).length === 1);
    const routed = b.gateway.routeTool(b.gateway.scope(caller, {}), 'search');
    await b.gateway.callTool(routed, { q: 'x' }, { inbound: {} });
    expect(upstream.requestsFor('tools/call').at(-1)!.headers.authorization).to.equal('Bearer shared-secret');
  });

  it("keeps an operator's tool decision made on one instance when the other checks the server", async () => {
    const record = await a.gateway.registry.register(platform, { name: 'docs', url: upstream.url, org: 'acme' });
    await a.gateway.health.check(record.id);
    b.timer.fire();
    await eventually(() => names(b).length === 1);
    await a.gateway.registry.setToolEnabled(platform, record.id, 'search', false);
    await b.gateway.health.check(record.id);
    expect(names(b)).to.deep.equal([]);
    expect(b.gateway.registry.get(record.id)!.tools.search.hiddenReason).to.equal('disabled_by_operator');
  });

  it("keeps an operator's tool decision made on the other instance when this one's check fails before it reloaded", async () => {
    const record = await checkedOnBoth();
    // b's copy still has the tool on; the store has it off
    await a.gateway.registry.setToolEnabled(platform, record.id, 'search', false);
    await upstream.close();
    const checked = await b.gateway.health.check(record.id);
    expect(checked!.health.status).to.equal('unhealthy');
    expect(checked!.health.consecutiveFailures).to.equal(1);
    expect(checked!.tools.search.hiddenReason).to.equal('disabled_by_operator');
    const stored = (await storeA.collection<McpServerRecord>('mcp_servers').get(record.id))!;
    expect(stored.tools.search.hiddenReason).to.equal('disabled_by_operator');
    expect(stored.health.status).to.equal('unhealthy');
  });

  it('does not bring back a server removed on the other instance when this one checks it before it reloaded', async () => {
    const record = await checkedOnBoth();
    await a.gateway.registry.remove(platform, record.id);
    expect(await b.gateway.health.check(record.id)).to.equal(undefined);
    expect(await storeA.collection('mcp_servers').get(record.id)).to.equal(undefined);
    await a.gateway.registry.reload();
    expect(a.gateway.registry.get(record.id)).to.equal(undefined);
  });

  it("keeps an operator's tool decision made on this instance while its own check's write was on its way", async () => {
    const record = await a.gateway.registry.register(platform, { name: 'docs', url: upstream.url, org: 'acme' });
    await a.gateway.health.check(record.id);
    // Redis holds back writes (reads still pass): the check reads the record, then its compare-and-set waits
    const raw = createClient({ url: redis.url });
    await raw.connect();
    try {
      await raw.sendCommand(['CLIENT', 'PAUSE', '10000', 'WRITE']);
      const checking = a.gateway.health.check(record.id);
      // the store's connection blocked on its compare-and-set script (flag b)
      await eventually(async () => /flags=b .*cmd=eval/.test(String(await raw.sendCommand(['CLIENT', 'LIST']))));
      // the operator's write goes to the store after the check's, on the same connection
      const deciding = a.gateway.registry.setToolEnabled(platform, record.id, 'search', false);
      await raw.sendCommand(['CLIENT', 'UNPAUSE']);
      await Promise.all([checking, deciding]);
    } finally {
      await raw.sendCommand(['CLIENT', 'UNPAUSE']);
      await raw.quit();
    }
    const stored = (await storeA.collection<McpServerRecord>('mcp_servers').get(record.id))!;
    expect(stored.tools.search.hiddenReason).to.equal('disabled_by_operator');
    expect(a.gateway.registry.get(record.id)!.tools.search.hiddenReason).to.equal('disabled_by_operator');
    expect(names(a)).to.deep.equal([]);
  });

  it('forgets a server removed on the other instance at its next periodic check', async () => {
    const record = await a.gateway.registry.register(platform, { name: 'docs', url: upstream.url, org: 'acme' });
    await a.gateway.health.check(record.id);
    b.timer.fire();
    await eventually(() => names(b).length === 1);
    await a.gateway.registry.remove(platform, record.id);
    b.timer.fire();
    await eventually(() => b.gateway.registry.get(record.id) === undefined);
    expect(names(b)).to.deep.equal([]);
    expect(b.gateway.cache.get(record.id)).to.equal(undefined);
  });

  it('never calls a server without the credential another instance stored under a key this one lacks, and says why', async () => {
    const keyed = await openStore(redis.url, Date.now, { env: { GATEWAY_SECRET_KEY: randomBytes(32).toString('hex') } });
    const c = await startMcpHarness({ store: keyed });
    try {
      const record = await a.gateway.registry.register(platform, { name: 'docs', url: upstream.url, org: 'acme', auth: { type: 'bearer', token: 'shared-secret' } });
      await a.gateway.health.check(record.id);
      const seenBefore = upstream.requests.length;
      c.timer.fire();
      await eventually(() => c.gateway.registry.get(record.id)?.health.lastError !== undefined);
      expect(c.gateway.registry.get(record.id)!.health.lastError).to.match(/cannot be decrypted with the gateway's secret key/);
      expect(upstream.requests.length).to.equal(seenBefore);
      expect(() => c.gateway.registry.upstreamHeaders(record.id)).to.throw(/cannot be decrypted/);
    } finally {
      await c.gateway.stop();
      await keyed.close();
    }
  });
});
