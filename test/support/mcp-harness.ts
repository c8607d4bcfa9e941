/**
 * Builds the MCP half of the gateway for tests: a memory store (or the one given), a clock and an interval
 * timer the test moves by hand, and the real streamable-HTTP transport plugin.
 */
import type { McpServerConfig } from '../../core/config/types';
import type { Timer } from '../../core/apis/mcp/health-monitor';
import { McpGateway, type McpGatewayOptions } from '../../core/apis/mcp/mcp-gateway';
import { MemoryBackend } from '../../core/store/memory-backend';
import type { StoreBackend } from '../../core/store/store-backend';
import { createStreamableHttpFactory } from '../../plugins/mcp-streamable-http';

export class ManualClock {
  constructor(public ms = Date.parse('2026-01-01T00:00:00Z')) {}
  now = () => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

/** An interval timer that fires only when the test says so. */
export class ManualTimer implements Timer {
  private readonly callbacks = new Map<number, () => void>();
  private next = 1;
  intervals: number[] = [];
  setInterval(callback: () => void, ms: number): unknown {
    this.intervals.push(ms);
    const id = this.next++;
    this.callbacks.set(id, callback);
    return id;
  }
  clearInterval(handle: unknown): void {
    this.callbacks.delete(handle as number);
  }
  get active(): number {
    return this.callbacks.size;
  }
  fire(): void {
    for (const callback of this.callbacks.values()) callback();
  }
}

export interface HarnessOptions extends Partial<Omit<McpGatewayOptions, 'settings'>> {
  settings?: Partial<McpGatewayOptions['settings']>;
  servers?: McpServerConfig<string>[];
}

export interface McpHarness {
  gateway: McpGateway;
  clock: ManualClock;
  timer: ManualTimer;
  store: StoreBackend;
}

export async function startMcpHarness(options: HarnessOptions = {}): Promise<McpHarness> {
  const clock = new ManualClock();
  const timer = new ManualTimer();
  const store = options.store ?? new MemoryBackend(clock.now);
  const gateway = new McpGateway({
    store,
    clock,
    timer,
    transports: options.transports ?? createStreamableHttpFactory({}, { fetch }),
    callTimeoutMs: options.callTimeoutMs ?? 10_000,
    lookup: options.lookup,
    orgExists: options.orgExists,
    logger: options.logger,
    settings: { healthCheckIntervalSeconds: 60, discoveryTimeoutSeconds: 30, allowPrivateUpstreams: false, ...options.settings },
  });
  await gateway.start(options.servers ?? [], true);
  return { gateway, clock, timer, store };
}
