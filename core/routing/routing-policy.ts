import type { RoutingConfig } from '../config/types';
import type { Clock } from '../plugins/contracts';
import type { DeploymentHealth } from './deployment-health';
import type { RoutingStrategy } from './strategies';

/** A clock that can also wait: tests pass one whose `sleep` advances fake time at once. */
export interface SleepingClock extends Clock {
  sleep?(ms: number): Promise<void>;
}

export const DEFAULT_RETRIES = 2;

/** How the route and call stages choose and retry deployments; built once at boot. */
export class RoutingPolicy {
  readonly strategy: RoutingStrategy;
  /** extra attempts per model group (`routing.retries`) */
  readonly retries: number;

  constructor(
    routing: RoutingConfig,
    readonly health: DeploymentHealth,
    private readonly clock: SleepingClock,
    readonly random: () => number = Math.random,
  ) {
    this.strategy = routing.strategy ?? 'weighted';
    this.retries = routing.retries ?? DEFAULT_RETRIES;
  }

  now(): number {
    return this.clock.now();
  }

  /** Wait `ms` (on the injected clock when it can wait), cut short when the client goes away. */
  async sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (ms <= 0 || signal.aborted) return;
    if (this.clock.sleep) return this.clock.sleep(ms);
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
