/**
 * What the gateway says about itself to MCP clients: the protocol versions it speaks (the SDK's list),
 * and its `initialize` answer. The gateway is stateless: no session id is ever issued.
 */
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

export const GATEWAY_SERVER_INFO = { name: 'model-gateway', version: '0.1.0' };

/** The client's version when we speak it, else our latest (the client then decides whether to go on). */
export function negotiateProtocolVersion(requested: unknown): string {
  return typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
}

export function initializeResult(requestedVersion: unknown) {
  return {
    protocolVersion: negotiateProtocolVersion(requestedVersion),
    capabilities: { tools: { listChanged: false }, prompts: { listChanged: false }, resources: { listChanged: false } },
    serverInfo: GATEWAY_SERVER_INFO,
    instructions: 'Tools, prompts and resources of the MCP servers your gateway key may reach. With several servers, names are "<server alias>-<name>".',
  };
}
