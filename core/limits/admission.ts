import { BudgetExceededError, RateLimitError } from '../errors/gateway-error';
import type { AuthedContext, GatewayContext } from '../pipeline/context';
import type { Clock } from '../plugins/contracts';
import { formatCost, roundCost } from '../spend/pricing';
import type { StoreBackend } from '../store/store-backend';
import { hourCeil } from '../store/spend-rollup';
import { formatResetDuration, parseDuration, periodAt, type Period } from './duration';
import type { UsageEstimate } from './estimate';
import type { LimitSubject, LimitSubjects } from './limit-subjects';
import { RateLimitHeaders } from './rate-limit-headers';
import { Compensations, type Counter } from './compensations';

/**
 * What a request is expected to use, and whether it counts against token limits and (unless
 * `countsRequest` is false) against requests per minute.
 */
export type AdmissionEstimate = UsageEstimate & { countsTokens: boolean; countsRequest?: boolean };

/**
 * Budget and rate-limit admission, run by the call stage for every exchange its traffic strategy limits
 * (model and MCP traffic; a Responses parent is limited through its children), just before the work that
 * costs: the target and so the price are known. Settled by the call stage when the request ends, after
 * the spend stage has the real cost (settle runs in reverse).
 */
export interface Admission {
  /**
   * undefined (no promise) when nothing limits the request: the common case costs no microtask hop.
   * `estimate` is asked for only when something does (undefined: the traffic is not limited).
   */
  admit(ctx: AuthedContext, estimate: () => AdmissionEstimate | undefined): Promise<void> | void;
  /** undefined when the request reserved nothing */
  settle(ctx: GatewayContext): Promise<void> | void;
  /** what a key or organisation has used of its budget in the current period (for the management API) */
  budgetUsage?(kind: LimitSubject['kind'], id: string, budgetDuration: string | undefined, logged?: LimitSubject['logged']): Promise<BudgetUsage>;
  /** an organisation's record was written through the management API: its limits apply from now on */
  organizationChanged?(id: string): Promise<void>;
  /** the gateway is stopping (before its store closes): write what is still owed to the counters */
  close?(timeoutMs: number): Promise<void>;
}

/** What a request reserved, kept on its context until it settles. */
export interface LimitTicket {
  readonly tokens: Charge[];
  readonly budget: Charge[];
}

export interface BudgetUsage {
  /** the budget counter: settled costs plus the estimates of requests still running */
  spent: number;
  /** the current period, or null for a budget that never resets */
  periodStart: string | null;
  periodEnd: string | null;
}

/** rpm and tpm count in fixed one-minute windows aligned to the minute (UTC), shared through the store. */
export const RATE_WINDOW_MS = 60_000;
/** how long a period's counter outlives the period, at most, so a request ending just after still settles */
const MAX_SLACK_MS = 30_000;
/** the longest a budget refusal lets the SDKs wait and retry (as the gateway itself waits for an upstream) */
const SDK_RETRY_WAIT_MS = 60_000;

/**
 * Where the count of one limit for one period lives. Each limit has two counters used in turn (even and
 * odd periods), each expiring a little after its period: two periods later the expired counter starts
 * again from zero, so the store holds two rows per limit however long the gateway runs.
 */
function counterFor(base: string, period: Period | undefined, now: number): Counter {
  if (!period) return { key: `${base}:total` };
  const expiresAt = period.endsAt + Math.min(MAX_SLACK_MS, (period.endsAt - period.startsAt) / 2);
  return { key: `${base}:${period.index % 2}`, ttlMs: expiresAt - now, expiresAt };
}

/** One amount added to a counter: kept so the request can settle it to the real figure, or undo it. */
interface Charge {
  readonly counter: Counter;
  readonly amount: number;
}


/**
 * Every check adds first and compares after, with the backend's atomic increment (SQLite immediate
 * transaction, Redis INCRBYFLOAT): each request sees the total including every request admitted before
 * it, on any instance. A request is refused when the counter was already at the limit before its own
 * share, so the overshoot is at most one request; a refused request takes its shares back.
 *
 * Budgets reserve the estimated cost (see estimate.ts) and settle to the real cost; tpm reserves the
 * estimated tokens and settles to the real usage; rpm counts the request.
 */
export class LimitsAdmission implements Admission {
  /** corrections the store refused when they were due, tried again until it takes them */
  private readonly compensations: Compensations;
  /** budget counters already given their logged spend (seedFromLog) */
  private readonly seeded = new Set<string>();

