import { expect } from 'chai';
import { McpUpstreamPool, type UpstreamTarget } from '../../../../core/apis/mcp/upstream-pool';
import { createStreamableHttpFactory } from '../../../../plugins/mcp-streamable-http';
import { DEFAULT_MCP_TRANSPORT } from '../../../../core/apis/mcp/transports';
import { FakeMcpServer } from '../../../support/fake-mcp-server';
import { ModernMcpServer } from '../../../support/modern-mcp-server';

const opts = { timeoutMs: 5000 };

describe('core/apis/mcp/upstream-pool: the revision of each upstream', () => {
  let pool: McpUpstreamPool;
  const target = (id: string, url: string, headers: Record<string, string> = {}): UpstreamTarget => ({ id, name: id, url, headers });

  beforeEach(() => {
    pool = new McpUpstreamPool(new Map([[DEFAULT_MCP_TRANSPORT, createStreamableHttpFactory({}, { fetch })]]));
  });
  afterEach(() => pool.closeAll());

  it('speaks 2026-07-28 to a server that answers server/discover, and adopts the remembered answer on later connections', async () => {
    const modern = await ModernMcpServer.start();
    try {
      const result = await pool.request(target('m', modern.url), 'tools/call', { name: 'echo', arguments: { message: 'hi' } }, opts);
      expect(result.content).to.deep.equal([{ type: 'text', text: 'modern echo: hi' }]);
      expect(pool.revisionOf('m')).to.equal('2026-07-28');
      // per-user headers get a connection of their own: no second probe, the verdict is remembered
      await pool.request(target('m', modern.url), 'tools/call', { name: 'echo', arguments: { message: 'again' } }, { ...opts, forwarded: { 'x-user': 'u1' } });
      expect(modern.requestsFor('server/discover')).to.have.length(1);
      expect(modern.requestsFor('initialize')).to.have.length(0);
      expect(modern.requestsFor('tools/call').map((r) => r.headers['mcp-protocol-version'])).to.deep.equal(['2026-07-28', '2026-07-28']);
    } finally {
      await modern.close();
    }
  });

  it('falls back to initialize for a 2025-11-25 server, remembers that, and probes again after a connection failure', async () => {
    const legacy = await FakeMcpServer.start({ tools: { echo: {} } });
    try {
      await pool.request(target('l', legacy.url), 'tools/call', { name: 'echo', arguments: { n: 1 } }, opts);
      expect(pool.revisionOf('l')).to.equal('2025-11-25');
      await pool.request(target('l', legacy.url), 'tools/call', { name: 'echo', arguments: { n: 2 } }, { ...opts, forwarded: { 'x-user': 'u1' } });
      expect(legacy.requestsFor('server/discover')).to.have.length(1);
      expect(legacy.requestsFor('initialize')).to.have.length(2);
      legacy.failWithStatus = 502;
      await pool.request(target('l', legacy.url), 'tools/call', { name: 'echo', arguments: { n: 3 } }, opts).catch(() => undefined);
      legacy.failWithStatus = undefined;
      await pool.request(target('l', legacy.url), 'tools/call', { name: 'echo', arguments: { n: 4 } }, opts);
      expect(legacy.requestsFor('server/discover')).to.have.length(2);
    } finally {
      await legacy.close();
    }
  });
});
