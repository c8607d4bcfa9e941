import { expect } from 'chai';
import type { GatewayError } from '../../../core/errors/gateway-error';
import { GatewayContext, type AuthedContext } from '../../../core/pipeline/context';
import type { ApiFormat } from '../../../core/plugins/contracts';
import { RouteStage } from '../../../core/stages/route';
import { echoCatalog, principal } from '../routing/routing-fixtures';
import { modelTraffic, routingPolicy, signedIn, strategies } from './traffic-fixtures';
import { failure } from '../../support/stage-failure';

// Budget admission is no longer the route stage's: the call stage admits just before the work that costs
// (its test, call.test.ts, has the budget case this file used to hold).
describe('core/stages/route (real catalog of echo deployments, real routing policy, model traffic strategy)', () => {
  const now = 1_000_000;
  async function setup() {
    const catalog = await echoCatalog([
      { name: 'main', id: 'main-1', fallbacks: ['spare'], price: { inputPerMTok: 1_000_000, outputPerMTok: 0 } },
      { name: 'main', id: 'main-2' },
      { name: 'spare', id: 'spare-1' },
      { name: 'embed', id: 'embed-1', kind: 'embedding' },
    ]);
    return new RouteStage(strategies({ model: await modelTraffic({ catalog, routing: routingPolicy(catalog, () => now) }) }));
  }

  function context(model: string, format: ApiFormat = 'chat', models?: string[]): AuthedContext {
    const ctx = signedIn(new GatewayContext('model', format === 'embeddings' ? 'embeddings' : 'chat', now, { headers: {} }, new AbortController().signal), principal(models));
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
    const unknown = await failure(() => stage.run(context('nope')));
    expect([unknown.status, unknown.code]).to.deep.equal([404, 'model_not_found']);
    const kind = await failure(() => stage.run(context('embed', 'chat')));
    expect([kind.status, kind.code]).to.deep.equal([400, 'model_kind_mismatch']);
  });
});
