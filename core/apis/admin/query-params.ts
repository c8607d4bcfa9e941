/**
 * Query parameters the management API's read routes share: times, page sizes and the log's status filter.
 * Each bad value is a 400 naming the parameter.
 */
import { InvalidRequestError } from '../../errors/gateway-error';

export function parseLimit(raw: unknown): number {
  if (raw === undefined) return 50;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new InvalidRequestError('limit must be an integer from 1 to 1000.', 'invalid_value', { param: 'limit' });
  return n;
}

/**
 * A log page's cursor: the `next_cursor` an earlier page gave, which every store makes from a row's
 * sequence number. Anything else is refused here: PostgreSQL would refuse it as a bigint, which the
 * store's guard counted as a store failure (a 503, and enough of them opened its breaker for everyone),
 * and the other stores answered an empty page.
 */
export function parseCursor(raw: unknown): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^[0-9]{1,15}$/.test(raw)) throw new InvalidRequestError('cursor must be the next_cursor of an earlier page.', 'invalid_value', { param: 'cursor' });
  return raw;
}

/**
 * The times a filter may name: years 1 to 9999. Beyond them an ISO string is `0000-...` or `+010000-...`,
 * which PostgreSQL refuses as a timestamp: the store's guard counted that as a store failure (a 503), and
 * five such reads at once opened its breaker for every organisation, as a bad cursor did.
 */
const FIRST_TIME = Date.parse('0001-01-01T00:00:00.000Z');
const END_OF_TIMES = Date.parse('+010000-01-01T00:00:00.000Z');

/** An ISO-8601 date or time, normalised to a UTC ISO string (how log entries store `time`). */
export function parseTime(raw: unknown, param: string): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  const t = Date.parse(String(raw));
  if (Number.isNaN(t)) throw new InvalidRequestError(`${param} must be an ISO-8601 date or time.`, 'invalid_value', { param });
  if (t < FIRST_TIME || t >= END_OF_TIMES) throw new InvalidRequestError(`${param} must be a time in the years 1 to 9999.`, 'invalid_value', { param });
  return new Date(t).toISOString();
}

export function parseSince(raw: unknown): string | undefined {
  return parseTime(raw, 'since');
}

/** `since` must come before `until` when both are given. */
export function parseRange(query: Record<string, unknown>): { since?: string; until?: string } {
  const since = parseSince(query.since);
  const until = parseTime(query.until, 'until');
  if (since && until && since >= until) throw new InvalidRequestError('since must be before until.', 'invalid_value', { param: 'until' });
  return { since, until };
}

const STATUS_CLASSES = new Map([
  ['success', [200, 399]],
  ['error', [400, 599]],
]);

/**
 * `status=200` (one code), `status=4xx` (a class) or `status=success|error` (below 400, 400 and up): the
 * bounds the store filters on.
 */
export function parseStatus(raw: unknown): { statusMin?: number; statusMax?: number } {
  if (raw === undefined || raw === '') return {};
  const s = String(raw).toLowerCase();
  const named = STATUS_CLASSES.get(s);
  if (named) return { statusMin: named[0], statusMax: named[1] };
  if (/^[1-5]xx$/.test(s)) return { statusMin: Number(s[0]) * 100, statusMax: Number(s[0]) * 100 + 99 };
  if (/^[1-5][0-9][0-9]$/.test(s)) return { statusMin: Number(s), statusMax: Number(s) };
  throw new InvalidRequestError('status must be a code (e.g. 429), a class (e.g. 5xx), success or error.', 'invalid_value', { param: 'status' });
}

/**
 * A string filter, or undefined when absent or empty. Given twice (`?key=a&key=b`) it arrives as an
 * array: refused, where it used to be dropped and every row answered.
 */
export function optionalString(raw: unknown, param: string): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string') throw new InvalidRequestError(`${param} must be given once, as text.`, 'invalid_value', { param });
  return raw;
}
