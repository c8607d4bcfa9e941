const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30d`, `12h`, `15m`, `90s` -> milliseconds; undefined for anything else (the config schema allows these units). */
export function parseDuration(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const match = /^([0-9]+)(s|m|h|d)$/.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2]];
  return ms > 0 ? ms : undefined;
}

/**
 * A fixed period: periods are counted from the Unix epoch, so they are the same on every gateway instance
 * without any coordination (`1d` resets at midnight UTC, `1h` on the hour, `30d` every 30 days).
 */
export interface Period {
  /** a stable name for the counter key */
  readonly index: number;
  readonly startsAt: number;
  readonly endsAt: number;
}

export function periodAt(now: number, lengthMs: number): Period {
  const index = Math.floor(now / lengthMs);
  return { index, startsAt: index * lengthMs, endsAt: (index + 1) * lengthMs };
}

/** OpenAI's reset-header style: `1s`, `6m0s`, `250ms`, `1h2m3s`. */
export function formatResetDuration(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.ceil(ms))}ms`;
  let seconds = Math.ceil(ms / 1_000);
  const hours = Math.floor(seconds / 3_600);
  seconds -= hours * 3_600;
  const minutes = Math.floor(seconds / 60);
  seconds -= minutes * 60;
  if (hours) return `${hours}h${minutes}m${seconds}s`;
  if (minutes) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}
