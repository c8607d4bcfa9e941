import { createHistogram, performance } from 'node:perf_hooks';
import { Counter, Gauge, Registry } from 'prom-client';
import { TalliedCounter, TalliedHistogram } from './tallies';
import { WorkerMetrics } from './cluster-metrics';

/**
 * Readings taken at scrape time (prom-client `collect` callbacks) from parts of the gateway that keep
 * their own state: nothing is counted twice and nothing costs between scrapes.
 */
export interface MetricSources {
  /** every configured deployment with whether it is in cooldown now and its requests in flight */
  deployments(): { id: string; healthy: boolean; inFlight: number }[];
  /** the request log's writer: entries waiting, dropped, failed write attempts, written */
  logWriter(): { readonly queued: number; readonly dropped: number; readonly failedWrites: number; readonly written: number };
}

/** Label value for a name outside the configured set: the label's values stay a bounded set. */
export const OTHER = 'other';

/** How often the event loop's lag is sampled. */
const LAG_SAMPLE_MS = 20;

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];

/**
 * How late the event loop runs a timer due every LAG_SAMPLE_MS, in nanoseconds. perf_hooks'
 * monitorEventLoopDelay holds the time between its timer's runs instead (the interval included: an idle
 * loop read 0.02 s), and its reset at a scrape dropped the run after it: a stall that began as a scrape
 * was answered showed in no scrape at all. Here the previous run's time outlives the reset.
 */
class LoopLag {
  readonly histogram = createHistogram();
  private last = performance.now();
  private readonly timer = setInterval(() => {
    const now = performance.now();
    // a histogram takes no 0: an on-time run is 1 ns late
    this.histogram.record(Math.max(1, Math.round((now - this.last - LAG_SAMPLE_MS) * 1e6)));
    this.last = now;
  }, LAG_SAMPLE_MS).unref();

  close(): void {
    clearInterval(this.timer);
  }
}

