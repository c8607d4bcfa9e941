import { expect } from 'chai';
import type { GatewayError } from '../../core/errors/gateway-error';

/** What `run` rejects with; resolving fails the test. Typed as a gateway error, what the client throws. */
export async function rejection(run: Promise<unknown>): Promise<GatewayError> {
  return run.then(
    () => expect.fail('the call should have failed'),
    (err: GatewayError) => err,
  );
}
