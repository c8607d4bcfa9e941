import type { TimeoutsConfig } from '../config/types';
import { InvalidRequestError } from '../errors/gateway-error';

export const TIMEOUT_HEADER = 'x-gateway-timeout';
const MAX_TIMEOUT_SECONDS = 3_600;

/**
 * `x-gateway-timeout: <seconds>` sets, for this request and for each attempt, how long the gateway waits
 * for an upstream to start answering (connecting included) and for each next stream chunk. It overrides
 * the model's `timeouts` and the global ones.
 */
export function requestTimeouts(headers: Readonly<Record<string, string | string[] | undefined>>): TimeoutsConfig | undefined {
  const raw = headers[TIMEOUT_HEADER];
  if (raw === undefined) return undefined;
  const text = Array.isArray(raw) ? raw[0] : raw;
  const seconds = Number(text);
  if (!text || !Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_TIMEOUT_SECONDS) {
    throw new InvalidRequestError(`The ${TIMEOUT_HEADER} header must be a number of seconds greater than 0 and at most ${MAX_TIMEOUT_SECONDS}.`, 'invalid_timeout', { param: TIMEOUT_HEADER });
  }
  const ms = Math.max(1, Math.round(seconds * 1000));
  return { firstByteMs: ms, idleMs: ms };
}
