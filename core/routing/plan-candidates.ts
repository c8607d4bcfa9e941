import type { Principal } from '../auth/principal';
import type { Deployment } from './deployment';
import type { DeploymentHealth } from './deployment-health';
import type { ModelCatalog } from './model-catalog';
import { orderDeployments, type RoutingStrategy } from './strategies';

export interface PlanOptions {
  strategy: RoutingStrategy;
  /** extra attempts within each model group after the first */
  retries: number;
  health: DeploymentHealth;
  random: () => number;
}

/** Whether a deployment can serve the request at all (a provider without its API: count_tokens off Anthropic). */
export type ServesRequest = (deployment: Deployment) => boolean;

/**
 * Every attempt a request may make, in order: the requested model's deployments (ordered by the
 * strategy, `retries + 1` attempts cycling through them), then each of its `fallbacks` the same way.
 * Deployments in cooldown are left out. If that leaves nothing, the requested model's deployments are
 * tried anyway, soonest out of cooldown first: refusing outright would turn a short upstream blip into
 * an outage of a model that has no alternative.
 *
 * Fallbacks must be of the same kind and usable by the key (a restricted key never reaches a model
 * outside its list through a fallback).
 */
export function planCandidates(catalog: ModelCatalog, model: string, principal: Principal, options: PlanOptions, serves?: ServesRequest): Deployment[] {
  const primary = servingOf(catalog.group(model), serves);
  if (!primary?.length) return [];
  const kind = primary[0].config.kind;
  const groups: (readonly Deployment[])[] = [primary];
  const seen = new Set([model]);
  for (const name of primary.flatMap((d) => d.config.fallbacks ?? [])) {
    if (seen.has(name)) continue;
    seen.add(name);
    const group = servingOf(catalog.group(name), serves);
    if (group?.length && group[0].config.kind === kind && principal.allowsModel(name)) groups.push(group);
  }

  const attempts = options.retries + 1;
  const plan: Deployment[] = [];
  for (const group of groups) {
    const available = group.filter((d) => !options.health.isCoolingDown(d.id));
    if (available.length) pushCycling(plan, orderDeployments(available, options.strategy, options.health, options.random), attempts);
  }
  if (!plan.length) {
    const soonest = [...primary].sort((a, b) => options.health.cooldownUntil(a.id) - options.health.cooldownUntil(b.id));
    pushCycling(plan, soonest, attempts);
  }
  return plan;
}

/**
 * The model's own deployments that `plan` left out for their cooldown (a fallback stood in for them),
 * soonest out of cooldown first, `retries + 1` attempts: for a request no step of the plan could express.
 */
export function coolingLeftOut(catalog: ModelCatalog, model: string, plan: readonly Deployment[], options: PlanOptions, serves?: ServesRequest): Deployment[] {
  const planned = new Set(plan.map((d) => d.id));
  const left = servingOf(catalog.group(model), serves)?.filter((d) => !planned.has(d.id)) ?? [];
  const out: Deployment[] = [];
  if (left.length) pushCycling(out, [...left].sort((a, b) => options.health.cooldownUntil(a.id) - options.health.cooldownUntil(b.id)), options.retries + 1);
  return out;
}

/**
 * A deployment that cannot serve the request is no candidate: tried, it would answer a 400 that ends the
 * request before the group's other deployments or the fallbacks that can serve it are reached.
 */
function servingOf(group: readonly Deployment[] | undefined, serves: ServesRequest | undefined): readonly Deployment[] | undefined {
  // every request plans: no copy of a group all of whose deployments serve (the usual case)
  return group && serves && !group.every(serves) ? group.filter(serves) : group;
}

function pushCycling(plan: Deployment[], ordered: readonly Deployment[], attempts: number): void {
  for (let i = 0; i < attempts; i++) plan.push(ordered[i % ordered.length]);
}
