import type { BootExtension } from './extensions';
import { mcpExtension } from '../apis/mcp/boot';
import { guardrailsExtension } from '../guardrails/boot';
import { limitsExtension } from '../limits/limits-extension';
import { routingExtension } from '../routing/routing-extension';

/** Features that set themselves up at boot, in order. Each registers its services in the container. */
export const BOOT_EXTENSIONS: readonly BootExtension[] = [guardrailsExtension, mcpExtension, routingExtension, limitsExtension];
