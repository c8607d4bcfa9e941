import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

/** Is `taskset` here and are there at least two cores to split? */
export function canPin(): boolean {
  return spawnSync('taskset', ['-p', String(process.pid)]).status === 0 && (require('node:os').availableParallelism?.() ?? 1) >= 2;
}

/** Pin this process (the load generator) to core 0. */
export function pinSelf(core: number): void {
  spawnSync('taskset', ['-a', '-p', '-c', String(core), String(process.pid)], { stdio: 'ignore' });
}

export interface Child {
  process: ChildProcess;
  /** the first stdout line matching `pattern` */
  line: string;
  stop(): Promise<void>;
}

/** Start a node script (optionally on one core) and wait for a stdout line matching `pattern`. */
export async function startNode(args: string[], pattern: RegExp, core: number | undefined, env: NodeJS.ProcessEnv = {}): Promise<Child> {
  const command = core === undefined ? process.execPath : 'taskset';
  const argv = core === undefined ? args : ['-c', String(core), process.execPath, ...args];
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (l) => {
      if (pattern.test(l)) resolve(l);
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code} before it was ready`)));
  });
  return {
    process: child,
    line,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** The gateway CLI as its own process, from a config object (core 1 when pinning); its base URL. */
export async function startGatewayProcess(gatewayBinary: string, config: object, core: number | undefined, env: NodeJS.ProcessEnv = {}, args: string[] = []): Promise<{ child: Child; url: string }> {
  const configFile = path.join(mkdtempSync(path.join(tmpdir(), 'mg-bench-')), 'bench.config.json');
  writeFileSync(configFile, JSON.stringify(config));
  // the per-request log lines are off (warn) unless a bench turns them on
  const child = await startNode([gatewayBinary, '--config', configFile, '--port', '0', ...args], /listening on/, core, { LOG_LEVEL: 'warn', ...env });
  return { child, url: child.line.split(' on ')[1].trim() };
}
