/**
 * The main entry: config helpers and running a gateway in process, plus everything the plugin SDK
 * (`model-gateway/sdk`, core/plugins/sdk.ts) exports, so older plugins that import `model-gateway` still work.
 */
export { defineConfig, env } from './config/define-config';
export type * from './config/types';
export * from './plugins/sdk';
export { createGateway } from './gateway';
export { loadConfig, resolveConfig } from './config/load-config';
export { listen } from './server';
