/**
 * The name of the gateway's own built-in MCP server (models as tools, see gateway-proxy.ts). It is not an
 * upstream server: server selection (`x-mcp-servers`) accepts it beside upstream names.
 */
export const GATEWAY_PROXY = 'gateway_proxy';
