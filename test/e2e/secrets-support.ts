import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestGateway } from '../support/start-gateway';

/** One management API call, with the raw text kept for "no secret in it" checks. */
export async function adminApi(gw: TestGateway, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, body: text ? (JSON.parse(text) as any) : undefined };
}

/** Call one tool through the gateway's /mcp endpoint with the MCP SDK client, as a member would. */
export async function callTool(gw: TestGateway, memberKey: string, tool: string, args: Record<string, unknown> = {}) {
  const client = new Client({ name: 'secrets-e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { 'x-gateway-api-key': `Bearer ${memberKey}` } } }));
  try {
    return await client.callTool({ name: tool, arguments: args });
  } finally {
    await client.close();
  }
}

/** The canaries found in `text` (a test expects none). */
export function leaked(text: string, canaries: readonly string[]): string[] {
  return canaries.filter((c) => text.includes(c));
}
