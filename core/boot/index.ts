import type { BootExtension } from './extensions';
import { mcpExtension } from '../mcp/boot';
import { guardrailsExtension } from '../guardrails/boot';

/** Features that set themselves up at boot, in order. Each registers its services in the container. */
export const BOOT_EXTENSIONS: readonly BootExtension[] = [guardrailsExtension, mcpExtension];
