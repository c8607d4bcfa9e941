import { RECOGNIZERS, type PiiEntity, type PiiMatch, type Recognizer } from './recognizers';

/**
 * Find every value of the given entity types in `text`, without overlaps. When two matches overlap the
 * longer one wins, then the higher-priority recognizer (a secret beats an IBAN beats a card ...), then
 * the earlier one: the same text always gives the same answer.
 */
export function detectPii(text: string, recognizers: readonly Recognizer[] = Object.values(RECOGNIZERS)): PiiMatch[] {
  const all: (PiiMatch & { priority: number })[] = [];
  for (const r of recognizers) for (const m of r.find(text)) all.push({ entity: m.entity, start: m.start, end: m.end, priority: r.priority });
  if (all.length <= 1) return all.map(({ entity, start, end }) => ({ entity, start, end }));
  all.sort((a, b) => b.end - b.start - (a.end - a.start) || b.priority - a.priority || a.start - b.start);
  // Which characters a kept match already covers. Checking a candidate's own characters costs its
  // length, and each pattern's matches do not overlap one another, so the whole pass is linear in the
  // text; comparing every candidate with every kept match was quadratic in the number of matches
  // (100 KB of short e-mail addresses took seconds).
  const taken = new Uint8Array(text.length);
  const kept: PiiMatch[] = [];
  for (const m of all) {
    if (overlapsTaken(taken, m.start, m.end)) continue;
    for (let i = m.start; i < m.end; i++) taken[i] = 1;
    kept.push({ entity: m.entity, start: m.start, end: m.end });
  }
  return kept.sort((a, b) => a.start - b.start);
}

function overlapsTaken(taken: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (taken[i] === 1) return true;
  return false;
}

export function recognizersFor(entities: readonly PiiEntity[]): Recognizer[] {
  return entities.map((e) => RECOGNIZERS[e]);
}
