import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

/**
 * One real PostgreSQL server per mocha run (Debian's `postgresql` package; `.ci/run` installs it), in a
 * temporary directory on a free loopback port, without durability (fsync off: nothing here must survive
 * a crash). Each caller gets a database of its own from `createDatabase()`. PostgreSQL refuses to run as
 * root, so as root the server runs as the `postgres` user the package creates.
 */
export interface PostgresServer {
  port: number;
  /** a new, empty database on the server; its postgres:// URL */
  createDatabase(): Promise<string>;
  /** freeze the server and every backend process (SIGSTOP): connections stay open, nothing answers */
  pause(): void;
  /** thaw them (SIGCONT) */
  resume(): void;
}

/** where Debian's packages put each major version's server binaries */
const DEBIAN_ROOT = '/usr/lib/postgresql';
const INSTALL_HINT = 'PostgreSQL server binaries not found: install them (apt-get install -y postgresql)';

let shared: Promise<PostgresServer> | undefined;
let databases = 0;

/** The run's server, started by the first caller. */
export function startPostgres(): Promise<PostgresServer> {
  shared ??= start();
  return shared;
}

/** the newest installed version's bin directory */
function binDir(): string {
  const versions = existsSync(DEBIAN_ROOT) ? readdirSync(DEBIAN_ROOT).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  const dir = versions.map((v) => path.join(DEBIAN_ROOT, v, 'bin')).find((d) => existsSync(path.join(d, 'initdb')));
  if (!dir) throw new Error(INSTALL_HINT);
  return dir;
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

/** as root: the `postgres` user's ids (initdb and postgres refuse to run as root) */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  if (!Number.isInteger(uid) || uid <= 0) throw new Error('running as root and there is no `postgres` user: install the postgresql package (apt-get install -y postgresql)');
  return { uid, gid: id('-g') };
}

async function start(): Promise<PostgresServer> {
  const bin = binDir();
  const user = runAs();
  const dir = mkdtempSync(path.join(tmpdir(), 'mg-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = path.join(dir, 'data');
  const init = spawnSync(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8'], { ...user, encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.error?.message}`);
  const port = await freePort();
  const child: ChildProcess = spawn(
    path.join(bin, 'postgres'),
    ['-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir, '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200'],
    { ...user, stdio: 'ignore' },
  );
  // the server dies with the run, whichever way mocha ends it (it exits the process when done)
  process.once('exit', () => {
    child.kill('SIGINT');
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      /* the server may still hold files; the temp dir goes with the machine */
    }
  });
  const spawnError = new Promise<never>((_, reject) => child.once('error', (err) => reject(new Error(`cannot start postgres: ${err.message}`))));
  await Promise.race([ready(port), spawnError]);
  const signalAll = (signal: NodeJS.Signals) => {
    for (const pid of [child.pid!, ...childPids(child.pid!)]) {
      try {
        process.kill(pid, signal);
      } catch {
        /* a backend that has just exited */
      }
    }
  };
  return {
    port,
    pause: () => signalAll('SIGSTOP'),
    resume: () => signalAll('SIGCONT'),
    async createDatabase() {
      const name = `mg_test_${process.pid}_${++databases}`;
      const admin = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${name}`);
      } finally {
        await admin.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
  };
}

async function ready(port: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error('postgres did not start within 10 s');
}

/** The processes whose parent is `parent` (PostgreSQL's backends, one per connection), from /proc. */
function childPids(parent: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // the field after the parenthesised command name: state, then the parent pid
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) pids.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return pids;
}
