/**
 * Boot: create every MCP transport plugin (a server's `transport` names one), the MCP gateway (registry from config and store,
 * discovery in the background, periodic health checks) and register the stage handlers the pipeline's
 * scope, route, call and spend stages use for MCP traffic.
 */
import type { BootExtension } from '../../boot/extensions';
import type { OrganizationConfig } from '../../config/types';
import type { Clock, Logger, McpTransportFactory } from '../../plugins/contracts';
import { CLOCK, LOGGER, MCP_STAGE_HANDLERS, STORE } from '../../plugins/tokens';
import type { StoreBackend } from '../../store/store-backend';
import { GatewayMcpStageHandlers } from './gateway-stage-handlers';
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
  const gateway = new McpGateway({
    store,
    clock: boot.container.resolve<Clock>(CLOCK),
    transports,
    settings: boot.config.mcp,
    callTimeoutMs: boot.config.timeouts.totalMs,
    logger,
    orgExists: async (org) => configOrgs.has(org) || (await storedOrgs.get(org)) !== undefined,
  });
  await gateway.start(boot.config.mcpServers);
  boot.container.registerInstance(MCP_GATEWAY, gateway);
  boot.container.registerInstance(MCP_STAGE_HANDLERS, new GatewayMcpStageHandlers(gateway));
  return () => gateway.stop();
};
