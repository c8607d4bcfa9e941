import { settleWithin } from '../../time/settle-within';

/** How long a network store's connections get to close cleanly when the gateway stops. */
export const CLOSE_TIMEOUT_MS = 1000;

/**
 * Wait for a clean close (Redis QUIT, PostgreSQL's terminate) at most `ms`; true if it ended, however.
 * A server that does not answer (frozen, cut off) never answers those either, and the gateway's drain
 * waited on it for good: SIGTERM left the process refusing requests until the store came back or it was
 * killed. What had to be written was flushed before (log rows, limit corrections), within the drain window.
 */
export function closedWithin(closing: Promise<unknown>, ms = CLOSE_TIMEOUT_MS): Promise<boolean> {
  return settleWithin(
    closing.then(
      () => true,
      () => true,
    ),
    ms,
    () => false,
  );
}