  constructor(
    private readonly subjects: LimitSubjects,
    private readonly store: StoreBackend,
    private readonly clock: Clock,
  ) {
    this.compensations = new Compensations(store, clock);
  }

  admit(ctx: AuthedContext, estimate: () => AdmissionEstimate | undefined): Promise<void> | void {
    const subjects = this.subjects.of(ctx.principal);
    if (Array.isArray(subjects)) return this.admitTo(ctx, subjects, estimate);
    return subjects.then((list) => this.admitTo(ctx, list, estimate));
  }

  private admitTo(ctx: AuthedContext, subjects: LimitSubject[], estimate: () => AdmissionEstimate | undefined): Promise<void> | undefined {
    if (subjects.length === 0) return undefined;
    const expected = estimate();
    return expected ? this.chargeSubjects(ctx, subjects, expected) : undefined;
  }

  /** Count the request against every subject's limits; refused: the shares already added are taken back. */
  private async chargeSubjects(ctx: AuthedContext, subjects: LimitSubject[], estimate: AdmissionEstimate): Promise<void> {
    const now = this.clock.now();
    const applied: Charge[] = [];
    const ticket: LimitTicket = { tokens: [], budget: [] };
    const headers = new RateLimitHeaders();
    try {
      for (const subject of subjects) {
        if (subject.rpm !== undefined && estimate.countsRequest !== false) await this.checkRequests(subject, subject.rpm, now, applied, headers);
        if (subject.tpm !== undefined && estimate.countsTokens) await this.checkTokens(subject, subject.tpm, estimate.tokens, now, applied, ticket, headers);
        if (subject.maxBudget !== undefined) await this.checkBudget(subject, subject.maxBudget, estimate.cost, now, applied, ticket);
      }
    } catch (err) {
      await this.undo(applied);
      if (err instanceof RateLimitError) await this.addReadings(err, subjects, estimate.countsTokens, now);
      throw err;
    }
    ctx.limits = ticket;
    Object.assign(ctx.responseHeaders, headers.toHeaders());
    if (estimate.cost > 0 && ticket.budget.length) ctx.logDetails.budgetReserved = estimate.cost;
  }

  organizationChanged(id: string): Promise<void> {
    return this.subjects.changed(id);
  }

  close(timeoutMs: number): Promise<void> {
    return this.compensations.flush(timeoutMs);
  }

  settle(ctx: GatewayContext): Promise<void> | void {
    const ticket = ctx.limits;
    if (!ticket) return;
    ctx.limits = undefined;
    return this.settleTicket(ctx, ticket);
  }

  /** Every reservation replaced by the real figure; one the store refuses now is corrected later. */
  private async settleTicket(ctx: GatewayContext, ticket: LimitTicket): Promise<void> {
    const tokens = ctx.usage.inputTokens + ctx.usage.outputTokens;
    for (const charge of ticket.tokens) await this.adjust(charge, tokens);
    // what folded children cost is in their own settled charges already
    const cost = roundCost(ctx.cost - ctx.foldedCost);
    for (const charge of ticket.budget) await this.adjust(charge, cost);
  }

  /**
   * A 429 carries both families of headers, as OpenAI's do: a client told only that its requests ran out
   * would not learn how many tokens it has left, or the reverse. The counters are read after the refused
   * request took its shares back, so they say what is left for the next one; the limit that refused keeps
   * its own headers. A store that fails this read leaves the refusal as it was.
   */
  private async addReadings(err: RateLimitError, subjects: LimitSubject[], countsTokens: boolean, now: number): Promise<void> {
    const window = periodAt(now, RATE_WINDOW_MS);
    const resetMs = window.endsAt - now;
    const readings = new RateLimitHeaders();
    try {
      for (const subject of subjects) {
        if (subject.rpm !== undefined) readings.requests(subject.rpm, subject.rpm - (await this.store.getCounter(counterFor(rpmBase(subject), window, now).key)), resetMs);
        if (subject.tpm !== undefined && countsTokens) readings.tokens(subject.tpm, subject.tpm - (await this.store.getCounter(counterFor(tpmBase(subject), window, now).key)), resetMs);
      }
    } catch {
      return;
    }
    Object.assign(err.headers, { ...readings.toHeaders(), ...err.headers });
  }

