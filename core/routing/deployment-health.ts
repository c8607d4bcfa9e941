import type { RoutingConfig } from '../config/types';
import type { Deployment } from './deployment';

export interface CooldownSettings {
  /** failures within `windowMs` that put a deployment in cooldown */
  failures: number;
  windowMs: number;
  cooldownMs: number;
}

export const DEFAULT_COOLDOWN: CooldownSettings = { failures: 3, windowMs: 60_000, cooldownMs: 5_000 };

export function cooldownSettings(routing: RoutingConfig): CooldownSettings {
  const c = routing.cooldown ?? {};
  return {
    failures: c.failures ?? DEFAULT_COOLDOWN.failures,
    windowMs: c.windowSeconds !== undefined ? c.windowSeconds * 1000 : DEFAULT_COOLDOWN.windowMs,
    cooldownMs: c.cooldownSeconds !== undefined ? c.cooldownSeconds * 1000 : DEFAULT_COOLDOWN.cooldownMs,
  };
}

interface HealthRecord {
  readonly deployment: Deployment;
  /** times of recent failures (within the window), oldest first */
  recentFailures: number[];
  cooldownUntil: number;
  inFlight: number;
  requests: number;
  successes: number;
  failures: number;
  /** exponentially weighted time to first byte, ms; undefined until the first success */
  latencyMs?: number;
  lastError?: { code: string; at: number };
}

/** What the management API shows for one deployment. */
export interface DeploymentStatus {
  id: string;
  model: string;
  provider: string;
  state: 'healthy' | 'cooling_down';
  cooldown_until: string | null;
  recent_failures: number;
  in_flight: number;
  requests: number;
  successes: number;
  failures: number;
  latency_ms: number | null;
  last_error: { code: string; at: string } | null;
}

const LATENCY_WEIGHT = 0.2;

/**
 * Health of every deployment as seen by this gateway instance: failures in a sliding window, the cooldown
 * they trigger, requests in flight (least-busy) and time to first byte (latency). Kept in memory: it is
 * read on every request, and each instance learns an upstream's state from its own traffic within a few
 * requests. Time comes from the injected clock.
 */
export class DeploymentHealth {
  private readonly records = new Map<string, HealthRecord>();

  constructor(deployments: readonly Deployment[], readonly settings: CooldownSettings, private readonly now: () => number) {
    for (const d of deployments) {
      this.records.set(d.id, { deployment: d, recentFailures: [], cooldownUntil: 0, inFlight: 0, requests: 0, successes: 0, failures: 0 });
    }
  }

  isCoolingDown(id: string): boolean {
    return (this.records.get(id)?.cooldownUntil ?? 0) > this.now();
  }

  cooldownUntil(id: string): number {
    return this.records.get(id)?.cooldownUntil ?? 0;
  }

  inFlight(id: string): number {
    return this.records.get(id)?.inFlight ?? 0;
  }

  latencyMs(id: string): number | undefined {
    return this.records.get(id)?.latencyMs;
  }

  /** An attempt starts; call the returned function (once) when its response is finished. */
  begin(id: string): () => void {
    const record = this.records.get(id);
    if (!record) return () => undefined;
    record.inFlight++;
    record.requests++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      record.inFlight--;
    };
  }

  recordSuccess(id: string, firstByteMs: number): void {
    const record = this.records.get(id);
    if (!record) return;
    record.successes++;
    record.recentFailures = [];
    record.latencyMs = record.latencyMs === undefined ? firstByteMs : record.latencyMs + LATENCY_WEIGHT * (firstByteMs - record.latencyMs);
  }

  /** A failure that is the deployment's fault; enough of them in the window start a cooldown. */
  recordFailure(id: string, code: string): void {
    const record = this.records.get(id);
    if (!record) return;
    const now = this.now();
    record.failures++;
    record.lastError = { code, at: now };
    record.recentFailures = record.recentFailures.filter((t) => t > now - this.settings.windowMs);
    record.recentFailures.push(now);
    if (record.recentFailures.length >= this.settings.failures) {
      record.cooldownUntil = now + this.settings.cooldownMs;
      record.recentFailures = [];
      this.onCooldown(id, record.cooldownUntil);
    }
  }

  /** Told of every cooldown this instance starts or ends, to tell the other instances (0: ended). */
  onCooldown: (id: string, until: number) => void = () => undefined;

  /**
   * A cooldown another instance started (or ended, `until` 0). A later end wins over an earlier one, so
   * two instances cooling the same deployment agree on the longer cooldown.
   */
  applyCooldown(id: string, until: number): void {
    const record = this.records.get(id);
    if (!record) return;
    if (until === 0) {
      record.cooldownUntil = 0;
      record.recentFailures = [];
    } else record.cooldownUntil = Math.max(record.cooldownUntil, until);
  }

  /** Put a deployment back in service now (management API). */
  reset(id: string): boolean {
    const record = this.records.get(id);
    if (!record) return false;
    record.cooldownUntil = 0;
    record.recentFailures = [];
    this.onCooldown(id, 0);
    return true;
  }

  has(id: string): boolean {
    return this.records.has(id);
  }

  snapshot(): DeploymentStatus[] {
    const now = this.now();
    return [...this.records.values()].map((r) => {
      const cooling = r.cooldownUntil > now;
      return {
        id: r.deployment.id,
        model: r.deployment.name,
        provider: r.deployment.config.provider,
        state: cooling ? 'cooling_down' : 'healthy',
        cooldown_until: cooling ? new Date(r.cooldownUntil).toISOString() : null,
        recent_failures: r.recentFailures.filter((t) => t > now - this.settings.windowMs).length,
        in_flight: r.inFlight,
        requests: r.requests,
        successes: r.successes,
        failures: r.failures,
        latency_ms: r.latencyMs === undefined ? null : Math.round(r.latencyMs),
        last_error: r.lastError ? { code: r.lastError.code, at: new Date(r.lastError.at).toISOString() } : null,
      };
    });
  }
}
