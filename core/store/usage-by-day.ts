/**
 * Spend and requests per calendar day in one time zone, split into series (by key, organisation, model or
 * MCP tool), for the usage charts. One pass over the spend rollup rows of the range (spend-rollup.ts):
 * each hour's row goes to the day its hour starts in, exact in every time zone whose offset is whole hours.
 */
import { roundCost } from '../spend/pricing';
import { orgKeyId } from '../auth/org-key-id';
import type { SpendBucket } from './spend-rollup';
import { groupKey } from './request-log';

export type UsageSplit = 'none' | 'key' | 'org' | 'model' | 'tool';

export interface UsageSeries {
  group: string;
  /** split by key: the key's organisation (a config key's id is unique only within it) */
  org?: string | null;
  /** one value per day of `days` */
  cost: number[];
  requests: number[];
}

export interface UsageTotals {
  cost: number;
  requests: number;
  promptTokens: number;
  completionTokens: number;
}

export interface UsageByDay {
  days: string[];
  series: UsageSeries[];
  totals: UsageTotals;
  /** the biggest spenders of the range, whatever the split */
  top: { keys: TopRow[]; models: TopRow[] };
}

export interface TopRow {
  group: string;
  /** a top key's organisation */
  org?: string | null;
  cost: number;
  requests: number;
}

/** Series beyond this many (by cost) are summed into one `(other)` series: a chart stays readable. */
export const MAX_SERIES = 8;
const TOP_ROWS = 5;
const MCP_PREFIX = 'MCP: ';

/** Every time zone's offset is a whole number of quarter hours, so one quarter hour lies within one day. */
const QUARTER_HOUR_MS = 900_000;

/**
 * `YYYY-MM-DD` of an instant in a time zone (en-CA formats dates that way). Formatting is the slow part of
 * a scan, so each quarter hour is formatted once.
 */
export function dayFormatter(timeZone: string): (t: number) => string {
  const f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
  const byQuarter = new Map<number, string>();
  return (t) => {
    const q = Math.floor(t / QUARTER_HOUR_MS);
    let day = byQuarter.get(q);
    if (day === undefined) byQuarter.set(q, (day = f.format(q * QUARTER_HOUR_MS)));
    return day;
  };
}

/** Every day from `since` to `until` (exclusive) in the zone; steps of 6 hours never skip a day, even across DST. */
export function daysBetween(since: number, until: number, dayOf: (t: number) => string): string[] {
  const days: string[] = [];
  for (let t = since; t < until; t += 6 * 3600_000) {
    const d = dayOf(t);
    if (days[days.length - 1] !== d) days.push(d);
  }
  const last = dayOf(until - 1);
  if (days[days.length - 1] !== last) days.push(last);
  return days;
}

function groupOf(e: SpendBucket, split: UsageSplit): string | undefined {
  switch (split) {
    case 'none':
      return 'all';
    case 'key':
    case 'org':
    case 'model':
      return groupKey(e, split);
    case 'tool': {
      // only MCP tool calls have a tool; model traffic is not part of this split, nor are prompt gets and
      // resource reads (`MCP: prompt <name>`, `MCP: resource <uri>`; MCP tool names have no spaces)
      if (!e.model?.startsWith(MCP_PREFIX)) return undefined;
      const tool = e.model.slice(MCP_PREFIX.length);
      return tool.startsWith('prompt ') || tool.startsWith('resource ') ? undefined : tool;
    }
  }
}

function addTop(rows: Map<string, TopRow>, group: string, e: SpendBucket, org?: string | null): void {
  // two organisations may each have a config key `bot`: keyed by id alone, one row summed both
  const id = org === undefined ? group : orgKeyId(org, group);
  const row = rows.get(id) ?? { group, ...(org === undefined ? {} : { org }), cost: 0, requests: 0 };
  row.cost += e.cost;
  row.requests += e.requests;
  rows.set(id, row);
}

const byCost = (a: { cost: number }, b: { cost: number }) => b.cost - a.cost;

export function usageByDay(
  buckets: Iterable<SpendBucket>,
  opts: { since: number; until: number; timeZone: string; split: UsageSplit; org?: string },
): UsageByDay {
  const dayOf = dayFormatter(opts.timeZone);
  const days = daysBetween(opts.since, opts.until, dayOf);
  const dayIndex = new Map(days.map((d, i) => [d, i]));
  const groups = new Map<string, UsageSeries & { total: number }>();
  const byKey = opts.split === 'key';
  const totals: UsageTotals = { cost: 0, requests: 0, promptTokens: 0, completionTokens: 0 };
  const topKeys = new Map<string, TopRow>();
  const topModels = new Map<string, TopRow>();
  for (const e of buckets) {
    if (opts.org && e.org !== opts.org) continue;
    const i = dayIndex.get(dayOf(Date.parse(e.hour)));
    if (i === undefined) continue;
    totals.cost += e.cost;
    totals.requests += e.requests;
    totals.promptTokens += e.promptTokens;
    totals.completionTokens += e.completionTokens;
    addTop(topKeys, e.keyId ?? '(none)', e, e.org);
    addTop(topModels, e.model ?? '(none)', e);
    const group = groupOf(e, opts.split);
    if (group === undefined) continue;
    // as for the top keys: one series per organisation's key, not one per declared id
    const id = byKey ? orgKeyId(e.org, group) : group;
    let s = groups.get(id);
    if (!s) groups.set(id, (s = { group, ...(byKey ? { org: e.org } : {}), cost: days.map(() => 0), requests: days.map(() => 0), total: 0 }));
    s.cost[i] += e.cost;
    s.requests[i] += e.requests;
    s.total += e.cost;
  }
  const ranked = [...groups.values()].sort((a, b) => b.total - a.total || b.requests.reduce((x, y) => x + y, 0) - a.requests.reduce((x, y) => x + y, 0));
  const series: UsageSeries[] = ranked.slice(0, MAX_SERIES).map(({ total: _total, ...s }) => s);
  const rest = ranked.slice(MAX_SERIES);
  if (rest.length) {
    series.push({
      group: '(other)',
      cost: days.map((_, i) => rest.reduce((sum, s) => sum + s.cost[i], 0)),
      requests: days.map((_, i) => rest.reduce((sum, s) => sum + s.requests[i], 0)),
    });
  }
  // sums of stored costs, each already rounded, still pick up float noise: round what is shown
  totals.cost = roundCost(totals.cost);
  for (const s of series) s.cost = s.cost.map(roundCost);
  const top = (rows: Map<string, TopRow>) => [...rows.values()].map((r) => ({ ...r, cost: roundCost(r.cost) })).sort(byCost).slice(0, TOP_ROWS);
  return {
    days,
    series,
    totals,
    top: { keys: top(topKeys), models: top(topModels) },
  };
}
