import type { Router } from 'express';
import { InvalidRequestError } from '../../errors/gateway-error';
import { usageByDay, type UsageSplit } from '../../store/usage-by-day';
import { adminAuth, adminHandler, adminOf, orgFilter } from './admin-auth';
import type { GatewayServices } from '../../http/gateway-services';
import { parseRange } from './query-params';

const SPLITS = new Set<UsageSplit>(['none', 'key', 'org', 'model', 'tool']);
const DAY_MS = 86_400_000;
/** a chart of more days than this is unreadable, and the scan would be long */
const MAX_DAYS = 366;

function parseTimeZone(raw: unknown): string {
  if (raw === undefined || raw === '') return 'UTC';
  const tz = String(raw);
  try {
    new Intl.DateTimeFormat('en-CA', { timeZone: tz });
    return tz;
  } catch {
    throw new InvalidRequestError('tz must be an IANA time zone name, e.g. Europe/Paris.', 'invalid_value', { param: 'tz' });
  }
}

/**
 * `GET /admin/v1/spend/daily?since=&until=&splitBy=none|key|org|model|tool&tz=&org=`: spend and requests
 * per day (in `tz`, default UTC) over [since, until) (default: the last 30 days), as one series per group,
 * plus totals and the top keys and models of the range. Totals count every request of the range, as
 * `/admin/v1/spend` does for the same `since` and `until`; `splitBy=tool` charts MCP tool calls only.
 */
export function installAdminUsageRoutes(router: Router, services: GatewayServices): void {
  const auth = adminAuth(services);

  router.get(
    '/admin/v1/spend/daily',
    auth,
    adminHandler(async (req, res) => {
      const split = String(req.query.splitBy ?? 'none') as UsageSplit;
      if (!SPLITS.has(split)) throw new InvalidRequestError('splitBy must be one of none, key, org, model, tool.', 'invalid_value', { param: 'splitBy' });
      const timeZone = parseTimeZone(req.query.tz);
      const range = parseRange(req.query);
      const until = range.until ? Date.parse(range.until) : services.clock.now();
      const since = range.since ? Date.parse(range.since) : until - 30 * DAY_MS;
      if (since >= until) throw new InvalidRequestError('since must be before until.', 'invalid_value', { param: 'since' });
      if (until - since > MAX_DAYS * DAY_MS) throw new InvalidRequestError(`The range may span at most ${MAX_DAYS} days.`, 'invalid_value', { param: 'since' });
      const org = orgFilter(adminOf(res), req.query.org);
      const sinceIso = new Date(since).toISOString();
      const untilIso = new Date(until).toISOString();
      const usage = usageByDay(await services.requestLog.buckets(sinceIso, untilIso, org), { since, until, timeZone, split });
      res.json({ object: 'spend_by_day', since: sinceIso, until: untilIso, time_zone: timeZone, split_by: split, ...usage });
    }),
  );
}
