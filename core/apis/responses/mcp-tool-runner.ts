/**
 * Runs one tool call the model asked for. Upstream tools go through the MCP pipeline (auth, scope, route,
 * guardrails on arguments and result, the upstream call, fee and a `MCP: <tool>` log entry), exactly like
 * a `tools/call` on `/mcp`; `gateway_proxy` model tools run the model pipeline under the same key.
 * Failures are reported to the model (and the client) as the call's error, never thrown.
 */
import { randomUUID } from 'node:crypto';
import { toGatewayError } from '../../errors/gateway-error';
import type { GatewayProxyServer } from '../mcp/gateway-proxy';
import { GatewayContext } from '../../pipeline/context';
import type { Pipeline } from '../../pipeline/run-pipeline';
import type { Outcome } from '../../pipeline/stage';
import type { Clock, InboundInfo } from '../../plugins/contracts';
import type { Principal } from '../../auth/principal';
import type { InboundHeaders } from '../mcp/upstream-headers';
import { childSignal } from '../../upstream/child-signal';
import type { OfferedTool } from './mcp-tool-set';

export type ToolOutcome = ({ output: string } | { error: string }) & { cost: number };

export interface ToolRunEnvironment {
  pipeline: Pipeline;
  clock: Clock;
  proxy: GatewayProxyServer;
  credential: string | undefined;
  /** the request's headers without credentials (what /mcp tool calls and model calls see too) */
  inbound: InboundInfo;
  /** x-mcp-* headers for upstream calls */
  mcpHeaders: InboundHeaders;
  signal: AbortSignal;
  responseId: string;
  /** the caller (MCP guardrails inspect gateway_proxy calls under it) */
  principal?: Principal;
}

export async function runToolCall(env: ToolRunEnvironment, tool: OfferedTool, rawArguments: string): Promise<ToolOutcome> {
  let args: unknown;
  try {
    args = rawArguments.trim() === '' ? {} : JSON.parse(rawArguments);
  } catch {
    return { error: 'The tool arguments are not valid JSON.', cost: 0 };
  }
  if (tool.proxy) {
    const step = childSignal(env.signal);
    try {
      const { result, cost } = await env.proxy.callTool(tool.proxy, args, { credential: env.credential, inbound: env.inbound, signal: step.signal, endpoint: 'responses', calledAs: tool.mcpName, logDetails: { responseId: env.responseId }, principal: env.principal });
      const text = resultText(result);
      return result.isError ? { error: text, cost } : { output: text, cost };
    } catch (err) {
      return { error: toGatewayError(err).message, cost: 0 };
    } finally {
      step.release();
    }
  }

  const step = childSignal(env.signal);
  const ctx = new GatewayContext('mcp', 'responses', env.clock.now(), env.inbound, step.signal, randomUUID());
  ctx.credential = env.credential;
  ctx.mcp = {
    method: 'tools/call',
    toolName: tool.mcpName,
    arguments: args as Record<string, unknown>,
    params: { name: tool.mcpName, arguments: args },
    mcpHeaders: env.mcpHeaders,
  };
  ctx.logDetails.responseId = env.responseId;
  let outcome: Outcome = { status: 200, reason: 'ok' };
  let answer: { output: string } | { error: string };
  try {
    await env.pipeline.run(ctx);
    const result = ctx.mcp.result as { isError?: boolean } | undefined;
    const text = resultText(result);
    answer = result?.isError ? { error: text } : { output: text };
  } catch (err) {
    const error = toGatewayError(err);
    outcome = { status: error.status, error, reason: 'error' };
    answer = { error: error.message };
  }
  // the fee is known once the spend stage has settled
  await env.pipeline.settle(ctx, outcome);
  step.release();
  return { ...answer, cost: ctx.cost };
}

/** A tool result as text for the model: text parts joined; other content and structured data as JSON. */
export function resultText(result: unknown): string {
  const r = (result ?? {}) as { content?: unknown; structuredContent?: unknown };
  const parts = Array.isArray(r.content) ? r.content : [];
  const texts = parts.map((p: any) => (p?.type === 'text' && typeof p.text === 'string' ? p.text : JSON.stringify(p)));
  if (texts.length === 0 && r.structuredContent !== undefined) return JSON.stringify(r.structuredContent);
  return texts.join('\n');
}
