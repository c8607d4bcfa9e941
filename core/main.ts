#!/usr/bin/env node
// first: it sets V8's memory flags before the imports below load the command's modules
import './cli/memory-at-start';
import 'reflect-metadata';
import cluster from 'node:cluster';
import { parseArgs } from 'node:util';
import { ConfigError } from './errors/gateway-error';
import { loadConfig, loadConfigForCheck } from './config/load-config';
import { createGateway } from './gateway';
import { listen } from './server';
import { rotateSecretKey } from './store/secrets/rotate-secret-key';
import { checkConfig, pluginProblems } from './cli/check-config';
import { isAddressInUse, portInUseMessage } from './cli/port-in-use';
import { startupLines } from './cli/startup-lines';
import { unusedGuardrails, unusedGuardrailWarning } from './cli/unused-guardrails';
import { USAGE } from './cli/usage';
import { createLogger, formatFrom } from './observability/logger';
import { WorkerStartError, reportListening, resolveWorkers, runPrimary } from './cli/cluster';
import { youngGeneration } from './cli/young-generation';
import { postgresConnections } from './store/postgres-pool-size';
import { packageVersion } from './cli/package-version';

const CONFIG_FLAG = { config: { type: 'string', short: 'c' } } as const;
const HELP_FLAG = { help: { type: 'boolean', short: 'h' } } as const;
const VERSION_FLAG = { version: { type: 'boolean', short: 'v' } } as const;