  private async checkRequests(subject: LimitSubject, limit: number, now: number, applied: Charge[], headers: RateLimitHeaders): Promise<void> {
    const window = periodAt(now, RATE_WINDOW_MS);
    const { total: count } = await this.charge(applied, counterFor(rpmBase(subject), window, now), 1);
    const resetMs = window.endsAt - now;
    if (count > limit) {
      throw rateLimited(`${describe(subject)} has reached its limit of ${limit} requests per minute.`, resetMs, {
        'x-ratelimit-limit-requests': String(limit),
        'x-ratelimit-remaining-requests': '0',
        'x-ratelimit-reset-requests': formatResetDuration(resetMs),
      });
    }
    headers.requests(limit, limit - count, resetMs);
  }

  private async checkTokens(subject: LimitSubject, limit: number, tokens: number, now: number, applied: Charge[], ticket: LimitTicket, headers: RateLimitHeaders): Promise<void> {
    const window = periodAt(now, RATE_WINDOW_MS);
    const { total, charge } = await this.charge(applied, counterFor(tpmBase(subject), window, now), tokens);
    const resetMs = window.endsAt - now;
    if (total - tokens >= limit) {
      throw rateLimited(`${describe(subject)} has reached its limit of ${limit} tokens per minute.`, resetMs, {
        'x-ratelimit-limit-tokens': String(limit),
        'x-ratelimit-remaining-tokens': '0',
        'x-ratelimit-reset-tokens': formatResetDuration(resetMs),
      });
    }
    ticket.tokens.push(charge);
    headers.tokens(limit, limit - total, resetMs);
  }

  private async checkBudget(subject: LimitSubject, maxBudget: number, cost: number, now: number, applied: Charge[], ticket: LimitTicket): Promise<void> {
    const period = subject.budgetPeriodMs ? periodAt(now, subject.budgetPeriodMs) : undefined;
    // the period length is part of the name, so changing budgetDuration starts a fresh count
    const base = `limits:budget:${subject.kind}:${subject.id}${period ? `:${subject.budgetPeriodMs}` : ''}`;
    const counter = counterFor(base, period, now);
    const charged = await this.charge(applied, counter, cost);
    const { charge } = charged;
    // an empty counter may be a budget just set (or given another period) on spend already logged
    const total = roundCost(charged.total - cost) === 0 ? charged.total + (await this.seedFromLog(subject, counter, period)) : charged.total;
    // rounded like every cost: the float sum of reservations and corrections ends a hair below a budget
    // spent to the cent, and the next request passed
    const spent = roundCost(total - cost);
    if (spent >= maxBudget) {
      const resets = period ? ` It resets at ${new Date(period.endsAt).toISOString()}.` : '';
      const error = new BudgetExceededError(`Budget exceeded: ${describe(subject)} has used $${formatCost(spent)} of its $${formatCost(maxBudget)} budget.${resets}`);
      if (period) error.headers['retry-after'] = String(Math.ceil((period.endsAt - now) / 1000));
      // The OpenAI and Anthropic SDKs retry a 429 twice, sleeping the whole Retry-After first: a budget
      // with no period never resets, and one whose period ends beyond a minute would hold the caller for
      // hours (both SDKs obey this header; a rate limit, or a period about to end, may pass after the wait)
      if (!period || period.endsAt - now > SDK_RETRY_WAIT_MS) error.headers['x-should-retry'] = 'false';
      throw error;
    }
    ticket.budget.push(charge);
  }

  /**
   * A budget counter is kept only while a budget is set, and under a name that carries its period: a key
   * or organisation given a budget (or another period) by the management API started from zero, though
   * the log held its spend (an organisation that had spent $3 could spend a new $1 lifetime budget again).
   * The first request to find the counter empty adds the logged spend of the period to it (the spend
   * rollups, whole hours: a period that does not start on the hour is left to its counter), once per
   * counter and process, so a budget whose requests cost nothing does not read the rollups every time.
   */
  private async seedFromLog(subject: LimitSubject, counter: Counter, period: Period | undefined): Promise<number> {
    const seed = seedName(counter, period);
    if (this.seeded.has(seed) || !inWholeHours(period)) return 0;
    if (this.seeded.size > 10_000) this.seeded.clear();
    // marked before the reads, so two requests of this process do not both add it; a failed read is tried again
    this.seeded.add(seed);
    const ttlMs = () => (counter.expiresAt === undefined ? undefined : counter.expiresAt - this.clock.now());
    // and claimed in the store, so two instances do not both add it: requests whose estimate is 0 (a model
    // without a price) leave the counter empty, and each instance's first one found it so and added the
    // logged spend again. The claim counts beside the budget's counter (same period, same expiry).
    const claim = `limits:seeded:${counter.key}`;
    let claimed = false;
    try {
      claimed = (await this.store.incrByFloat(claim, 1, ttlMs())) === 1;
      if (!claimed) return 0;
      const spent = roundCost(await loggedSpend(this.store, subject.logged, period));
      if (spent > 0) await this.store.incrByFloat(counter.key, spent, ttlMs());
      return spent;
    } catch (err) {
      this.seeded.delete(seed);
      // another request may try again: let it claim
      if (claimed) await this.compensations.apply({ key: claim, ttlMs: ttlMs(), expiresAt: counter.expiresAt }, -1);
      throw err;
    }
  }

