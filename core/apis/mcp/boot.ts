/**
 * Boot: create the MCP transport from its plugin, the MCP gateway (registry from config and store,
 * discovery in the background, periodic health checks) and the built-in gateway_proxy server. The MCP
 * traffic strategy the stages use is built from them once the pipeline exists (core/gateway.ts).
 */
import type { BootExtension } from '../../boot/extensions';
import type { OrganizationConfig } from '../../config/types';
import type { Clock, Logger, McpTransportFactory } from '../../plugins/contracts';
import { CLOCK, LOGGER, MODEL_CATALOG, STORE } from '../../plugins/tokens';
import type { ModelCatalog } from '../../routing/model-catalog';
import type { StoreBackend } from '../../store/store-backend';
import { GATEWAY_PROXY_SERVER, GatewayProxyServer } from './gateway-proxy';
import { MCP_GATEWAY, McpGateway } from './mcp-gateway';

export const MCP_TRANSPORT_PLUGIN = 'mcp-streamable-http';

export const mcpExtension: BootExtension = async (boot) => {
  const store = boot.container.resolve<StoreBackend>(STORE);
  const logger = boot.container.resolve<Logger>(LOGGER);
  const transports = await boot.registry.create<McpTransportFactory>('mcp-transport', MCP_TRANSPORT_PLUGIN, {}, boot.pluginDeps(MCP_TRANSPORT_PLUGIN), 'mcpServers');
  const configOrgs = new Set(boot.config.organizations.map((o) => o.id));
  const storedOrgs = store.collection<OrganizationConfig>('organizations');
  const clock = boot.container.resolve<Clock>(CLOCK);
  const builtin = new GatewayProxyServer(boot.container.resolve<ModelCatalog>(MODEL_CATALOG), new Date(clock.now()).toISOString());
  const gateway = new McpGateway({
    store,
    clock,
    builtin,
    transports,
    settings: boot.config.mcp,
    callTimeoutMs: boot.config.timeouts.totalMs,
    logger,
    orgExists: async (org) => configOrgs.has(org) || (await storedOrgs.get(org)) !== undefined,
  });
  await gateway.start(boot.config.mcpServers);
  boot.container.registerInstance(MCP_GATEWAY, gateway);
  boot.container.registerInstance(GATEWAY_PROXY_SERVER, builtin);
  return () => gateway.stop();
};
