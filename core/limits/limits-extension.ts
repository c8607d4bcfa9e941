import type { BootExtension } from '../boot/extensions';
import type { McpStageHandlers } from '../apis/mcp/mcp-stage-handlers';
import type { GatewayContext } from '../pipeline/context';
import type { Clock } from '../plugins/contracts';
import { ADMISSION, CLOCK, MCP_STAGE_HANDLERS, STORE } from '../plugins/tokens';
import type { StoreBackend } from '../store/store-backend';
import { LimitsAdmission } from './admission';
import { LimitSubjects } from './limit-subjects';

/**
 * Registers budget and rate-limit admission. Keys and organisations created through the management API
 * may carry limits too, so admission is always on; a request whose key and organisation have no limits
 * costs one map lookup.
 */
export const limitsExtension: BootExtension = async ({ container, config }) => {
  const store = container.resolve<StoreBackend>(STORE);
  const clock = container.resolve<Clock>(CLOCK);
  // Resolved on first use: the MCP gateway registers its handlers in a boot extension of its own.
  let handlers: McpStageHandlers | undefined;
  // The route handler prices the routed tool (`ctx.mcp.fee`); `fee()` itself charges only once the
  // upstream has answered, so it is only a second opinion here.
  const mcpFee = (ctx: GatewayContext): number => {
    handlers ??= container.resolve<McpStageHandlers>(MCP_STAGE_HANDLERS);
    return Math.max(ctx.mcp?.fee ?? 0, handlers.fee?.(ctx, { status: 200, reason: 'ok' }) ?? 0);
  };
  const subjects = new LimitSubjects(config.organizations, store, () => clock.now());
  container.registerInstance(ADMISSION, new LimitsAdmission(subjects, store, clock, mcpFee));
};