  /** Reads the same counter checkBudget adds to, without changing it. */
  async budgetUsage(kind: LimitSubject['kind'], id: string, budgetDuration: string | undefined, logged?: LimitSubject['logged']): Promise<BudgetUsage> {
    const now = this.clock.now();
    const periodMs = parseDuration(budgetDuration);
    const period = periodMs ? periodAt(now, periodMs) : undefined;
    const base = `limits:budget:${kind}:${id}${period ? `:${periodMs}` : ''}`;
    const counter = counterFor(base, period, now);
    const counted = await this.store.getCounter(counter.key);
    // an empty counter not seeded yet: what the next request's admission will count (seedFromLog)
    const unseeded = roundCost(counted) === 0 && logged && !this.seeded.has(seedName(counter, period)) && inWholeHours(period);
    const spent = unseeded ? await loggedSpend(this.store, logged, period) : counted;
    return {
      // rounded like every cost shown: the counter's sums carry float noise (0.00003225000000000016)
      spent: roundCost(spent),
      periodStart: period ? new Date(period.startsAt).toISOString() : null,
      periodEnd: period ? new Date(period.endsAt).toISOString() : null,
    };
  }

  /**
   * Add to a counter atomically and remember it, so a refusal can take it back. A charge that timed out
   * may still be written: it is taken back then (the request was refused).
   */
  private async charge(applied: Charge[], counter: Counter, amount: number): Promise<{ total: number; charge: Charge }> {
    let total: number;
    try {
      total = await this.store.incrByFloat(counter.key, amount, counter.ttlMs);
    } catch (err) {
      if (amount !== 0) this.compensations.takeBackIfWritten(err, counter, amount);
      throw err;
    }
    const charge = { counter, amount };
    if (amount !== 0) applied.push(charge);
    return { total, charge };
  }

  private async undo(applied: Charge[]): Promise<void> {
    for (const { counter, amount } of applied) await this.compensations.apply(counter, -amount);
  }

  /** Replace a reservation by the real figure, unless its period is over (its count no longer matters). */
  private adjust({ counter, amount }: Charge, actual: number): Promise<void> {
    return this.compensations.apply(counter, actual - amount);
  }
}

const HOUR_MS = 3_600_000;

/** whether the spend rollups (whole hours) can say what a period spent: no period, or one starting on the hour */
function inWholeHours(period: Period | undefined): boolean {
  return period === undefined || period.startsAt % HOUR_MS === 0;
}

/** the even and odd counters serve every other period: the period is part of what was seeded */
function seedName(counter: Counter, period: Period | undefined): string {
  return `${counter.key}@${period?.index ?? ''}`;
}

/** What the request log's spend rollups hold for a key or an organisation in a period (all of it without one). */
async function loggedSpend(store: StoreBackend, logged: LimitSubject['logged'], period: Period | undefined): Promise<number> {
  const buckets = await store.spendBuckets(period && new Date(period.startsAt).toISOString(), period && hourCeil(new Date(period.endsAt).toISOString()));
  let sum = 0;
  for (const b of buckets) {
    if (logged.keyId !== undefined ? b.keyId === logged.keyId && (b.org ?? null) === logged.org : b.org === logged.org) sum += b.cost;
  }
  return sum;
}

function rpmBase(subject: LimitSubject): string {
  return `limits:rpm:${subject.kind}:${subject.id}`;
}

function tpmBase(subject: LimitSubject): string {
  return `limits:tpm:${subject.kind}:${subject.id}`;
}

function describe(subject: LimitSubject): string {
  return subject.kind === 'key' ? 'This key' : 'This organization';
}

function rateLimited(message: string, resetMs: number, headers: Record<string, string>): RateLimitError {
  const seconds = Math.max(1, Math.ceil(resetMs / 1000));
  return new RateLimitError(`Rate limit exceeded: ${message} Try again in ${seconds}s.`, 'rate_limit_exceeded', { headers: { 'retry-after': String(seconds), ...headers } });
}
