import type { Deployment } from './deployment';
import type { DeploymentHealth } from './deployment-health';

export type RoutingStrategy = 'weighted' | 'least-busy' | 'latency';

/**
 * The order in which to try a model group's deployments. `weighted` draws without replacement in
 * proportion to `weight`; `least-busy` prefers the fewest requests in flight and `latency` the lowest
 * time to first byte (a deployment not measured yet goes first, so it gets measured), with the weighted
 * draw breaking ties. `random` is injected so tests are deterministic.
 */
export function orderDeployments(deployments: readonly Deployment[], strategy: RoutingStrategy, health: DeploymentHealth, random: () => number): Deployment[] {
  const drawn = weightedDraw(deployments, random);
  if (strategy === 'weighted' || drawn.length < 2) return drawn;
  const rank = new Map(drawn.map((d, i) => [d.id, i]));
  const score = strategy === 'least-busy' ? (d: Deployment) => health.inFlight(d.id) : (d: Deployment) => health.latencyMs(d.id) ?? -1;
  return drawn.sort((a, b) => score(a) - score(b) || rank.get(a.id)! - rank.get(b.id)!);
}

/** A weighted random permutation: each position is a weighted pick among the deployments left. */
export function weightedDraw(deployments: readonly Deployment[], random: () => number): Deployment[] {
  const left = [...deployments];
  const out: Deployment[] = [];
  while (left.length > 1) {
    const total = left.reduce((sum, d) => sum + d.config.weight, 0);
    let point = random() * total;
    let index = left.length - 1;
    for (let i = 0; i < left.length; i++) {
      point -= left[i].config.weight;
      if (point < 0) {
        index = i;
        break;
      }
    }
    out.push(left.splice(index, 1)[0]);
  }
  out.push(...left);
  return out;
}
