/**
 * Health and rediscovery. A check of one server is a discovery (connect, list everything, capped by
 * `mcp.discoveryTimeoutSeconds`); its outcome sets the server's health:
 *
 *   unknown   --check succeeds-->  healthy     (tool states reconciled, catalog replaced)
 *   unknown   --check fails----->  unhealthy   (lastError, checkedAt; no catalog yet)
 *   healthy   --check fails----->  unhealthy   (the last good catalog is kept but not listed)
 *   unhealthy --check succeeds-->  healthy     (lastHealthyAt, consecutiveFailures back to 0)
 *
 * Checks run at boot, on registration, every `mcp.healthCheckIntervalSeconds` (0 turns the timer off),
 * and on `POST /admin/v1/mcp/servers/{id}/health`. Time comes from an injected clock and timer, so tests
 * drive the periodic check without sleeping.
 */
import type { Clock, Logger } from '../../plugins/contracts';
import { discoverCatalog, MAX_PAGES } from './discovery';
import type { DiscoveryCache } from './discovery-cache';
import type { McpServerRecord } from './server-record';
import type { McpServerRegistry } from './server-registry';
import { reconcileTools } from './tool-states';
import { transportIdOf } from './transports';
import type { McpUpstreamPool, UpstreamTarget } from './upstream-pool';

