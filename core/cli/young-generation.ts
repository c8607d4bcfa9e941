import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';
import { givenToNode } from './node-flags';

/** The size in MiB (both of V8's semi-spaces together) at which the command stops the young generation growing. */
export const YOUNG_GENERATION_MIB = 16;

/**
 * Keep V8's young generation small in the `model-gateway` command (issue 16). By default V8 grows it to
 * 32 MiB: while the command loads its modules (boot alone takes it there), then under load. Those pages
 * stay resident for the life of the process, about 10 MiB of the command's peak RSS more than it needs:
 * a request's objects die within milliseconds, and at 16 MiB the scavenger runs about twice as often at
 * about the same cost each time (README "Memory" has the measurements).
 *
 * V8 sizes the young generation's maximum only when the process starts (`--max-semi-space-size`, which a
 * bin's `#!/usr/bin/env node` line cannot pass), but it reads its growth factor each time it grows it. So
 * the command holds the growth at start (`hold`, before its modules load: core/cli/memory-at-start.ts),
 * and once it is listening (`release`) sets the factor after each collection so that the next growth
 * stays within YOUNG_GENERATION_MIB. Growth needs many collections in a row that keep objects alive, so
 * the new factor is in place well before V8 grows it again. Node started with its own
 * `--max-semi-space-size` (command line or NODE_OPTIONS) or `--semi-space-growth-factor` keeps V8's
 * behaviour with that value. `createGateway` in another process leaves that process's settings alone.
 */
export class YoungGeneration {
  private held = false;

  /** Stop the growth now, unless node was given its own setting. True when it did. */
  hold(): boolean {
    if (givenToNode('--max-semi-space-size') || givenToNode('--semi-space-growth-factor')) return false;
    setGrowthFactor(1);
    this.held = true;
    return true;
  }

  /**
   * After `hold`: let it grow up to YOUNG_GENERATION_MIB and no further. Checked after every collection
   * for the life of the process: V8 shrinks the young generation after a collection at a low allocation
   * rate (an idle minute) to about twice what is live, any size, and it must grow back when load returns. V8
   * doubles a semi-space when it grows it, so growth is let go only while a doubling stays within the
   * limit: 2 MiB semi-spaces grow to 4 and 8, and 5 MiB ones stay at 5.
   */
  release(): void {
    if (!this.held) return;
    this.held = false;
    let growing = false;
    const check = () => {
      const fits = 4 * semiSpaceMiB() < YOUNG_GENERATION_MIB;
      if (fits === growing) return;
      growing = fits;
      setGrowthFactor(fits ? 2 : 1);
    };
    check();
    new PerformanceObserver(check).observe({ entryTypes: ['gc'] });
  }
}

/** The command's one instance (held by memory-at-start.ts, released by core/main.ts once listening). */
export const youngGeneration = new YoungGeneration();

/**
 * The size of one of V8's two semi-spaces now, in MiB: what it can hold (used + available), which is
 * what V8 multiplies when it grows the young generation. What it has committed is no guide: after a
 * shrink it keeps one semi-space committed until the next collection.
 */
function semiSpaceMiB(): number {
  const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  return space ? (space.space_used_size + space.space_available_size) / 1048576 : 0;
}

function setGrowthFactor(factor: number): void {
  v8.setFlagsFromString(`--semi-space-growth-factor=${factor}`);
}
