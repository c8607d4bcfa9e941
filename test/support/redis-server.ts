import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';

export interface RedisServer {
  url: string;
  port: number;
  /** freeze the server (SIGSTOP): connections stay open and nothing answers, like a hung host */
  pause(): void;
  /** thaw it (SIGCONT) */
  resume(): void;
  /** kill it and start an empty one on the same port, like a crashed host that comes back without its data */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A real `redis-server` (from Debian's package; `.ci/run` installs it) on a free loopback port, with no
 * persistence, for the Redis paths of the store.
 */
export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  let child = await spawnRedis(port);
  const stop = (): Promise<void> =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGCONT'); // a frozen server would not see the SIGTERM
      child.kill('SIGTERM');
    });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    async restart() {
      await stop();
      child = await spawnRedis(port);
    },
    stop,
  };
}

async function spawnRedis(port: number): Promise<ChildProcess> {
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const spawnError = new Promise<never>((_, reject) => child.once('error', (err) => reject(new Error(`cannot start redis-server (is it installed? apt-get install -y redis-server): ${err.message}`))));
  const ready = (async () => {
    for (let i = 0; i < 100; i++) {
      const ok = await new Promise<boolean>((resolve) => {
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.end();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      });
      if (ok) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('redis-server did not start');
  })();
  await Promise.race([ready, spawnError]);
  return child;
}
