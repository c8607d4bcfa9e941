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
 * lets it grow again once it is listening (`release`), and holds it once more when a collection shows it
 * has reached YOUNG_GENERATION_MIB. Growth needs many collections in a row that keep objects alive, so the
 * hold lands well before the next doubling. Node given `--max-semi-space-size` or
 * `--semi-space-growth-factor` itself (command line or NODE_OPTIONS) keeps V8's behaviour with its value.
 * `createGateway` in another process leaves that process's settings alone.
 */
export class YoungGeneration {
  private held = false;

  /** Stop the growth now, unless node was given its own setting. True when it did. */
  hold(execArgv: readonly string[] = process.execArgv, nodeOptions: string = process.env.NODE_OPTIONS ?? ''): boolean {
    if (['--max-semi-space-size', '--semi-space-growth-factor'].some((flag) => givenToNode(flag, execArgv, nodeOptions))) return false;
    setGrowthFactor(1);
    this.held = true;
    return true;
  }

  /** After `hold`: let it grow (V8's factor of 2) up to `limitMiB`, then hold it there. */
  release(limitMiB: number = YOUNG_GENERATION_MIB): void {
    if (!this.held) return;
    this.held = false;
    if (youngGenerationMiB() >= limitMiB) return setGrowthFactor(1);
    setGrowthFactor(2);
    const watch = new PerformanceObserver(() => {
      if (youngGenerationMiB() < limitMiB) return;
      setGrowthFactor(1);
      watch.disconnect();
    });
    watch.observe({ entryTypes: ['gc'] });
  }
}

/** The command's one instance (held by memory-at-start.ts, released by core/main.ts once listening). */
export const youngGeneration = new YoungGeneration();

/** What V8 has committed to the young generation now, in MiB. */
export function youngGenerationMiB(): number {
  const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  return (space?.space_size ?? 0) / 1048576;
}

function setGrowthFactor(factor: number): void {
  v8.setFlagsFromString(`--semi-space-growth-factor=${factor}`);
}
