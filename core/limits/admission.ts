import { BudgetExceededError, RateLimitError } from '../errors/gateway-error';
import type { GatewayContext } from '../pipeline/context';
import type { Outcome } from '../pipeline/stage';
import type { Clock } from '../plugins/contracts';
import { formatCost } from '../spend/pricing';
import type { StoreBackend } from '../store/store-backend';
import { formatResetDuration, periodAt, type Period } from './duration';
import { estimateModelRequest, type UsageEstimate } from './estimate';
import type { LimitSubject, LimitSubjects } from './limit-subjects';
import { RateLimitHeaders } from './rate-limit-headers';

/**
 * Budget and rate-limit admission, run by the route stage for every endpoint (model and MCP traffic)
 * once the target, and so the price, is known; settled when the request ends.
 */
export interface Admission {
  admit(ctx: GatewayContext): Promise<void>;
  settle(ctx: GatewayContext, outcome: Outcome): Promise<void>;
}

/** Used when no limits are configured anywhere: nothing to count. */
export const NO_ADMISSION: Admission = {
  async admit() {},
  async settle() {},
};

/** rpm and tpm count in fixed one-minute windows aligned to the minute (UTC), shared through the store. */
export const RATE_WINDOW_MS = 60_000;
/** counters outlive their window a little, so a late settle never lands in a window still being read */
const COUNTER_SLACK_MS = 60_000;

/** One amount added to a counter: kept so the request can settle it to the real figure, or undo it. */
interface Charge {
  readonly key: string;
  readonly amount: number;
  readonly ttlMs?: number;
}

interface Ticket {
  readonly tokens: Charge[];
  readonly budget: Charge[];
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
  private readonly tickets = new WeakMap<GatewayContext, Ticket>();

  constructor(
    private readonly subjects: LimitSubjects,
    private readonly store: StoreBackend,
    private readonly clock: Clock,
    /** the fee an MCP call will cost if it succeeds (the MCP handlers' own `fee`) */
    private readonly mcpFee: (ctx: GatewayContext) => number,
  ) {}

  async admit(ctx: GatewayContext): Promise<void> {
    if (!ctx.principal) return;
    const subjects = await this.subjects.of(ctx.principal);
    if (!subjects.length) return;
    const now = this.clock.now();
    const estimate: UsageEstimate = ctx.traffic === 'model' ? estimateModelRequest(ctx.modelExchange) : { tokens: 0, cost: this.mcpFee(ctx) };
    const applied: Charge[] = [];
    const ticket: Ticket = { tokens: [], budget: [] };
    const headers = new RateLimitHeaders();
    try {
      for (const subject of subjects) {
        if (subject.rpm !== undefined) await this.checkRequests(subject, subject.rpm, now, applied, headers);
        if (subject.tpm !== undefined && ctx.traffic === 'model') await this.checkTokens(subject, subject.tpm, estimate.tokens, now, applied, ticket, headers);
        if (subject.maxBudget !== undefined) await this.checkBudget(subject, subject.maxBudget, estimate.cost, now, applied, ticket);
      }
    } catch (err) {
      await this.undo(applied);
      throw err;
    }
    this.tickets.set(ctx, ticket);
    Object.assign(ctx.responseHeaders, headers.toHeaders());
    if (estimate.cost > 0 && ticket.budget.length) ctx.logDetails.budgetReserved = estimate.cost;
  }

  async settle(ctx: GatewayContext): Promise<void> {
    const ticket = this.tickets.get(ctx);
    if (!ticket) return;
    this.tickets.delete(ctx);
    const tokens = ctx.usage.inputTokens + ctx.usage.outputTokens;
    for (const charge of ticket.tokens) await this.adjust(charge, tokens);
    for (const charge of ticket.budget) await this.adjust(charge, ctx.cost);
  }

  private async checkRequests(subject: LimitSubject, limit: number, now: number, applied: Charge[], headers: RateLimitHeaders): Promise<void> {
    const window = periodAt(now, RATE_WINDOW_MS);
    const count = await this.charge(applied, `limits:rpm:${subject.kind}:${subject.id}:${window.index}`, 1, window, now);
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

  private async checkTokens(subject: LimitSubject, limit: number, tokens: number, now: number, applied: Charge[], ticket: Ticket, headers: RateLimitHeaders): Promise<void> {
    const window = periodAt(now, RATE_WINDOW_MS);
    const charge = { key: `limits:tpm:${subject.kind}:${subject.id}:${window.index}`, amount: tokens, ttlMs: ttlUntil(window, now) };
    const total = await this.charge(applied, charge.key, tokens, window, now);
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

  private async checkBudget(subject: LimitSubject, maxBudget: number, cost: number, now: number, applied: Charge[], ticket: Ticket): Promise<void> {
    const period = subject.budgetPeriodMs ? periodAt(now, subject.budgetPeriodMs) : undefined;
    const key = `limits:budget:${subject.kind}:${subject.id}:${period ? `${subject.budgetPeriodMs}:${period.index}` : 'total'}`;
    const total = await this.charge(applied, key, cost, period, now);
    const spent = total - cost;
    if (spent >= maxBudget) {
      const resets = period ? ` It resets at ${new Date(period.endsAt).toISOString()}.` : '';
      const error = new BudgetExceededError(`Budget exceeded: ${describe(subject)} has used $${formatCost(spent)} of its $${formatCost(maxBudget)} budget.${resets}`);
      if (period) error.headers['retry-after'] = String(Math.ceil((period.endsAt - now) / 1000));
      throw error;
    }
    ticket.budget.push({ key, amount: cost, ttlMs: period ? ttlUntil(period, now) : undefined });
  }

  /** Add to a counter atomically and remember it, so a refusal can take it back. */
  private async charge(applied: Charge[], key: string, amount: number, period: Period | undefined, now: number): Promise<number> {
    const ttlMs = period ? ttlUntil(period, now) : undefined;
    const total = await this.store.incrByFloat(key, amount, ttlMs);
    if (amount !== 0) applied.push({ key, amount, ttlMs });
    return total;
  }

  private async undo(applied: Charge[]): Promise<void> {
    for (const charge of applied) await this.store.incrByFloat(charge.key, -charge.amount, charge.ttlMs).catch(() => undefined);
  }

  /** Replace a reservation by the real figure. */
  private async adjust(charge: Charge, actual: number): Promise<void> {
    const delta = actual - charge.amount;
    if (delta !== 0) await this.store.incrByFloat(charge.key, delta, charge.ttlMs);
  }
}

function ttlUntil(period: Period, now: number): number {
  return Math.max(1, period.endsAt - now) + COUNTER_SLACK_MS;
}

function describe(subject: LimitSubject): string {
  return subject.kind === 'key' ? 'This key' : 'This organization';
}

function rateLimited(message: string, resetMs: number, headers: Record<string, string>): RateLimitError {
  const seconds = Math.max(1, Math.ceil(resetMs / 1000));
  return new RateLimitError(`Rate limit exceeded: ${message} Try again in ${seconds}s.`, 'rate_limit_exceeded', { headers: { 'retry-after': String(seconds), ...headers } });
}
