import { expect } from 'chai';
import { NO_MCP } from '../../../core/apis/mcp/mcp-stage-handlers';
import type { OrganizationConfig } from '../../../core/config/types';
import type { GatewayError } from '../../../core/errors/gateway-error';
import { LimitsAdmission } from '../../../core/limits/admission';
import { LimitSubjects } from '../../../core/limits/limit-subjects';
import { GatewayContext } from '../../../core/pipeline/context';
import type { ApiFormat } from '../../../core/plugins/contracts';
import { DeploymentHealth, cooldownSettings } from '../../../core/routing/deployment-health';
import { RoutingPolicy } from '../../../core/routing/routing-policy';
import { RouteStage } from '../../../core/stages/route';
import { MemoryBackend } from '../../../core/store/memory-backend';
import { echoCatalog, principal, sequence } from '../routing/routing-fixtures';

async function failure(run: Promise<unknown>): Promise<GatewayError> {
  return run.then(
    () => expect.fail('the stage should have refused the request'),
    (err: GatewayError) => err,
  );
}

describe('core/stages/route (real catalog of echo deployments, real routing policy and admission)', () => {
  const now = 1_000_000;
  async function setup(orgs: OrganizationConfig[] = [{ id: 'acme' }]) {
    const catalog = await echoCatalog([
      { name: 'main', id: 'main-1', fallbacks: ['spare'], price: { inputPerMTok: 1_000_000, outputPerMTok: 0 } },
      { name: 'main', id: 'main-2' },
      { name: 'spare', id: 'spare-1' },
      { name: 'embed', id: 'embed-1', kind: 'embedding' },
    ]);
    const all = catalog.names().flatMap((n) => catalog.group(n)!);
    const routing = { retries: 0 };
    const policy = new RoutingPolicy(routing, new DeploymentHealth(all, cooldownSettings(routing), () => now), { now: () => now }, sequence(0.1));
    const store = new MemoryBackend(() => now);
    const admission = new LimitsAdmission(new LimitSubjects(orgs, store, () => now), store, { now: () => now }, () => 0);
    return new RouteStage(catalog, NO_MCP, policy, admission);
  }

  function context(model: string, format: ApiFormat = 'chat', models?: string[]): GatewayContext {
    const ctx = new GatewayContext('model', format === 'embeddings' ? 'embeddings' : 'chat', now, { headers: {} }, new AbortController().signal);
    ctx.principal = principal(models);
    ctx.model = { format, body: { model, messages: [{ role: 'user', content: 'hi' }] }, requestedModel: model, stream: false, candidates: [], attempts: [] };
    return ctx;
  }

  it('plans the deployments to try: one of the group, then the fallback', async () => {
    const stage = await setup();
    const ctx = context('main');
    await stage.run(ctx);
    expect(ctx.model!.candidates.map((d) => d.id)).to.deep.equal(['main-1', 'spare-1']);
    expect(ctx.model!.deployment?.id).to.equal('main-1');
  });

  it('refuses an unknown model with 404 model_not_found, and a model of another kind with 400 model_kind_mismatch', async () => {
    const stage = await setup();
    const unknown = await failure(stage.run(context('nope')));
    expect([unknown.status, unknown.code]).to.deep.equal([404, 'model_not_found']);
    const kind = await failure(stage.run(context('embed', 'chat')));
    expect([kind.status, kind.code]).to.deep.equal([400, 'model_kind_mismatch']);
  });

  it("admits requests against the organisation's budget and refuses the next once it is spent (429 budget_exceeded)", async () => {
    const stage = await setup([{ id: 'acme', maxBudget: 0.5 }]);
    const first = context('main');
    await stage.run(first);
    expect(first.logDetails.budgetReserved, 'the estimated cost is reserved at admission').to.be.greaterThan(0);
    first.cost = 1; // what the spend stage found it cost
    await stage.settle(first, { status: 200 });
    const err = await failure(stage.run(context('main')));
    expect([err.status, err.code]).to.deep.equal([429, 'budget_exceeded']);
  });
});
