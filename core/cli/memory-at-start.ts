/**
 * The command's memory settings, applied when core/main.ts imports this module first: before the ~1,000
 * modules of the command load, which alone would grow V8's young generation to its full size.
 */
import { capHeapGrowth } from './heap-growth';
import { youngGeneration } from './young-generation';

capHeapGrowth();
youngGeneration.hold();
