import { RECOGNIZERS, type PiiEntity, type PiiMatch, type Recognizer } from './recognizers';

/**
 * Find every value of the given entity types in `text`, without overlaps. When two matches overlap the
 * longer one wins, then the higher-priority recognizer (a secret beats an IBAN beats a card ...), then
 * the earlier one: the same text always gives the same answer.
 */
export function detectPii(text: string, recognizers: readonly Recognizer[] = Object.values(RECOGNIZERS)): PiiMatch[] {
  const all: (PiiMatch & { priority: number })[] = [];
  for (const r of recognizers) for (const m of r.find(text)) all.push({ ...m, priority: r.priority });
  if (all.length <= 1) return all.map(({ entity, start, end }) => ({ entity, start, end }));
  all.sort((a, b) => b.end - b.start - (a.end - a.start) || b.priority - a.priority || a.start - b.start);
  const kept: PiiMatch[] = [];
  for (const m of all) {
    if (kept.some((k) => m.start < k.end && k.start < m.end)) continue;
    kept.push({ entity: m.entity, start: m.start, end: m.end });
  }
  return kept.sort((a, b) => a.start - b.start);
}

export function recognizersFor(entities: readonly PiiEntity[]): Recognizer[] {
  return entities.map((e) => RECOGNIZERS[e]);
}
