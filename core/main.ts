#!/usr/bin/env node
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { ConfigError } from './errors/gateway-error';
import { loadConfig } from './config/load-config';
import { createGateway } from './gateway';
import { listen } from './server';

const USAGE = 'usage: model-gateway --config FILE [--port N] [--host H]';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { config: { type: 'string', short: 'c' }, port: { type: 'string', short: 'p' }, host: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const config = await loadConfig(values.config ?? './gateway.config.ts');
  if (values.host) config.server.host = values.host;
  if (values.port !== undefined) {
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError('--port', `must be an integer from 0 to 65535, got "${values.port}"`);
    config.server.port = port;
  }
  const gateway = await createGateway(config);
  const running = await listen(gateway, config.server.host, config.server.port);
  process.stdout.write(`model-gateway listening on ${running.url}\n`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    gateway.services.logger.info('draining', { signal });
    running.drain().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`model-gateway: config error:\n${err.message.split('\n').map((l) => `  ${l}`).join('\n')}\n`);
  } else if ((err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || (err as { code?: string }).code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    process.stderr.write(`model-gateway: ${(err as Error).message}\n${USAGE}\n`);
  } else {
    process.stderr.write(`model-gateway: failed to start: ${(err as Error)?.message ?? String(err)}\n`);
  }
  process.exit(1);
});
