/**
 * The observability section of `npm run bench` (issue 17 targets): the gateway with metrics and the
 * per-request log line on (traces off), against all of them off, and with traces exported to a local
 * OTLP/HTTP receiver. Targets: on within 5% of off; traces within 15%. The runs alternate (off, on,
 * traces, twice) so a noisy neighbour hurts each alike; each row also shows the gateway's CPU time per
 * request (from /proc), which noise from other processes affects much less than throughput.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BenchContext } from './extra-benches';
import { formatTable, measure, warm, type Measurement } from './measure';
import { startGatewayProcess, type Child } from './processes';
import { cpuMicros } from './proc-stats';

const KEY = 'sk-bench-observability-key';
/** A receiver that takes OTLP exports and answers 200, as a collector would. */
async function startSink(): Promise<{ url: string; close(): Promise<void>; exports: () => number }> {
  let count = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => count,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export async function observabilityBench(ctx: BenchContext): Promise<string> {
  const sink = await startSink();
  const children: Child[] = [];
  const config = (metrics: boolean) => ({
    store: { url: 'memory://' },
    organizations: [{ id: 'bench' }],
    keys: [{ key: KEY, org: 'bench' }],
    providers: [{ id: 'up', type: 'openai', baseUrl: `${ctx.upstreamUrl}/v1`, apiKey: 'upstream-key' }],
    models: [{ name: 'bench-model', provider: 'up', price: { inputPerMTok: 1, outputPerMTok: 2 } }],
    metrics: { enabled: metrics },
  });
  try {
    const variants = [
      { label: 'all off', config: config(false), env: { LOG_LEVEL: 'warn' } },
      { label: 'metrics + logs on', config: config(true), env: { LOG_LEVEL: 'info' } },
      { label: 'metrics + logs + traces', config: config(true), env: { LOG_LEVEL: 'info', OTEL_EXPORTER_OTLP_ENDPOINT: sink.url } },
    ];
    const started = [];
    for (const v of variants) {
      const gw = await startGatewayProcess(ctx.gatewayBinary, v.config, ctx.pin ? 1 : undefined, v.env);
      children.push(gw.child);
      started.push({ ...v, url: gw.url, pid: gw.child.process.pid! });
    }
    const body = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'Say something short.' }], max_tokens: 16 });
    const totals = new Map<string, { rps: number[]; p50: number[]; p99: number[]; errors: number; cpuPerRequest: number[] }>();
    for (let round = 0; round < 2; round++) {
      for (const v of started) {
        const spec = { url: `${v.url}/v1/chat/completions`, connections: 16, durationSeconds: ctx.durationSeconds, body, headers: { authorization: `Bearer ${KEY}` } };
        await warm(spec);
        const before = cpuMicros(v.pid);
        const m = await measure(v.label, spec);
        const after = cpuMicros(v.pid);
        const t = totals.get(v.label) ?? { rps: [], p50: [], p99: [], errors: 0, cpuPerRequest: [] };
        t.rps.push(m.rps);
        t.p50.push(m.p50);
        t.p99.push(m.p99);
        t.errors += m.errors;
        if (before !== undefined && after !== undefined && m.rps > 0) t.cpuPerRequest.push((after - before) / (m.rps * ctx.durationSeconds));
        totals.set(v.label, t);
      }
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const rows: Measurement[] = [...totals].map(([label, t]) => ({ label, rps: mean(t.rps), p50: mean(t.p50), p99: mean(t.p99), errors: t.errors, requests: Math.round(mean(t.rps) * ctx.durationSeconds) }));
    const cpu = new Map([...totals].map(([label, t]) => [label, mean(t.cpuPerRequest)]));
    const off = rows[0];
    const lines = rows.map((r) => `  ${r.label}: ${(r.rps / off.rps).toFixed(3)}x the throughput of all off; gateway CPU ${cpu.get(r.label)!.toFixed(0)} µs/request (all off: ${cpu.get(off.label)!.toFixed(0)} µs)`);
    return `${formatTable('observability: chat JSON, c=16 (mean of 2 alternating runs each)', rows, 'all off')}\n${lines.join('\n')}\n  OTLP exports received: ${sink.exports()}`;
  } finally {
    for (const c of children.reverse()) await c.stop();
    await sink.close();
  }
}
