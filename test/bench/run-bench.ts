import path from 'node:path';
import { canPin, pinSelf, startGatewayProcess, startNode, type Child } from './processes';
import { HAVE_WRK, formatTable, measure, warm, type Measurement } from './measure';
import { EXTRA_BENCHES } from './extra-benches';

/**
 * `npm run bench`: direct-to-upstream, a bare undici pass-through proxy, and the gateway, measured in one
 * run at c=1 and c=16 (JSON) and c=16 streaming (20 chunks), with gateway/bare ratios. With two cores,
 * the system under test (bare proxy or gateway) gets core 1 alone; load generator and upstream share core 0.
 */
const DIST = path.resolve(__dirname, '..', '..');
const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const KEY = 'sk-bench-key';

async function main(): Promise<void> {
  const pin = canPin();
  if (pin) pinSelf(0);
  const upstream = await startNode([path.join(__dirname, 'fast-upstream.js')], /^listening \d+/, pin ? 0 : undefined);
  const upstreamUrl = `http://127.0.0.1:${upstream.line.split(' ')[1]}`;
  const children: Child[] = [upstream];
  try {
    const bare = await startNode([path.join(__dirname, 'bare-proxy.js'), upstreamUrl], /^listening \d+/, pin ? 1 : undefined);
    children.push(bare);
    const bareUrl = `http://127.0.0.1:${bare.line.split(' ')[1]}`;

    const gateway = await startGatewayProcess(
      path.join(DIST, 'core', 'main.js'),
      {
        store: { url: 'memory://' },
        organizations: [{ id: 'bench' }],
        keys: [{ key: KEY, org: 'bench' }],
        providers: [{ id: 'up', type: 'openai', baseUrl: `${upstreamUrl}/v1`, apiKey: 'upstream-key' }],
        models: [{ name: 'bench-model', provider: 'up', price: { inputPerMTok: 1, outputPerMTok: 2 } }],
      },
      pin ? 1 : undefined,
    );
    children.push(gateway.child);
    const gatewayUrl = gateway.url;

    const chatBody = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'Say something short.' }], max_tokens: 16 });
    const streamBody = JSON.stringify({ model: 'bench-model', stream: true, messages: [{ role: 'user', content: 'Say something short.' }] });
    const headers = { authorization: `Bearer ${KEY}` };
    process.stdout.write(`model-gateway benchmark: ${DURATION}s per run, ${HAVE_WRK ? 'wrk' : 'autocannon'}, ${pin ? 'system under test pinned to core 1 (taskset)' : 'no CPU pinning'}\n`);

    const scenarios = [
      { title: 'chat JSON, c=1', connections: 1, body: chatBody },
      { title: 'chat JSON, c=16', connections: 16, body: chatBody },
      { title: 'chat SSE (20 chunks), c=16', connections: 16, body: streamBody },
    ];
    const summary: string[] = [];
    for (const s of scenarios) {
      const rows: Measurement[] = [];
      for (const [label, base] of [
        ['direct to upstream', upstreamUrl],
        ['bare proxy (undici)', bareUrl],
        ['model-gateway', gatewayUrl],
      ] as const) {
        const spec = { url: `${base}/v1/chat/completions`, connections: s.connections, durationSeconds: DURATION, body: s.body, headers };
        await warm(spec);
        rows.push(await measure(label, spec));
      }
      process.stdout.write(`${formatTable(s.title, rows, 'bare proxy (undici)')}\n`);
      const [, bareRow, gw] = rows;
      summary.push(`${s.title}: gateway/bare throughput ${(gw.rps / bareRow.rps).toFixed(2)}x, added p50 ${(gw.p50 - bareRow.p50).toFixed(3)} ms`);
    }
    for (const extra of EXTRA_BENCHES) process.stdout.write(`${await extra({ durationSeconds: DURATION, pin, upstreamUrl, gatewayBinary: path.join(DIST, 'core', 'main.js') })}\n`);
    process.stdout.write(`\nsummary\n${summary.map((l) => `  ${l}`).join('\n')}\n`);
  } finally {
    for (const c of children.reverse()) await c.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
