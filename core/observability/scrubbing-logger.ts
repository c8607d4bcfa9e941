import { scrubSecrets } from '../errors/scrub';
import type { Logger } from '../plugins/contracts';

type ChildLogger = Logger & { child?(b: Record<string, unknown>): Logger };

/**
 * A logger handed in by the embedder (not our pino one): the same secret scrubbing on its way in, so
 * the embedder's sink never sees a configured secret either.
 */
export function scrubbingLogger(logger: ChildLogger): ChildLogger {
  const clean = (fields?: Record<string, unknown>) => (fields === undefined ? undefined : (scrubStrings(fields, 0) as Record<string, unknown>));
  return {
    debug: (m, f) => logger.debug(scrubSecrets(m), clean(f)),
    info: (m, f) => logger.info(scrubSecrets(m), clean(f)),
    warn: (m, f) => logger.warn(scrubSecrets(m), clean(f)),
    error: (m, f) => logger.error(scrubSecrets(m), clean(f)),
    ...(logger.child ? { child: (b: Record<string, unknown>) => scrubbingLogger(logger.child!(b)) } : {}),
  };
}

/** The same value with every string in it (in plain objects and arrays, a few levels deep) scrubbed. */
function scrubStrings(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return scrubSecrets(value);
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => scrubStrings(v, depth + 1));
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(value)) out[k] = scrubStrings(v, depth + 1);
  return out;
}