/**
 * Every Prometheus metric of one gateway instance, in its own registry (several gateways may share a
 * process: tests, embedders). Names and labels are public (issue 17): extend, never rename. Label values
 * are never key values or free text: model names are the configured ones (else "other"), servers and
 * tools the registered ones, statuses and reasons fixed sets.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly lag: LoopLag;
  /** under `--workers N`: a scrape answers for every worker (cluster-metrics.ts) */
  private worker: WorkerMetrics | undefined;

  readonly requests = new TalliedCounter({
    name: 'gateway_requests_total',
    help: 'Requests answered, by endpoint, configured model (or "other"; empty for MCP traffic) and HTTP status',
    labelNames: ['endpoint', 'model', 'status'] as const,
    registers: [this.registry],
  });
  readonly duration = new TalliedHistogram({
    name: 'gateway_request_duration_seconds',
    help: 'Time from receiving a request to its end (a stream: its last frame), by endpoint',
    labelNames: ['endpoint'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });
  readonly timeToFirstToken = new TalliedHistogram({
    name: 'gateway_time_to_first_token_seconds',
    help: 'Time from receiving a streamed model request to the first frame from the upstream, by model',
    labelNames: ['model'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });
  readonly tokens = new TalliedCounter({
    name: 'gateway_tokens_total',
    help: 'Tokens used, by model and type (input, output, cached)',
    labelNames: ['model', 'type'] as const,
    registers: [this.registry],
  });
  readonly cost = new TalliedCounter({
    name: 'gateway_cost_usd_total',
    help: 'Cost charged in USD, by model (MCP tool fees under an empty model)',
    labelNames: ['model'] as const,
    registers: [this.registry],
  });
  readonly upstreamAttempts = new TalliedCounter({
    name: 'gateway_upstream_attempts_total',
    help: 'Calls to model deployments, by deployment and outcome: success, retried (failed, the gateway tried again or elsewhere), failed (failed, final)',
    labelNames: ['deployment', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly mcpToolCalls = new TalliedCounter({
    name: 'gateway_mcp_tool_calls_total',
    help: 'MCP tools/call requests, by registered server and tool ("other" when the name matched none), the organisation that owns the server (empty for a public one) and status: ok, tool_error, error, client_abort (the client went away or cancelled)',
    labelNames: ['server', 'tool', 'status', 'org'] as const,
    registers: [this.registry],
  });
  readonly guardrailVerdicts = new TalliedCounter({
    name: 'gateway_guardrail_verdicts_total',
    help: 'Guardrail runs, by guardrail id and verdict (allow, mask, block, error)',
    labelNames: ['guardrail', 'verdict'] as const,
    registers: [this.registry],
  });
  readonly limitRefusals = new TalliedCounter({
    name: 'gateway_limit_refusals_total',
    help: 'Requests refused by a budget or rate limit, by reason (budget, rate_limit)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly storeDuration = new TalliedHistogram({
    name: 'gateway_store_operation_duration_seconds',
    help: 'Store calls, by operation (the store method: appendLog, incrByFloat, collection.get, ...)',
    labelNames: ['operation'] as const,
    buckets: STORE_BUCKETS,
    registers: [this.registry],
  });
  readonly storeFailures = new TalliedCounter({
    name: 'gateway_store_failures_total',
    help: 'Store calls that failed (an error or a timeout), by operation',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    new Gauge({
      name: 'gateway_deployment_healthy',
      help: 'Per deployment: 1 when it takes traffic, 0 while it is in cooldown after failures',
      labelNames: ['deployment'] as const,
      registers,
      // each worker of --workers N has its own cooldowns: 0 when any of them has the deployment out
      aggregator: 'min',
      collect() {
        this.reset();
        for (const d of sources.deployments()) this.set({ deployment: d.id }, d.healthy ? 1 : 0);
      },
    });
    new Gauge({
      name: 'gateway_deployment_in_flight',
      help: 'Per deployment: requests being served now',
      labelNames: ['deployment'] as const,
      registers,
      collect() {
        this.reset();
        for (const d of sources.deployments()) this.set({ deployment: d.id }, d.inFlight);
      },
    });
    new Gauge({
      name: 'gateway_log_writes_queued',
      help: 'Request-log entries waiting to be written to the store',
      registers,
      collect() {
        this.set(sources.logWriter().queued);
      },
    });
    // the writer keeps its own totals: each scrape copies them (a counter has no set: reset, then add)
    const copied = (name: string, help: string, read: () => number) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    copied('gateway_log_writes_total', 'Request-log entries written to the store', () => sources.logWriter().written);
    copied('gateway_log_write_failures_total', 'Request-log write attempts that failed', () => sources.logWriter().failedWrites);
    copied('gateway_log_writes_dropped_total', 'Request-log entries given up on (the queue for a failing store was full, the store refused the entry alone, or it was still queued at shutdown)', () => sources.logWriter().dropped);
    // reset at each scrape, so each reading covers one interval
    const lag = (this.lag = new LoopLag()).histogram;
    const seconds = (ns: number) => ns / 1e9;
    new Gauge({
      name: 'gateway_event_loop_lag_seconds',
      help: 'Event-loop delay since the previous scrape: mean and p99 (label quantile), and the max',
      labelNames: ['quantile'] as const,
      registers,
      // under --workers N: the most delayed worker's
      aggregator: 'max',
      collect() {
        const ok = lag.count > 0;
        this.set({ quantile: 'mean' }, ok ? seconds(lag.mean) : 0);
        this.set({ quantile: '0.99' }, ok ? seconds(lag.percentile(99)) : 0);
        this.set({ quantile: 'max' }, ok ? seconds(lag.max) : 0);
        lag.reset();
      },
    });
  }

  /** The Prometheus text exposition. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await (this.worker ?? this.registry).metrics() };
  }

  /** This gateway is a worker of `--workers N` (core/main.ts): its scrapes answer with every worker's counts. */
  joinCluster(channel: NodeJS.Process = process): void {
    this.worker ??= new WorkerMetrics(this.registry, channel);
  }

  close(): void {
    this.lag.close();
    this.worker?.close();
  }
}
