/** The median of a list of numbers: the middle one once sorted (the upper of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}
