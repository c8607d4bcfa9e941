import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

/** Is `taskset` here and are there at least two cores to split? */
export function canPin(): boolean {
  return spawnSync('taskset', ['-p', String(process.pid)]).status === 0 && (require('node:os').availableParallelism?.() ?? 1) >= 2;
}

/** Pin this process and its threads (the load generator) to a core, or a list such as `0-1`. */
export function pinSelf(core: number | string): void {
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

/**
 * The gateway CLI as its own process, from a config object (core 1 when pinning); its base URL. It runs
 * as `npm start` does, at the default log level (an access line per request), with its stdout going to a
 * file as in a deployment (startLoggingProcess).
 */
export async function startGatewayProcess(gatewayBinary: string, config: object, core: number | undefined, env: NodeJS.ProcessEnv = {}, args: string[] = []): Promise<{ child: Child; url: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mg-bench-'));
  const configFile = path.join(dir, 'bench.config.json');
  writeFileSync(configFile, JSON.stringify(config));
  return startLoggingProcess(dir, [gatewayBinary, '--config', configFile, '--port', '0', ...args], core, env);
}

/** How a process is started beyond its node arguments. */
export interface Launch {
  /** a command node runs under, with its arguments (valgrind: test/bench/instruction-counts.ts) */
  wrapper?: string[];
  /** how long it may take to print its listening line (default 30 s) */
  readyWithinMs?: number;
}

/**
 * A node script that logs to stdout (optionally on one core), with its stdout going to a file in `dir`,
 * so that writing its log costs it what it costs in a deployment and costs the load generator nothing;
 * its base URL, from the first listening line in that log ("listening on URL", or the bench proxies'
 * "listening PORT"). `dir` is removed when the process stops.
 */
export async function startLoggingProcess(dir: string, argv: string[], core: number | undefined, env: NodeJS.ProcessEnv = {}, launch: Launch = {}): Promise<{ child: Child; url: string }> {
  const logFile = path.join(dir, 'stdout.log');
  const out = openSync(logFile, 'a');
  const command = [...(core === undefined ? [] : ['taskset', '-c', String(core)]), ...(launch.wrapper ?? []), process.execPath, ...argv];
  const child = spawn(command[0], command.slice(1), { stdio: ['ignore', out, 'inherit'], env: { ...process.env, ...env } });
  closeSync(out);
  const script = argv.find((a) => !a.startsWith('-')) ?? process.execPath;
  const readyWithinMs = launch.readyWithinMs ?? 30_000;
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  let url: string | undefined;
  for (let waited = 0; url === undefined; waited += 50) {
    if (exited !== undefined) throw new Error(`${script} exited with ${exited} before it was listening`);
    if (waited > readyWithinMs) throw new Error(`${script} was not listening within ${readyWithinMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const line = /listening on (\S+)|^listening (\d+)$/m.exec(readFileSync(logFile, 'utf8'));
    if (line) url = line[1] ?? `http://127.0.0.1:${line[2]}`;
  }
  const stop = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        rmSync(dir, { recursive: true, force: true });
        resolve();
      };
      if (child.exitCode !== null || child.signalCode !== null) return done();
      // a process that does not end on SIGTERM (a drain stuck, or slowed down under valgrind) is killed
      const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => {
        clearTimeout(kill);
        done();
      });
      child.kill('SIGTERM');
    });
  return { child: { process: child, line: `listening on ${url}`, stop }, url };
}
