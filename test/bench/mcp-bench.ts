/**
 * The MCP section of `npm run bench`: `tools/list` and `tools/call` as raw JSON-RPC, sent directly to a
 * fake MCP upstream (SDK-built, stateless streamable HTTP) and through the gateway's `/mcp`, measured in
 * the same run. Targets (issue 3): a cached `tools/list` faster through the gateway than the upstream
 * answers it directly; `tools/call` at least 0.5x direct throughput.
 */
import path from 'node:path';
import type { BenchContext } from './extra-benches';
import { formatTable, measure, warm, type Measurement } from './measure';
import { startGatewayProcess, startNode, type Child } from './processes';

const KEY = 'sk-bench-mcp-key';

export async function mcpBench(ctx: BenchContext): Promise<string> {
  const children: Child[] = [];
  try {
    const upstream = await startNode([path.join(__dirname, 'mcp-upstream.js')], /^listening \d+/, ctx.pin ? 0 : undefined);
    children.push(upstream);
    const upstreamUrl = `http://127.0.0.1:${upstream.line.split(' ')[1]}/mcp`;
    const gateway = await startGatewayProcess(
      ctx.gatewayBinary,
      {
        store: { url: 'memory://' },
        organizations: [{ id: 'bench' }],
        keys: [{ key: KEY, org: 'bench' }],
        mcpServers: [{ name: 'bench', url: upstreamUrl, visibility: 'public', pricePerCall: 0.001 }],
      },
      ctx.pin ? 1 : undefined,
    );
    children.push(gateway.child);
    const gatewayUrl = `${gateway.url}/mcp`;

    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search', arguments: { q: 'benchmark', limit: 3 } } });
    // the SDK's server transport wants both types in Accept; the gateway answers plain application/json
    const direct = { accept: 'application/json, text/event-stream' };
    const viaGateway = { accept: 'application/json', 'x-gateway-api-key': `Bearer ${KEY}` };

    const out: string[] = [];
    const summary: string[] = [];
    for (const [title, body] of [
      ['MCP tools/list (cached by the gateway), c=16', list],
      ['MCP tools/call, c=16', call],
    ] as const) {
      const rows: Measurement[] = [];
      for (const [label, url, headers] of [
        ['direct to MCP upstream', upstreamUrl, direct],
        ['model-gateway /mcp', gatewayUrl, viaGateway],
      ] as const) {
        const spec = { url, connections: 16, durationSeconds: ctx.durationSeconds, body, headers };
        await warm(spec);
        rows.push(await measure(label, spec));
      }
      out.push(formatTable(title, rows, 'direct to MCP upstream'));
      summary.push(`${title}: gateway/direct throughput ${(rows[1].rps / rows[0].rps).toFixed(2)}x`);
    }
    return `${out.join('\n')}\n${summary.map((l) => `  ${l}`).join('\n')}`;
  } finally {
    for (const c of children.reverse()) await c.stop();
  }
}
