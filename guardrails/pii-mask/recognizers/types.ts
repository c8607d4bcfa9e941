/** The personal-data types the pii-mask engine knows. The names double as placeholders: `[EMAIL]`. */
export const PII_ENTITIES = ['EMAIL', 'PHONE', 'CREDIT_CARD', 'US_SSN', 'IBAN', 'IP_ADDRESS', 'SECRET'] as const;
export type PiiEntity = (typeof PII_ENTITIES)[number];

/** A found value: `text.slice(start, end)`. Never leaves the engine except as a replacement. */
export interface PiiMatch {
  entity: PiiEntity;
  start: number;
  end: number;
}

export interface Recognizer {
  readonly entity: PiiEntity;
  /** breaks ties between overlapping matches of equal length: higher wins */
  readonly priority: number;
  find(text: string): PiiMatch[];
}

/**
 * Run a global regex over `text` and keep the matches `accept` approves. `accept` may narrow the match
 * by returning a [start, end] pair (e.g. to drop a trailing separator), or reject it with false.
 */
export function scan(
  entity: PiiEntity,
  pattern: RegExp,
  text: string,
  accept: (match: RegExpExecArray) => boolean | [number, number] = () => true,
): PiiMatch[] {
  if (!pattern.global) throw new Error(`recognizer pattern for ${entity} must be global`);
  const out: PiiMatch[] = [];
  pattern.lastIndex = 0;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    if (m[0].length === 0) {
      pattern.lastIndex++;
      continue;
    }
    const verdict = accept(m);
    if (verdict === true) out.push({ entity, start: m.index, end: m.index + m[0].length });
    else if (Array.isArray(verdict)) out.push({ entity, start: verdict[0], end: verdict[1] });
  }
  return out;
}

/** The digits of a string, without separators. */
export function digitsOf(s: string): string {
  return s.replace(/\D+/g, '');
}