export interface Timer {
  setInterval(callback: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

export const realTimer: Timer = {
  setInterval(callback, ms) {
    const handle = setInterval(callback, ms);
    handle.unref?.();
    return handle;
  },
  clearInterval(handle) {
    clearInterval(handle as NodeJS.Timeout);
  },
};

export interface HealthSettings {
  discoveryTimeoutMs: number;
  /** 0: no periodic checks */
  intervalMs: number;
}

export class McpHealthMonitor {
  /** the check running per server, and the upstream (URL, transport, headers) it is checking */
  private readonly inflight = new Map<string, { promise: Promise<McpServerRecord | undefined>; upstream: string; abort: AbortController }>();
  private handle: unknown;
  /** servers with a check to run once the running one ends (a list changed while it ran) */
  private readonly recheck = new Set<string>();
  /**
   * servers this process has checked at least once: the health in a record loaded from a shared or
   * persistent store says how an earlier process or another instance found it, not whether this
   * process's discovery cache holds its catalog yet
   */
  private readonly checkedHere = new Set<string>();

  constructor(
    private readonly registry: McpServerRegistry,
    private readonly pool: McpUpstreamPool,
    private readonly cache: DiscoveryCache,
    private readonly clock: Clock,
    private readonly settings: HealthSettings,
    private readonly timer: Timer = realTimer,
    private readonly logger?: Logger,
  ) {}

  /** The connection target for a server: URL, stored headers, egress guard. */
  target(record: McpServerRecord): UpstreamTarget {
    return {
      id: record.id,
      name: record.name,
      url: this.registry.upstreamUrl(record.id),
      transport: transportIdOf(record.transport),
      headers: this.registry.upstreamHeaders(record.id),
      beforeConnect: record.egressRestricted ? () => this.registry.egressCheck(record.id) : undefined,
      publicOnly: this.registry.publicOnly(record),
    };
  }

  /** Check one server now (joins a check already running for it). */
  check(id: string): Promise<McpServerRecord | undefined> {
    const running = this.inflight.get(id);
    if (running) return running.promise;
    const record = this.registry.get(id);
    const upstream = record ? this.upstreamOf(record) : '';
    const abort = new AbortController();
    const entry = {
      upstream,
      abort,
      promise: this.run(id, abort.signal).finally(() => {
        if (!abort.signal.aborted) this.checkedHere.add(id);
        if (this.inflight.get(id) === entry) this.inflight.delete(id);
      }),
    };
    this.inflight.set(id, entry);
    return entry.promise;
  }

  /**
   * The upstream says a list changed. A check already running may have read that list before the change:
   * joining it would miss the change until the next periodic check (never, with the interval 0), so one
   * more check follows it. Announcements during a running check share that one follow-up.
   */
  listChanged(id: string): void {
    const running = this.inflight.get(id);
    if (!running) {
      void this.check(id);
      return;
    }
    if (this.recheck.has(id)) return;
    this.recheck.add(id);
    // none once the monitor stopped (stop() forgets what was pending): the pool may be closed by then
    const again = () => {
      if (this.recheck.delete(id) && this.registry.get(id)) void this.check(id);
    };
    running.promise.then(again, again);
  }

  /** Whether a check of this server has ended in this process (its catalog, if any, is in the cache). */
  checked(id: string): boolean {
    return this.checkedHere.has(id);
  }

  /** The check running for a server now, if any. */
  running(id: string): Promise<McpServerRecord | undefined> | undefined {
    return this.inflight.get(id)?.promise;
  }

  /**
   * The server was updated or removed: a check still talking to what it was before (another URL,
   * transport or credential) is stopped and its outcome dropped. Else a record just moved away from a
   * hung upstream would wait for that upstream and be judged by it, and the old check would reconnect to
   * the old URL in the pool's slot the next check needs.
   */
  abandonIfMoved(id: string): void {
    const running = this.inflight.get(id);
    const record = this.registry.get(id);
    if (!running || (record && this.upstreamOf(record) === running.upstream)) return;
    this.inflight.delete(id);
    running.abort.abort();
  }

  private upstreamOf(record: McpServerRecord): string {
    try {
      const target = this.target(record);
      return JSON.stringify([target.url, target.transport, target.headers]);
    } catch {
      // secrets that do not decrypt: the check itself fails, and says why
      return '';
    }
  }

  async checkAll(): Promise<void> {
    await Promise.all(this.registry.list().map((r) => this.check(r.id)));
  }

  /** Periodic checks; the first tick comes one interval after start (boot runs its own checkAll). */
  start(): void {
    if (this.settings.intervalMs <= 0 || this.handle !== undefined) return;
    this.handle = this.timer.setInterval(() => void this.tick(), this.settings.intervalMs);
  }

  stop(): void {
    this.recheck.clear();
    if (this.handle !== undefined) this.timer.clearInterval(this.handle);
    this.handle = undefined;
  }

  private async tick(): Promise<void> {
    try {
      await this.registry.reload();
      await this.checkAll();
    } catch (err) {
      this.logger?.warn('mcp health check round failed', { error: (err as Error).message });
    }
  }

  private async run(id: string, signal: AbortSignal): Promise<McpServerRecord | undefined> {
    const record = this.registry.get(id);
    if (!record) return undefined;
    const nowIso = () => new Date(this.clock.now()).toISOString();
    try {
      const catalog = await discoverCatalog(this.pool, this.target(record), this.settings.discoveryTimeoutMs, signal);
      if (signal.aborted) return this.registry.get(id);
      const at = nowIso();
      const capped = catalog.capped ?? [];
      let newlyCapped: string[] = [];
      // applied to the record as stored now: an operator may have changed it while the discovery ran,
      // here or through another instance sharing the store (see amend)
      const latest = await this.registry.amend(id, (stored) => {
        reconcileTools(stored, catalog.tools, at);
        // Lists cut at the page limit are warned of when that changes, not at every check (which would bury
        // it in the log), and by the one instance or worker whose write records the change in the shared record
        newlyCapped = (stored.health.cappedLists ?? []).join(',') === capped.join(',') ? [] : capped;
        stored.health = {
          status: 'healthy',
          checkedAt: at,
          lastHealthyAt: at,
          consecutiveFailures: 0,
          ...(catalog.protocolVersion ? { protocolVersion: catalog.protocolVersion } : {}),
          ...(capped.length > 0 ? { cappedLists: capped } : {}),
        };
      });
      if (!latest) return undefined;
      this.cache.set(id, catalog);
      for (const list of newlyCapped) {
        this.logger?.warn('mcp discovery stopped at the page limit: later items of this list are not served', { server: latest.name, org: latest.org, list, pages: MAX_PAGES });
      }
      return latest;
    } catch (err) {
      if (signal.aborted) return this.registry.get(id);
      const message = (err as Error).message;
      const at = nowIso();
      const latest = await this.registry.amend(id, (stored) => {
        stored.health = {
          status: 'unhealthy',
          checkedAt: at,
          lastHealthyAt: stored.health.lastHealthyAt,
          lastError: message,
          consecutiveFailures: stored.health.consecutiveFailures + 1,
          ...(stored.health.protocolVersion ? { protocolVersion: stored.health.protocolVersion } : {}),
          ...(stored.health.cappedLists ? { cappedLists: stored.health.cappedLists } : {}),
        };
      });
      if (!latest) return undefined;
      this.logger?.warn('mcp server health check failed', { server: latest.name, org: latest.org, error: message });
      return latest;
    }
  }
}
