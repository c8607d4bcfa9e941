/**
 * The targets in repetition `rep`'s order: each repetition starts with another target, so drift in the
 * machine's load is shared among them rather than landing on one.
 */
export function inTurn<T>(targets: readonly T[], rep: number): T[] {
  return targets.map((_, i) => targets[(i + rep) % targets.length]);
}
