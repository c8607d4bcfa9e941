import type { Attributes } from '@opentelemetry/api';
import type { GatewayContext } from '../pipeline/context';
import type { Outcome } from '../pipeline/stage';
import { loggedName } from './logged-name';

/**
 * OpenTelemetry GenAI semantic-convention attribute names (gen_ai.*), plus the gateway's own (gateway.*)
 * for what the conventions have no name for: the cost, the key, the deployment.
 */
export const GEN_AI = {
  operation: 'gen_ai.operation.name',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cachedTokens: 'gen_ai.usage.cache_read.input_tokens',
  toolName: 'gen_ai.tool.name',
  promptName: 'gen_ai.prompt.name',
} as const;

/** The attribute that names what an MCP method calls: a prompt's name is no tool's (prompts/get). */
export function mcpNameAttribute(method: string): string {
  return method === 'prompts/get' ? GEN_AI.promptName : GEN_AI.toolName;
}

/** The GenAI operation an endpoint performs (gen_ai.operation.name's well-known values where one fits). */
export function operationOf(ctx: GatewayContext): string {
  if (ctx.traffic === 'mcp') return ctx.mcp?.method === 'tools/call' ? 'execute_tool' : (ctx.mcp?.method ?? 'mcp');
  switch (ctx.endpoint) {
    case 'embeddings':
      return 'embeddings';
    case 'images':
      return 'generate_content';
    default:
      return 'chat';
  }
}

/**
 * `{operation} {model}` (or `{tool}`), as the GenAI conventions name spans, when the name is a configured
 * model or a tool (prompt) the route stage found on a registered server; else `{operation}` alone. Span
 * names are low-cardinality (OpenTelemetry): a client's unknown name, of any length, made a name of
 * its own per request and stays in the attributes (gen_ai.request.model, gen_ai.tool.name), cut as the
 * log cuts it; a resource URI is never in it (MCP conventions: mcp.resource.uri is high-cardinality).
 */
export function rootSpanName(ctx: GatewayContext, isModel: (name: string) => boolean): string {
  const operation = operationOf(ctx);
  const model = ctx.traffic === 'mcp' ? undefined : requestedModel(ctx);
  const subject = ctx.traffic === 'mcp' ? (ctx.mcp?.upstreamTool !== undefined ? ctx.mcp.toolName : undefined) : model !== undefined && isModel(model) ? model : undefined;
  return subject ? `${operation} ${subject}` : operation;
}

/** The model a model exchange or a parent (a Responses request) asks for. */
export function requestedModel(ctx: GatewayContext): string | undefined {
  return ctx.model?.requestedModel ?? ctx.parentWork?.model;
}

/** What is known when the exchange starts. */
export function requestAttributes(ctx: GatewayContext): Attributes {
  const attributes: Attributes = { [GEN_AI.operation]: operationOf(ctx), 'gateway.endpoint': ctx.endpoint, 'gateway.request_id': ctx.requestId };
  const model = requestedModel(ctx);
  if (model !== undefined) attributes[GEN_AI.requestModel] = loggedName(model);
  if (ctx.mcp) {
    attributes['mcp.method.name'] = ctx.mcp.method;
    if (ctx.mcp.toolName !== undefined) attributes[mcpNameAttribute(ctx.mcp.method)] = loggedName(ctx.mcp.toolName);
    if (ctx.mcp.uri !== undefined) attributes['mcp.resource.uri'] = loggedName(ctx.mcp.uri);
  }
  return attributes;
}

/** What is known once it settled: who, where, how much. */
export function resultAttributes(ctx: GatewayContext, outcome: Outcome): Attributes {
  const attributes: Attributes = {
    'http.response.status_code': outcome.status,
    [GEN_AI.inputTokens]: ctx.usage.inputTokens,
    [GEN_AI.outputTokens]: ctx.usage.outputTokens,
    'gateway.cost_usd': ctx.cost,
  };
  if (ctx.usage.cacheReadTokens) attributes[GEN_AI.cachedTokens] = ctx.usage.cacheReadTokens;
  if (ctx.principal) {
    attributes['gateway.key_id'] = ctx.principal.keyId ?? '';
    if (ctx.principal.org) attributes['gateway.org'] = ctx.principal.org;
  }
  const deployment = ctx.model?.deployment;
  if (deployment) {
    attributes['gateway.deployment.id'] = deployment.id;
    attributes[GEN_AI.responseModel] = deployment.config.model ?? deployment.name;
  } else if (ctx.firstDeploymentId) {
    // a Responses request (or a gateway_proxy tool call) calls no model itself: its rounds' deployment,
    // as its log entry names it
    attributes['gateway.deployment.id'] = ctx.firstDeploymentId;
  }
  if (ctx.mcp?.serverName) attributes['gateway.mcp.server'] = ctx.mcp.serverName;
  return attributes;
}
