import 'reflect-metadata';
import { resolveConfig } from '../../core/config/load-config';
import type { GatewayConfigInput } from '../../core/config/types';
import { createGateway, type Gateway, type GatewayOptions } from '../../core/gateway';
import { createLogger } from '../../core/observability/logger';
import { listen, type RunningServer } from '../../core/server';

export interface TestGateway {
  /** e.g. http://127.0.0.1:54321 */
  url: string;
  gateway: Gateway;
  server: RunningServer;
  /** every line the gateway logged, for "no secret in the output" checks */
  logLines: string[];
  close(): Promise<void>;
}

/**
 * A whole gateway in process on 127.0.0.1:0, from a config object (store defaults to memory://).
 * The logger writes into `logLines` instead of stderr.
 */
export async function startGateway(config: GatewayConfigInput, options: GatewayOptions & { env?: NodeJS.ProcessEnv; baseDir?: string } = {}): Promise<TestGateway> {
  // baseDir: where the config "lives" (relative plugin paths and plugin package names resolve from it)
  const resolved = resolveConfig({ store: { url: 'memory://' }, ...config }, options.env ?? process.env, options.baseDir);
  const logLines: string[] = [];
  const logger = options.logger ?? createLogger({ level: 'debug', write: (line) => logLines.push(line) });
  const gateway = await createGateway(resolved, { ...options, logger });
  const server = await listen(gateway, '127.0.0.1', 0);
  return {
    url: server.url,
    gateway,
    server,
    logLines,
    close: () => server.drain(2000),
  };
}
