/**
 * `@modelcontextprotocol/server-everything` in its `streamableHttp` mode: a third-party, stateful MCP
 * server (sessions, SSE) run as a child process on 127.0.0.1 with a free port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export interface EverythingServer {
  url: string;
  stop(): Promise<void>;
}

export async function startEverythingServer(): Promise<EverythingServer> {
  const entry = require.resolve('@modelcontextprotocol/server-everything/package.json').replace(/package\.json$/, 'dist/index.js');
  const preload = path.join(__dirname, 'loopback-listen.js');
  const child: ChildProcess = spawn(process.execPath, ['--require', preload, entry, 'streamableHttp'], {
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      const match = /LISTENING (\d+)/.exec(seen);
      if (match) {
        child.stderr!.off('data', onData);
        child.stderr!.resume();
        resolve(Number(match[1]));
      }
    };
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${code}: ${seen.slice(-500)}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stop: () =>
      new Promise<void>((resolve) => {
        // a process killed by a signal keeps exitCode null: stopped twice, it would wait for an exit already past
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}
