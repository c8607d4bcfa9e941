import type { Principal } from '../auth/principal';
import { toGatewayError } from '../errors/gateway-error';
import type { GatewayServices } from './gateway-services';

/**
 * The auth stage's check (the one place a credential is checked) for a route answered beside the
 * pipeline (the model list, the management API). A 401 (or 403) is counted as the pipeline counts its own, or a
 * flood of bad keys there would not show in the metrics. `model`: the model asked about, if any, for
 * the metrics' label.
 */
export async function checkKeyBeside(services: GatewayServices, endpoint: string, token: string | undefined, adminKeyAllowed: boolean, model?: string): Promise<Principal> {
  const startedAt = services.clock.now();
  try {
    return await services.auth.check(token, adminKeyAllowed);
  } catch (err) {
    // the 403 too (the admin key on a model route): the auth stage's refusal of it is counted on chat
    const status = toGatewayError(err).status;
    if (status === 401 || status === 403) services.reporter.refusedBeside(endpoint, model, status, startedAt, services.clock.now());
    throw err;
  }
}
