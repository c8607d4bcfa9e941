/**
 * An injected clock for tests: `now()` is fake time, `sleep()` records how long the gateway wanted to
 * wait and advances the fake time at once, so backoffs, cooldowns and windows are tested without waiting.
 */
export class FakeClock {
  readonly sleeps: number[] = [];
  constructor(public t = Date.UTC(2026, 0, 1, 12, 0, 0)) {}

  now(): number {
    return this.t;
  }

  async sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.t += ms;
  }

  advance(ms: number): void {
    this.t += ms;
  }
}

