import { expect } from 'chai';
import { KeyRegistry } from '../../../core/auth/key-registry';
import { GatewayError } from '../../../core/errors/gateway-error';
import { GatewayContext, type AuthedContext } from '../../../core/pipeline/context';
import { RouteStage } from '../../../core/stages/route';
import { ScopeStage } from '../../../core/stages/scope';
import { MemoryBackend } from '../../../core/store/memory-backend';
import { FakeMcpServer } from '../../support/fake-mcp-server';
import { startMcpHarness, type McpHarness } from '../../support/mcp-harness';
import { mcpTraffic, modelTraffic, signedIn, strategies } from './traffic-fixtures';
import { failure } from '../../support/stage-failure';

const KEYS = new KeyRegistry(
  [
    { key: 'sk-wide', org: 'acme', id: 'wide' },
    { key: 'sk-narrow', org: 'acme', id: 'narrow', models: ['gpt-4o-*'], mcp: { servers: ['docs'] } },
    { key: 'sk-globex', org: 'globex', id: 'globex' },
  ],
  undefined,
  new MemoryBackend(),
  Date.now,
);

async function modelContext(key: string, model: string): Promise<AuthedContext> {
  const ctx = signedIn(new GatewayContext('model', 'chat', Date.now(), { headers: {} }, new AbortController().signal), await KEYS.authenticate(key));
  ctx.model = { format: 'chat', body: { model }, requestedModel: model, stream: false, candidates: [], attempts: [] };
  return ctx;
}

async function mcpContext(key: string, mcpHeaders: Record<string, string> = {}): Promise<AuthedContext> {
  const ctx = signedIn(new GatewayContext('mcp', 'mcp', Date.now(), { headers: {} }, new AbortController().signal), await KEYS.authenticate(key));
  ctx.mcp = { method: 'tools/call', toolName: 'search', mcpHeaders };
  return ctx;
}

const reachable = (ctx: GatewayContext) => ctx.mcpScope!.servers.map((s) => s.record.name);

describe('core/stages/scope', () => {
  describe('model traffic (model traffic strategy)', () => {
    let stage: ScopeStage;
    before(async () => {
      stage = new ScopeStage(strategies({ model: await modelTraffic() }));
    });

    it('lets a key reach the models its patterns allow, and only those', async () => {
      const outcome = async (key: string, model: string) => (async () => stage.run(await modelContext(key, model)))().then(() => 'in scope', (e: GatewayError) => e.code);
      expect([await outcome('sk-narrow', 'gpt-4o-mini'), await outcome('sk-wide', 'anything'), await outcome('sk-narrow', 'o1')]).to.deep.equal(['in scope', 'in scope', 'model_not_found']);
    });

    it('refuses a model outside the key list exactly like an unknown model (404 model_not_found)', async () => {
      const err = await failure(async () => stage.run(await modelContext('sk-narrow', 'gpt-4')));
      expect([err.status, err.code, err.param]).to.deep.equal([404, 'model_not_found', 'model']);
    });
  });

  describe('MCP traffic on a gateway without MCP servers (real MCP gateway, MCP traffic strategy)', () => {
    // Every gateway now has the MCP strategy (the old NO_MCP handlers and their 404 mcp_not_configured are
    // gone): with no servers the scope is empty and a tool call is refused as an unknown tool.
    let harness: McpHarness;
    before(async () => {
      harness = await startMcpHarness();
    });
    after(async () => {
      await harness.gateway.stop();
    });

    it('puts nothing in scope, and the call is refused clearly (404 mcp_tool_not_found)', async () => {
      const traffic = strategies({ mcp: await mcpTraffic(harness.gateway) });
      const ctx = await mcpContext('sk-wide');
      await new ScopeStage(traffic).run(ctx);
      expect(reachable(ctx)).to.deep.equal([]);
      const err = await failure(() => new RouteStage(traffic).run(ctx));
      expect([err.status, err.code]).to.deep.equal([404, 'mcp_tool_not_found']);
    });
  });

  describe('MCP traffic (real MCP gateway, MCP traffic strategy, SDK servers on loopback)', () => {
    let docs: FakeMcpServer;
    let wiki: FakeMcpServer;
    let harness: McpHarness;
    let stage: ScopeStage;

    before(async () => {
      docs = await FakeMcpServer.start({ tools: { search: {} } });
      wiki = await FakeMcpServer.start({ tools: { search: {} } });
      harness = await startMcpHarness({
        orgExists: (org) => org === 'acme',
        servers: [
          { name: 'docs', url: docs.url, org: 'acme', visibility: 'private' },
          { name: 'wiki', url: wiki.url, org: 'acme', visibility: 'private' },
        ],
      });
      stage = new ScopeStage(strategies({ mcp: await mcpTraffic(harness.gateway) }));
    });
    after(async () => {
      await harness.gateway.stop();
      await docs.close();
      await wiki.close();
    });

    it("puts the organisation's servers in scope, prefixed when there are several", async () => {
      const ctx = await mcpContext('sk-wide');
      await stage.run(ctx);
      expect(reachable(ctx)).to.deep.equal(['docs', 'wiki']);
      expect(ctx.mcpScope!.prefixed).to.equal(true);
    });

    it("narrows by the key's server set and by x-mcp-servers", async () => {
      const narrow = await mcpContext('sk-narrow');
      await stage.run(narrow);
      expect(reachable(narrow)).to.deep.equal(['docs']);
      const header = await mcpContext('sk-wide', { 'x-mcp-servers': 'wiki' });
      await stage.run(header);
      expect(reachable(header)).to.deep.equal(['wiki']);
    });

    it("never shows another organisation's private servers", async () => {
      const ctx = await mcpContext('sk-globex');
      await stage.run(ctx);
      expect(reachable(ctx)).to.deep.equal([]);
    });
  });
});
