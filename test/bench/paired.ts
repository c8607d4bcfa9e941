import { median } from './median';

/**
 * Two builds measured in the same rounds, side by side (compare-builds.ts). On a shared host the cost of
 * the same build drifts by a quarter or more within minutes, but the two runs of one round see about the
 * same host, so each round's ratio is compared, not the two series' medians: the median ratio says how
 * much, and the sign test says whether the host's noise alone would often split the rounds that unevenly.
 */
export interface PairedComparison {
  /** B's value over A's, round by round */
  ratios: number[];
  /** the median of the ratios (below 1: B costs less) */
  medianRatio: number;
  /** rounds in which B's value was lower, and higher (equal rounds count in neither) */
  lower: number;
  higher: number;
  /**
   * The two-sided sign test: how likely a split at least this uneven is when neither build costs less.
   * Below 0.05, the difference is more than the host's noise. Five rounds can never get there (5-0 is
   * 0.0625); eight take 8-0 (0.008; 7-1 is 0.070); ten take 9-1 (0.021).
   */
  p: number;
}

export function comparePaired(a: readonly number[], b: readonly number[]): PairedComparison {
  if (a.length !== b.length || a.length === 0) throw new Error(`paired values must be two lists of one length, got ${a.length} and ${b.length}`);
  const ratios = a.map((x, i) => b[i] / x);
  const lower = ratios.filter((r) => r < 1).length;
  const higher = ratios.filter((r) => r > 1).length;
  return { ratios, medianRatio: median(ratios), lower, higher, p: signTestP(lower, higher) };
}

/** Two-sided sign test: twice the chance of at most min(k, n - k) successes in n fair coin flips, at most 1. */
export function signTestP(lower: number, higher: number): number {
  const n = lower + higher;
  const k = Math.min(lower, higher);
  let tail = 0;
  let ways = 1; // n choose i, built up from n choose 0
  for (let i = 0; i <= k; i++) {
    tail += ways;
    ways = (ways * (n - i)) / (i + 1);
  }
  return Math.min(1, (2 * tail) / 2 ** n);
}
