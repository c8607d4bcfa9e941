#!/usr/bin/env node
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { ConfigError } from './errors/gateway-error';
import { loadConfig } from './config/load-config';
import { createGateway } from './gateway';
import { listen } from './server';
import { rotateSecretKey } from './store/secrets/rotate-secret-key';

const USAGE = 'usage: model-gateway --config FILE [--port N] [--host H]\n       model-gateway rotate-secret-key --config FILE';

async function main(): Promise<void> {
  if (process.argv[2] === 'rotate-secret-key') return rotateSecretKeyCommand(process.argv.slice(3));
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

/** Re-encrypt every stored secret under a new key (core/store/secrets/rotate-secret-key.ts). */
async function rotateSecretKeyCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { config: { type: 'string', short: 'c' } }, strict: true });
  const config = await loadConfig(values.config ?? './gateway.config.ts');
  const result = await rotateSecretKey(config.store.url);
  process.stdout.write(
    `model-gateway: re-encrypted ${result.resealed} stored secret record(s) under key id ${result.keyId} (${result.source}); retired key id(s): ${result.retiredKeyIds.join(', ') || 'none'}\n`,
  );
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
