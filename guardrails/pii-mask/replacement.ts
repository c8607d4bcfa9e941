import { createHmac } from 'node:crypto';
import type { PiiEntity } from './recognizers';

export type ReplacementStyle = 'placeholder' | 'redact' | 'hash';

/**
 * How a found value is replaced:
 * - `placeholder`: its type, `[EMAIL]`;
 * - `redact`: `[REDACTED]`, which says nothing about what was there;
 * - `hash`: `[EMAIL:1f0c9a4be2]`, a keyed hash so the same value maps to the same token (useful for
 *   joining logs) without being reversible by hashing guesses: nine-digit SSNs are easy to enumerate,
 *   so a plain hash would leak them.
 */
export function makeReplacer(style: ReplacementStyle, hashKey: Buffer): (entity: PiiEntity, value: string) => string {
  switch (style) {
    case 'redact':
      return () => '[REDACTED]';
    case 'hash':
      return (entity, value) => `[${entity}:${createHmac('sha256', hashKey).update(value).digest('hex').slice(0, 10)}]`;
    default:
      return (entity) => `[${entity}]`;
  }
}
