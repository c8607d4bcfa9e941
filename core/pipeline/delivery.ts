import type { GatewayError } from '../errors/gateway-error';
import type { AuthedContext, GatewayContext } from './context';
import type { Outcome } from './stage';

/**
 * What an endpoint family hands the driver (`Pipeline.execute`): how to write a result and how to write
 * a failure, in its own wire shape (JSON, SSE, JSON-RPC, a value handed back to a parent exchange).
 */
export interface Delivery {
  /**
   * Write the result once every stage has run. Returns how it ended when that is not plain success
   * (a stream cut by the upstream); a throw is handled like a stage's failure.
   */
  deliver(ctx: AuthedContext): Promise<Outcome | void>;
  /**
   * Write a failure (never called when the client went away: there is nobody to write to). Returns how
   * the request ended when the failure went into a stream already under way (a Responses stream cut by
   * its upstream), as `deliver` does for the streams it writes.
   */
  fail(ctx: GatewayContext, error: GatewayError): Outcome | void | Promise<Outcome | void>;
}
