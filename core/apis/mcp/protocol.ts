/**
 * What the gateway says about itself to MCP clients: the protocol versions it speaks at `initialize`
 * (the SDK 1.x list; 2026-07-28 is negotiated per request, see revision.ts), its capabilities and
 * instructions. The gateway is stateless: no session id is ever issued.
 */
import { legacyTypes } from './sdk';

export const GATEWAY_SERVER_INFO = { name: 'model-gateway', version: '0.1.0' };

export const GATEWAY_CAPABILITIES = { tools: { listChanged: false }, prompts: { listChanged: false }, resources: { listChanged: false } };

export const GATEWAY_INSTRUCTIONS =
  'This is model-gateway, an MCP gateway: its tools, prompts and resources are those of the upstream MCP servers your gateway key may reach. With several servers, names are "<server alias>-<name>".';

/** The client's version when we speak it, else our latest (the client then decides whether to go on). */
export function negotiateProtocolVersion(requested: unknown): string {
  const { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } = legacyTypes();
  return typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
}

export function initializeResult(requestedVersion: unknown) {
  return {
    protocolVersion: negotiateProtocolVersion(requestedVersion),
    capabilities: GATEWAY_CAPABILITIES,
    serverInfo: GATEWAY_SERVER_INFO,
    instructions: GATEWAY_INSTRUCTIONS,
  };
}
