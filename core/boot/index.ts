import type { BootExtension } from './extensions';

/** Features that set themselves up at boot, in order. Each registers its services in the container. */
export const BOOT_EXTENSIONS: readonly BootExtension[] = [];
