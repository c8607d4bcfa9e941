/** The public API for config files and plugin authors. */
export { defineConfig, env } from './config/define-config';
export { definePlugin } from './plugins/define-plugin';
export type * from './plugins/contracts';
export type * from './config/types';
export type * from './types/chat';
export { SseFrame } from './streaming/sse-frame';
export * from './errors/gateway-error';
export { createGateway } from './gateway';
export { loadConfig, resolveConfig } from './config/load-config';
export { listen } from './server';