async function main(): Promise<void> {
  if (process.argv[2] === 'rotate-secret-key') return rotateSecretKeyCommand(process.argv.slice(3));
  if (process.argv[2] === 'check') return checkCommand(process.argv.slice(3));
  const { values } = parseArgs({
    options: { ...CONFIG_FLAG, port: { type: 'string', short: 'p' }, host: { type: 'string' }, 'log-format': { type: 'string' }, workers: { type: 'string' }, ...HELP_FLAG, ...VERSION_FLAG },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (values.version) {
    process.stdout.write(`model-gateway ${packageVersion()}\n`);
    return;
  }
  const config = await loadConfig(values.config ?? './gateway.config.ts');
  if (values.host !== undefined) {
    // an empty value (an unset $HOST) is not "the config's host": in a container that listened on loopback only, unreachable
    if (!values.host.trim()) throw new ConfigError('--host', `must be an address or host name, got ${JSON.stringify(values.host)}`);
    config.server.host = values.host;
  }
  if (values.port !== undefined) {
    // decimal digits only: Number() reads "" (an unset $PORT) as 0, any free port, and "0x1f90" as hex
    const port = /^\d+$/.test(values.port) ? Number(values.port) : NaN;
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError('--port', `must be an integer from 0 to 65535, got "${values.port}"`);
    config.server.port = port;
  }
  let format;
  try {
    format = formatFrom(values['log-format'] ?? process.env.LOG_FORMAT);
  } catch (err) {
    throw new ConfigError(values['log-format'] !== undefined ? '--log-format' : 'LOG_FORMAT', (err as Error).message);
  }
  // `--workers N`: this process becomes the primary of N gateway processes (core/cli/cluster.ts); each
  // worker runs this same function again and continues below
  const workers = values.workers !== undefined ? resolveWorkers(values.workers, '--workers') : resolveWorkers(config.server.workers, 'server.workers');
  // checked before forking: every worker would fail alike
  if (cluster.isPrimary && workers > 1) postgresConnections(config.store, workers);
  if (cluster.isPrimary && workers > 1) return runPrimary(workers, (url) => process.stdout.write(`${startupLines(url, config.adminKey).join('\n')}\n`));
  const logger = createLogger({ format });
  const gateway = await createGateway(config, { logger, processes: workers });
  // a scrape reaches one worker: it answers with every worker's counts, gathered by the primary
  if (cluster.isWorker) gateway.services.metrics?.joinCluster();
  const keys = [...gateway.services.keys.configKeys(), ...(await gateway.services.keys.collection.all())];
  // under --workers the first worker speaks for all of them
  if (!cluster.isWorker || cluster.worker?.id === 1) for (const id of unusedGuardrails(config.guardrails, keys)) gateway.services.logger.warn(unusedGuardrailWarning(id), { guardrail: id });
  let running: Awaited<ReturnType<typeof listen>>;
  try {
    running = await listen(gateway, config.server.host, config.server.port);
  } catch (err) {
    await gateway.close().catch(() => undefined);
    if (isAddressInUse(err)) throw new StartError(portInUseMessage(config.server.host, config.server.port));
    // a host that is no address of this machine (copied from another) or does not resolve (a typo) is the
    // config's or the flag's: "failed to start: listen EADDRNOTAVAIL" named neither
    const code = (err as { code?: unknown } | null)?.code;
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
      throw new ConfigError(values.host !== undefined ? '--host' : 'server.host', `cannot listen on "${config.server.host}": ${code === 'EADDRNOTAVAIL' ? 'not an address of this machine' : 'the host name does not resolve'} (${code})`);
    }
    throw err;
  }
  youngGeneration.release();

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    gateway.services.logger.info('draining', { signal });
    const exit = (code: number) => {
      logger.flushSync();
      process.exit(code);
    };
    running.drain().then(
      () => exit(0),
      () => exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  const worker = cluster.worker;
  worker?.on('disconnect', () => {
    if (worker.exitedAfterDisconnect) return;
    // The primary is gone (killed, crashed) and no SIGTERM will come. node:cluster would exit this worker
    // right after this event, cutting its streams and losing the log rows of its in-flight requests; the
    // flag tells it the disconnect is handled, and the worker drains as on SIGTERM. Without the primary
    // the shared port takes no new connections here.
    worker.exitedAfterDisconnect = true;
    stop('primary exited');
  });
  // printed last: whoever waits for this line (a supervisor, a test) may send SIGTERM at once, and the
  // handlers above must already be in place to drain rather than die. A worker leaves it to the primary.
  logger.flushSync();
  if (cluster.isWorker) return reportListening(running.url);
  process.stdout.write(`${startupLines(running.url, config.adminKey).join('\n')}\n`);
}

/** A failure to start whose message is the whole story (no "failed to start:" stack of causes). */
class StartError extends Error {}

/** Validate a config and print what would run, without opening the store or listening (core/cli/check-config.ts). */
async function checkCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { ...CONFIG_FLAG, ...HELP_FLAG }, strict: true });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const file = values.config ?? './gateway.config.ts';
  const loaded = await loadConfigForCheck(file);
  // a config that fails to load still has its plugins checked: every problem comes out of one run
  if (!loaded.config) throw new ConfigError('', [...loaded.problems, ...(await pluginProblems(loaded.partial, loaded.baseDir, loaded.problems))].join('\n'));
  const { lines, problems, warnings } = await checkConfig(loaded.config);
  if (problems.length) throw new ConfigError('', problems.join('\n'));
  process.stdout.write(`${file}: valid\n${lines.join('\n')}\n`);
  for (const w of warnings) process.stdout.write(`warning: ${w}\n`);
}

/** Re-encrypt every stored secret under a new key (core/store/secrets/rotate-secret-key.ts). */
async function rotateSecretKeyCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { ...CONFIG_FLAG, ...HELP_FLAG }, strict: true });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const config = await loadConfig(values.config ?? './gateway.config.ts');
  const result = await rotateSecretKey(config.store.url);
  process.stdout.write(
    `model-gateway: re-encrypted ${result.resealed} stored secret record(s) under key id ${result.keyId} (${result.source}); retired key id(s): ${result.retiredKeyIds.join(', ') || 'none'}\n`,
  );
}

/** a command line the parser refused (a misspelt command is an unexpected positional): answered with the usage */
const USAGE_ERRORS = new Set(['ERR_PARSE_ARGS_UNKNOWN_OPTION', 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE', 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL']);

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`model-gateway: config error:\n${err.message.split('\n').map((l) => `  ${l}`).join('\n')}\n`);
  } else if (err instanceof StartError || err instanceof WorkerStartError) {
    process.stderr.write(`model-gateway: ${err.message}\n`);
  } else if (USAGE_ERRORS.has((err as { code?: string }).code ?? '')) {
    process.stderr.write(`model-gateway: ${(err as Error).message}\n${USAGE}\n`);
  } else {
    process.stderr.write(`model-gateway: failed to start: ${(err as Error)?.message ?? String(err)}\n`);
  }
  process.exit(1);
});
