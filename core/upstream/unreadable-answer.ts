import { GatewayError, UpstreamError } from '../errors/gateway-error';

/**
 * What a translator's throw means. A GatewayError is one it meant (a content filter, a refused field) and
 * stays as it is. Anything else is an answer or event that is JSON but not of the shape the upstream's API
 * defines (a null body, a list where an object belongs): the upstream's fault, a 502
 * `upstream_bad_response`, not the gateway's 500, and not a broken connection.
 */
export function unreadableAnswer(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new UpstreamError('The upstream sent a response the gateway could not read.', 'upstream_bad_response', { cause: err });
}
