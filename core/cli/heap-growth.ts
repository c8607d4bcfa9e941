import v8 from 'node:v8';
import { givenToNode } from './node-flags';

/** How far V8 may grow the old generation above what was live after its last full collection, in %. */
export const HEAP_GROWING_PERCENT = 20;

/**
 * Bound the gateway's peak memory under load (issue 16). A request's objects mostly die young, but about
 * 2 KB of each (its abort signal, undici's request state) outlives two scavenges and is promoted to the
 * old generation, where it stays until a full collection. V8 lets the old generation grow to several
 * times its live size before collecting, so at a few thousand requests a second the gateway's RSS rose
 * 80–90 MiB above idle in dead objects. At 20% growth the old generation is collected about 1.5 times a
 * second under load, a few ms of GC each; README "Memory" has the measurements.
 *
 * Set by the command only (core/cli/memory-at-start.ts, so every `--workers` worker too), never by
 * createGateway: a process that embeds the gateway keeps its own GC settings. A `--heap-growing-percent`
 * given to node itself wins (0 restores V8's default). V8 reads this flag at each collection, so setting
 * it after start is safe, unlike the flags that size the heap.
 */
export function capHeapGrowth(): boolean {
  if (givenToNode('--heap-growing-percent')) return false;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
