/**
 * Boot: create every MCP transport plugin (a server's `transport` names one), the MCP gateway (registry
 * from config and store, discovery in the background, periodic health checks) and the built-in
 * gateway_proxy server. The MCP traffic strategy the stages use is built from them once the pipeline
 * exists (core/gateway.ts).
 */
import type { BootExtension } from '../../boot/extensions';
import type { OrganizationConfig } from '../../config/types';
import type { Clock, Logger, McpTransportFactory } from '../../plugins/contracts';
import { CHANGE_EVENTS, CLOCK, LOGGER, MODEL_CATALOG, STORE } from '../../plugins/tokens';
import type { InstanceEvents } from '../../store/events/change-events';
import type { ModelCatalog } from '../../routing/model-catalog';
import type { StoreBackend } from '../../store/store-backend';
import { GATEWAY_PROXY_SERVER, GatewayProxyServer } from './gateway-proxy';
import { MCP_GATEWAY, McpGateway } from './mcp-gateway';

export const mcpExtension: BootExtension = async (boot) => {
  const store = boot.container.resolve<StoreBackend>(STORE);
  const logger = boot.container.resolve<Logger>(LOGGER);
  // Transports take no options from the config, so creating each one once, up front, costs little and
  // lets a server registered later through the management API name any of them.
  const transports = new Map<string, McpTransportFactory>();
  for (const id of boot.registry.ids('mcp-transport')) {
    transports.set(id, await boot.registry.create<McpTransportFactory>('mcp-transport', id, {}, boot.pluginDeps(id), 'mcpServers'));
  }
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
    callMaxTotalMs: boot.config.mcp.maxCallSeconds * 1000,
    logger,
    events: boot.container.isRegistered(CHANGE_EVENTS) ? boot.container.resolve<InstanceEvents>(CHANGE_EVENTS) : undefined,
    orgExists: async (org) => configOrgs.has(org) || (await storedOrgs.get(org)) !== undefined,
  });
  await gateway.start(boot.config.mcpServers);
  boot.container.registerInstance(MCP_GATEWAY, gateway);
  boot.container.registerInstance(GATEWAY_PROXY_SERVER, builtin);
  return () => gateway.stop();
};
