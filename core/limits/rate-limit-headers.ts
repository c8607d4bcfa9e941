import { formatResetDuration } from './duration';

interface Reading {
  limit: number;
  remaining: number;
  resetMs: number;
}

/**
 * OpenAI-style `x-ratelimit-*` headers. When both the key and its organisation have a limit, the one
 * closer to running out is reported (it is the one the client will hit first).
 */
export class RateLimitHeaders {
  private requestReading?: Reading;
  private tokenReading?: Reading;

  requests(limit: number, remaining: number, resetMs: number): void {
    this.requestReading = tighter(this.requestReading, { limit, remaining: Math.max(0, remaining), resetMs });
  }

  tokens(limit: number, remaining: number, resetMs: number): void {
    this.tokenReading = tighter(this.tokenReading, { limit, remaining: Math.max(0, Math.floor(remaining)), resetMs });
  }

  toHeaders(): Record<string, string> {
    const out: Record<string, string> = {};
    if (this.requestReading) write(out, 'requests', this.requestReading);
    if (this.tokenReading) write(out, 'tokens', this.tokenReading);
    return out;
  }
}

function tighter(current: Reading | undefined, next: Reading): Reading {
  return !current || next.remaining < current.remaining ? next : current;
}

function write(out: Record<string, string>, kind: 'requests' | 'tokens', r: Reading): void {
  out[`x-ratelimit-limit-${kind}`] = String(r.limit);
  out[`x-ratelimit-remaining-${kind}`] = String(r.remaining);
  out[`x-ratelimit-reset-${kind}`] = formatResetDuration(r.resetMs);
}
