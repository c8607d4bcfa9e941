import type { Principal } from '../auth/principal';
import type { Deployment } from './deployment';
import type { ModelCatalog } from './model-catalog';

/**
 * The deployments a request may use, in the order to try them: a weighted pick from the model's group.
 * (Retries across the group and `fallbacks` extend this list; see the call stage.)
 */
export function planCandidates(catalog: ModelCatalog, model: string, _principal: Principal, random: () => number = Math.random): Deployment[] {
  const first = catalog.pickWeighted(model, random);
  return first ? [first] : [];
}
