/**
 * Runs one tool call the model asked for: an MCP exchange, child of the response, through every stage
 * (scope inherited from the response, route, guardrails on arguments and result, the upstream call or,
 * for a `gateway_proxy` tool, a child model exchange, fee and a `MCP: <tool>` log entry), exactly like a
 * `tools/call` on `/mcp`. Failures are reported to the model (and the client) as the call's error, never
 * thrown.
 */
import type { GatewayContext } from '../../pipeline/context';
import type { Pipeline } from '../../pipeline/run-pipeline';
import type { Clock } from '../../plugins/contracts';
import type { InboundHeaders } from '../mcp/upstream-headers';
import { childSignal } from '../../upstream/child-signal';
import type { ContentPart } from '../../types/chat';
import type { OfferedTool } from './mcp-tool-set';

/**
 * `media`: the result's images, for the model to see (a chat tool message holds text only); `modelText`:
 * the output as the model is told it, without those images' base64 as JSON.
 */
export type ToolOutcome = ({ output: string } | { error: string }) & { cost: number; media?: ContentPart[]; modelText?: string };

export interface ToolRunEnvironment {
  pipeline: Pipeline;
  clock: Clock;
  /** the response's exchange: each tool call is its child */
  parent: GatewayContext;
  /** x-mcp-* headers for upstream calls */
  mcpHeaders: InboundHeaders;
  signal: AbortSignal;
  responseId: string;
}

export async function runToolCall(env: ToolRunEnvironment, tool: OfferedTool, rawArguments: string): Promise<ToolOutcome> {
  let args: unknown;
  try {
    args = rawArguments.trim() === '' ? {} : JSON.parse(rawArguments);
  } catch {
    return { error: 'The tool arguments are not valid JSON.', cost: 0 };
  }
  // MCP's tools/call takes an object (as /mcp checks): anything else only earns the server's refusal
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return { error: 'The tool arguments are not a JSON object.', cost: 0 };
  const step = childSignal(env.signal);
  const ctx = env.parent.child('mcp', 'own', env.clock.now(), step.signal);
  ctx.mcp = { method: 'tools/call', toolName: tool.mcpName, arguments: args as Record<string, unknown>, mcpHeaders: env.mcpHeaders };
  ctx.logDetails.responseId = env.responseId;
  let answer: ({ output: string } | { error: string }) & { media?: ContentPart[]; modelText?: string } = { error: '' };
  const outcome = await env.pipeline.execute(ctx, {
    async deliver(done) {
      const result = done.mcpExchange.result as { isError?: boolean } | undefined;
      const text = resultText(result);
      answer = result?.isError ? { error: text } : { output: text };
      const images = resultImages(result);
      if (images.media.length > 0) answer = { ...answer, media: images.media, modelText: images.text };
    },
    fail() {},
  });
  step.release();
  if (outcome.error) answer = { error: outcome.error.message };
  // settled: the fee (and a gateway_proxy call's model cost) is known
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

/** The image parts of a tool result as chat image parts, and the rest of the result as text. */
function resultImages(result: unknown): { media: ContentPart[]; text: string } {
  const r = (result ?? {}) as { content?: unknown };
  const parts: any[] = Array.isArray(r.content) ? r.content : [];
  const isImage = (p: any) => p?.type === 'image' && typeof p.data === 'string' && typeof p.mimeType === 'string';
  const media: ContentPart[] = parts.filter(isImage).map((p) => ({ type: 'image_url', image_url: { url: `data:${p.mimeType};base64,${p.data}` } }));
  return { media, text: media.length > 0 ? resultText({ ...r, content: parts.filter((p) => !isImage(p)) }) : '' };
}
