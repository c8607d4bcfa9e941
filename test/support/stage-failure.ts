import { expect } from 'chai';
import type { GatewayError } from '../../core/errors/gateway-error';

/**
 * The error a stage refuses with. A stage may refuse synchronously (one with nothing to wait for returns
 * no promise, core/pipeline/stage.ts) or by rejecting: both count; finishing without a refusal fails.
 */
export async function failure(run: () => unknown): Promise<GatewayError> {
  try {
    await run();
  } catch (err) {
    return err as GatewayError;
  }
  return expect.fail('the stage should have refused the request');
}
