import { expect } from 'chai';
import { DeploymentHealth, DEFAULT_COOLDOWN } from '../../../core/routing/deployment-health';
import { orderDeployments, weightedDraw } from '../../../core/routing/strategies';
import { echoCatalog, sequence } from './routing-fixtures';

describe('load-balancing strategies', () => {
  async function pool() {
    const catalog = await echoCatalog([
      { name: 'pool', id: 'a', weight: 1 },
      { name: 'pool', id: 'b', weight: 3 },
      { name: 'pool', id: 'c', weight: 6 },
    ]);
    const group = catalog.group('pool')!;
    return { group, health: new DeploymentHealth(group, DEFAULT_COOLDOWN, () => 0) };
  }

  it('weighted: draws in proportion to weight, without replacement', async () => {
    const { group } = await pool();
    // total 10: 0.05 -> a (0..1); then among b,c (total 9): 0.5*9=4.5 -> c (3..9); b last
    expect(weightedDraw(group, sequence(0.05, 0.5)).map((d) => d.id)).to.deep.equal(['a', 'c', 'b']);
    // 0.35*10 = 3.5 -> b (1..4); then among a,c (total 7): 0.1*7=0.7 -> a
    expect(weightedDraw(group, sequence(0.35, 0.1)).map((d) => d.id)).to.deep.equal(['b', 'a', 'c']);
  });

  it('weighted: a heavier deployment is picked first more often', async () => {
    const { group, health } = await pool();
    const firsts: Record<string, number> = { a: 0, b: 0, c: 0 };
    // an even sweep of the random source stands in for many requests
    for (let i = 0; i < 1000; i++) firsts[orderDeployments(group, 'weighted', health, sequence((i + 0.5) / 1000, 0))[0].id]++;
    expect(firsts).to.deep.equal({ a: 100, b: 300, c: 600 });
  });

  it('least-busy: prefers the deployment with the fewest requests in flight', async () => {
    const { group, health } = await pool();
    const endA = health.begin('a');
    health.begin('c');
    health.begin('c');
    expect(orderDeployments(group, 'least-busy', health, sequence(0.99, 0.99)).map((d) => d.id)).to.deep.equal(['b', 'a', 'c']);
    endA();
    health.begin('b');
    expect(orderDeployments(group, 'least-busy', health, sequence(0.99, 0.99))[0].id).to.equal('a');
  });

  it('latency: prefers the fastest time to first byte, and measures an unmeasured deployment first', async () => {
    const { group, health } = await pool();
    health.recordSuccess('a', 300);
    health.recordSuccess('b', 100);
    expect(orderDeployments(group, 'latency', health, sequence(0.99, 0.99)).map((d) => d.id)).to.deep.equal(['c', 'b', 'a']);
    health.recordSuccess('c', 200);
    expect(orderDeployments(group, 'latency', health, sequence(0.99, 0.99)).map((d) => d.id)).to.deep.equal(['b', 'c', 'a']);
  });
});
