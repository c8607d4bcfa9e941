import { guardrailBench } from '../guardrails/bench/guardrail-bench';
import { recognizerBench } from '../guardrails/bench/recognizer-bench';
import { instructionsBench } from './instruction-counts';
import { mcpBench } from './mcp-bench';
import { observabilityBench } from './observability-bench';
import { scrubBench } from './scrub-bench';
import { spendBench } from './spend-bench';
import { workersBench } from './workers-bench';
/** Context handed to a feature's own benchmark section (MCP, guardrails...). */
export interface BenchContext {
  durationSeconds: number;
  /** how many interleaved repetitions a section that takes medians runs (BENCH_REPS) */
  repetitions: number;
  /** true when taskset pinning is in use: put the system under test on core 1 */
  pin: boolean;
  /** the fast OpenAI-compatible upstream of the main bench */
  upstreamUrl: string;
  /** dist/core/main.js */
  gatewayBinary: string;
}

/** Further benchmark sections; each returns the text it prints. Add one line per feature. */
export const EXTRA_BENCHES: ((ctx: BenchContext) => Promise<string>)[] = [guardrailBench, recognizerBench, mcpBench, spendBench, observabilityBench, scrubBench, workersBench, instructionsBench];
