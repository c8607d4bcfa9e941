import { expect } from 'chai';
import { DeploymentHealth, cooldownSettings } from '../../../core/routing/deployment-health';
import { planCandidates, type PlanOptions } from '../../../core/routing/plan-candidates';
import { resolveConfig } from '../../../core/config/load-config';
import { catalogOf, principal, sequence } from './routing-fixtures';

describe('planning the attempts of a request', () => {
  let now = 1_000_000;
  async function setup(retries = 2) {
    const config = resolveConfig(
      {
        store: { url: 'memory://' },
        providers: [{ id: 'echo', type: 'echo' }],
        models: [
          { name: 'main', provider: 'echo', id: 'main-1', weight: 1, fallbacks: ['spare', 'secret'] },
          { name: 'main', provider: 'echo', id: 'main-2', weight: 1 },
          { name: 'spare', provider: 'echo', id: 'spare-1' },
          { name: 'embed', provider: 'echo', id: 'embed-1', kind: 'embedding' },
          { name: 'secret', provider: 'echo', id: 'secret-1' },
        ],
      },
      {},
    );
    // a fallback of another kind, which the config loader refuses, is still left out here
    config.models[0].fallbacks!.splice(1, 0, 'embed');
    const catalog = await catalogOf(config);
    const all = catalog.names().flatMap((n) => catalog.group(n)!);
    const health = new DeploymentHealth(all, cooldownSettings({ cooldown: { failures: 1 } }), () => now);
    const options: PlanOptions = { strategy: 'weighted', retries, health, random: sequence(0.1) };
    return { catalog, health, options };
  }
  const ids = (plan: { id: string }[]) => plan.map((d) => d.id);

  it('tries the group retries+1 times, cycling through its deployments, then each fallback the same way', async () => {
    const { catalog, options } = await setup();
    expect(ids(planCandidates(catalog, 'main', principal(), options))).to.deep.equal(['main-1', 'main-2', 'main-1', 'spare-1', 'spare-1', 'spare-1', 'secret-1', 'secret-1', 'secret-1']);
  });

  it('leaves out fallbacks of another kind and fallbacks the key may not use', async () => {
    const { catalog, options } = await setup(0);
    expect(ids(planCandidates(catalog, 'main', principal(['main', 'spare']), options))).to.deep.equal(['main-1', 'spare-1']);
  });

  it('leaves out deployments in cooldown', async () => {
    const { catalog, health, options } = await setup(1);
    health.recordFailure('main-1', 'upstream_error');
    expect(ids(planCandidates(catalog, 'main', principal(['main', 'spare']), options))).to.deep.equal(['main-2', 'main-2', 'spare-1', 'spare-1']);
  });

  it('falls back to the requested model\'s own deployments, soonest out of cooldown first, when everything is cooling down', async () => {
    const { catalog, health, options } = await setup(1);
    health.recordFailure('main-2', 'upstream_error');
    now += 1_000;
    health.recordFailure('main-1', 'upstream_error');
    health.recordFailure('spare-1', 'upstream_error');
    expect(ids(planCandidates(catalog, 'main', principal(['main', 'spare']), options))).to.deep.equal(['main-2', 'main-1']);
  });

  it('plans nothing for an unknown model', async () => {
    const { catalog, options } = await setup();
    expect(planCandidates(catalog, 'nope', principal(), options)).to.deep.equal([]);
  });
});
