import { expect } from 'chai';
import { createLogger } from '../../../core/observability/logger';
import { RequestReporter } from '../../../core/observability/request-report';
import { GatewayContext, type AuthedContext } from '../../../core/pipeline/context';
import { COST_HEADER, SpendStage } from '../../../core/stages/spend';
import { MemoryBackend } from '../../../core/store/memory-backend';
import { RequestLog } from '../../../core/store/request-log';
import { SseFrame } from '../../../core/streaming/sse-frame';
import { startMcpHarness, type McpHarness } from '../../support/mcp-harness';
import { echoCatalog, principal } from '../routing/routing-fixtures';
import { mcpTraffic, modelTraffic, signedIn, strategies } from './traffic-fixtures';

const STARTED = 1_700_000_000_000;

describe('core/stages/spend (real request log on a memory store, real model and MCP traffic strategies)', () => {
  let harness: McpHarness;
  let store: MemoryBackend;
  let stage: SpendStage;
  let now: number;

  before(async () => {
    harness = await startMcpHarness();
  });
  after(async () => {
    await harness.gateway.stop();
  });
  beforeEach(async () => {
    now = STARTED + 250;
    store = new MemoryBackend(() => now);
    const traffic = strategies({ model: await modelTraffic(), mcp: await mcpTraffic(harness.gateway) });
    const logger = createLogger({ level: 'error', write: () => undefined });
    stage = new SpendStage(new RequestLog(store, logger), { now: () => now }, traffic, new RequestReporter(logger, undefined, () => true));
  });

  async function modelContext(parent?: GatewayContext): Promise<AuthedContext> {
    const catalog = await echoCatalog([{ name: 'priced', id: 'echo/priced', price: { inputPerMTok: 1, outputPerMTok: 2 } }]);
    // a child (a Responses round) folds into its parent's entry
    const created = parent ? parent.child('model', 'fold', STARTED, new AbortController().signal, 'req-1') : new GatewayContext('model', 'chat', STARTED, { headers: {} }, new AbortController().signal, 'req-1');
    const ctx = signedIn(created, principal());
    const deployment = catalog.group('priced')![0];
    ctx.model = { format: 'chat', body: { model: 'priced' }, requestedModel: 'priced', stream: false, candidates: [deployment], deployment, attempts: [] };
    return ctx;
  }

  const logged = async () => (await store.queryLogs({ limit: 10 })).data;

  it('prices a JSON answer from its usage, sets the cost header, and writes one log entry when it settles', async () => {
    const ctx = await modelContext();
    ctx.model!.result = { status: 200, headers: {}, body: { usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 } } };
    await stage.run(ctx);
    // 1000 input tokens at $1/M + 500 output tokens at $2/M
    expect(ctx.cost).to.be.closeTo(0.002, 1e-12);
    expect(ctx.responseHeaders[COST_HEADER]).to.equal('0.002');
    await stage.settle(ctx, { status: 200 });
    const entries = await logged();
    expect(entries.map((e) => [e.requestId, e.keyId, e.org, e.model, e.deploymentId, e.promptTokens, e.completionTokens, e.status, e.latencyMs, e.outcome])).to.deep.equal([
      ['req-1', 'k', 'acme', 'priced', 'echo/priced', 1000, 500, 200, 250, 'ok'],
    ]);
  });

  it('meters a stream as it passes (never buffering it) and logs a cut stream with what it used', async () => {
    const ctx = await modelContext();
    async function* upstream() {
      yield SseFrame.fromJson({ choices: [{ index: 0, delta: { content: 'hi' } }] });
      yield SseFrame.fromJson({ choices: [], usage: { prompt_tokens: 2000, completion_tokens: 0, total_tokens: 2000 } });
    }
    ctx.model!.result = { status: 200, headers: {}, stream: upstream() };
    await stage.run(ctx);
    expect(ctx.cost, 'nothing is priced before the frames pass').to.equal(0);
    let frames = 0;
    for await (const _frame of ctx.model!.result!.stream!) frames++;
    expect(frames).to.equal(2);
    expect(ctx.cost).to.be.closeTo(0.002, 1e-12);
    await stage.settle(ctx, { status: 200, reason: 'upstream_cut' });
    expect((await logged()).map((e) => [e.promptTokens, e.outcome])).to.deep.equal([[2000, 'upstream_cut']]);
  });

  it('logs a tool call as "MCP: <tool>" with its server, and folds a child exchange into its parent\'s entry instead', async () => {
    const ctx = signedIn(new GatewayContext('mcp', 'mcp', STARTED, { headers: {} }, new AbortController().signal, 'req-2'), principal());
    ctx.mcp = { method: 'tools/call', toolName: 'docs-search', serverName: 'docs', mcpHeaders: {} };
    await stage.settle(ctx, { status: 200 });
    expect((await logged()).map((e) => [e.model, e.deploymentId, e.details])).to.deep.equal([['MCP: docs-search', 'mcp:docs', { server: 'docs' }]]);

    // (the collector callback is gone: a folding child hands its tokens, cost and deployment to its parent)
    const parent = new GatewayContext('responses', 'responses', STARTED, { headers: {} }, new AbortController().signal, 'req-3');
    const child = await modelContext(parent);
    child.model!.result = { status: 200, headers: {}, body: { usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 } } };
    await stage.run(child);
    await stage.settle(child, { status: 200 });
    expect([parent.foldedChildren, parent.firstDeploymentId, parent.usage.inputTokens, parent.usage.outputTokens]).to.deep.equal([1, 'echo/priced', 1000, 500]);
    expect(parent.cost).to.be.closeTo(0.002, 1e-12);
    expect(await logged()).to.have.length(1);
  });

  it('writes nothing for a request that never got past auth (no principal)', async () => {
    const ctx: GatewayContext = await modelContext();
    ctx.principal = undefined;
    await stage.settle(ctx, { status: 401 });
    expect(await logged()).to.deep.equal([]);
  });
});
