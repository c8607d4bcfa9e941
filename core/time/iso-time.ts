/** Times from here on print with a five- or six-digit year, which the fast path below does not write. */
const YEAR_10000_MS = Date.UTC(10000, 0, 1);

/** The last second printed: its text up to the milliseconds ("2026-11-26T18:47:03."). */
let cachedSecond = Number.NaN;
let cachedPrefix = '';

/**
 * `new Date(ms).toISOString()`, the same text, for the times every request prints: its log entry's time
 * and its access line's. V8 prints an ISO date through a runtime call, about 0.5 µs alone and several µs
 * among a request's other work (the log entry's time was most of the spend stage's own time in a
 * profile); here a second's prefix is printed once and each time adds its milliseconds.
 */
export function isoTime(ms: number): string {
  // fractions, times before 1970 and after 9999, NaN: the Date's own printing (and its RangeError)
  if (!(Number.isInteger(ms) && ms >= 0 && ms < YEAR_10000_MS)) return new Date(ms).toISOString();
  const milli = ms % 1000;
  const second = ms - milli;
  if (second !== cachedSecond) {
    cachedPrefix = new Date(second).toISOString().slice(0, 20);
    cachedSecond = second;
  }
  return cachedPrefix + (milli < 10 ? '00' : milli < 100 ? '0' : '') + milli + 'Z';
}
