import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from '../support/fixtures';

const MAIN = path.join(REPO_ROOT, 'dist', 'core', 'main.js');

function writeConfig(config: object): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'mg-cmd-')), 'gateway.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/** Run the command to its end. */
function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

const SECRETS = { CMD_KEY: 'sk-cmd-CANARY-key', CMD_PROVIDER: 'sk-cmd-CANARY-provider', CMD_ADMIN: 'sk-cmd-CANARY-admin' };

const config = (extra: object = {}) => ({
  store: { url: 'memory://' },
  adminKey: { $env: 'CMD_ADMIN' },
  organizations: [{ id: 'o' }],
  keys: [{ key: { $env: 'CMD_KEY' }, org: 'o', name: 'team key', guardrails: ['listed'] }],
  providers: [{ id: 'up', type: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKey: { $env: 'CMD_PROVIDER' }, headers: { 'x-extra': { $env: 'CMD_PROVIDER' } } }],
  models: [{ name: 'm', provider: 'up', model: 'gpt-4o-mini' }],
  mcpServers: [{ name: 'docs', url: 'http://127.0.0.1:9/mcp', visibility: 'public', auth: { type: 'bearer', token: { $env: 'CMD_PROVIDER' } } }],
  guardrails: [
    { id: 'listed', engine: 'block', options: { patterns: ['secret'] } },
    { id: 'everyone', engine: 'block', default: true, options: { patterns: ['x'] } },
    { id: 'orphan', engine: 'block', options: { patterns: ['y'] } },
  ],
  ...extra,
});

describe('model-gateway commands: --help, check, port in use, guardrail warnings', () => {
  it('--help lists every flag with its default and every command', async () => {
    const { code, stdout } = await run(['--help']);
    expect(code).to.equal(0);
    // every flag main.ts declares (read from its source, so a new flag without help fails here)
    const source = readFileSync(path.join(REPO_ROOT, 'core', 'main.ts'), 'utf8');
    const flags = [...source.matchAll(/'?\b([\w-]+)'?: \{ type: '(?:string|boolean)'/g)].map((m) => m[1]);
    expect(flags).to.include.members(['config', 'port', 'host', 'log-format', 'help', 'version']);
    for (const flag of flags) expect(stdout).to.include(`--${flag}`);
    expect(stdout).to.match(/--config FILE .*default \.\/gateway\.config\.ts/);
    expect(stdout).to.match(/--port N .*default.*4000/);
    expect(stdout).to.match(/--host H .*default.*127\.0\.0\.1/);
    for (const command of ['check', 'rotate-secret-key']) expect(stdout).to.include(`model-gateway ${command}`);
  });

  it('--version (and -v) prints the installed package version and exits 0 without starting', async () => {
    const { version } = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-v']) {
      const { code, stdout, stderr } = await run([flag]);
      expect(code, flag).to.equal(0);
      expect(stderr, flag).to.equal('');
      expect(stdout, flag).to.equal(`model-gateway ${version}\n`);
    }
  });

  it('--help after each command prints the help and exits 0, as it says', async () => {
    for (const command of ['check', 'rotate-secret-key']) {
      const { code, stdout, stderr } = await run([command, '--help']);
      expect(stderr, command).to.equal('');
      expect(code, command).to.equal(0);
      expect(stdout, command).to.include('model-gateway rotate-secret-key [--config FILE]');
    }
  });

  it('a misspelt command is answered with the usage, not as a failure to start', async () => {
    const { code, stdout, stderr } = await run(['chek', '--config', writeConfig(config())], SECRETS);
    expect(code).to.equal(1);
    expect(stdout).to.equal('');
    expect(stderr).to.not.include('failed to start');
    expect(stderr).to.include("model-gateway: Unexpected argument 'chek'");
    expect(stderr).to.include('model-gateway check [--config FILE]');
  });

  it('check validates a config and prints what would run by name, never a secret', async () => {
    const { code, stdout, stderr } = await run(['check', '--config', writeConfig(config())], SECRETS);
    expect(stderr).to.equal('');
    expect(code).to.equal(0);
    expect(stdout).to.match(/: valid\n/);
    expect(stdout).to.include('up (openai, http://127.0.0.1:9/v1)');
    expect(stdout).to.include('m -> up/gpt-4o-mini (chat)');
    expect(stdout).to.include('team key (org o, member, guardrails listed)');
    expect(stdout).to.include('docs (mcp-streamable-http, public)');
    expect(stdout).to.include('everyone (block, default, enforce)');
    expect(stdout).to.include('warning: guardrail "orphan" applies to nobody');
    expect(stdout).to.not.include('warning: guardrail "listed"');
    for (const secret of Object.values(SECRETS)) expect(stdout).to.not.include(secret);
  });

  it('check prints a provider URL without the password or query values it may carry', async () => {
    const password = 'CANARY-url-password-77';
    const token = 'CANARY-url-token-78';
    const withCredentials = config({ providers: [{ id: 'up', type: 'openai', baseUrl: `http://svc:${password}@127.0.0.1:9/v1?api-key=${token}`, apiKey: { $env: 'CMD_PROVIDER' } }] });
    const { code, stdout } = await run(['check', '--config', writeConfig(withCredentials)], SECRETS);
    expect(code).to.equal(0);
    expect(stdout).to.include('up (openai, http://svc:***@127.0.0.1:9/v1?api-key=***)');
    expect(stdout).to.not.include(password);
    expect(stdout).to.not.include(token);
  });

  it('check fails with every problem named by path: bad plugin options, unknown engine, missing secret', async () => {
    const bad = config({
      guardrails: [
        { id: 'listed', engine: 'block', options: { nope: true } },
        { id: 'g2', engine: 'no-such-engine', default: true },
      ],
      providers: [...config().providers, { id: 'other', type: 'oai2' }],
    });
    const { code, stdout, stderr } = await run(['check', '--config', writeConfig(bad)], SECRETS);
    expect(code).to.equal(1);
    expect(stdout).to.equal('');
    expect(stderr).to.include('model-gateway: config error:');
    expect(stderr).to.match(/guardrails\[0\]\.options/);
    // the path of the bad field, as the boot names it (guardrails[1].engine, providers[1].type)
    expect(stderr).to.include('guardrails[1].engine: unknown guardrail plugin "no-such-engine"');
    expect(stderr).to.include('providers[1].type: unknown provider plugin "oai2"');
    const missing = await run(['check', '--config', writeConfig(config())], { CMD_KEY: SECRETS.CMD_KEY });
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.include('environment variable CMD_PROVIDER is not set');
    expect(missing.stderr).to.not.include(SECRETS.CMD_KEY);
  });

  it('check names plugin problems in the same run as a config that does not load (not only once that is fixed)', async () => {
    const bad = config({
      models: [{ name: 'm', provider: 'oai2' }],
      guardrails: [
        { id: 'listed', engine: 'block', options: { nope: true } },
        { id: 'g2', engine: 'no-such-engine', default: true },
        { id: 'g3', engine: 'block', default: true, options: { patterns: { $env: 'CMD_UNSET_PATTERN' } } },
      ],
    });
    const { code, stdout, stderr } = await run(['check', '--config', writeConfig(bad)], SECRETS);
    expect(code).to.equal(1);
    expect(stdout).to.equal('');
    const lines = stderr.split('\n').map((l) => l.trim());
    expect(lines).to.include('models[0].provider: unknown provider "oai2"');
    expect(lines.some((l) => l.startsWith('guardrails[0].options'))).to.equal(true);
    expect(lines.filter((l) => l.startsWith('guardrails[1].engine: unknown guardrail plugin "no-such-engine"'))).to.have.length(1);
    // the unset variable is reported once, as such, not again as options the plugin refuses
    expect(lines.filter((l) => l.startsWith('guardrails[2]'))).to.deep.equal(['guardrails[2].options.patterns: environment variable CMD_UNSET_PATTERN is not set']);
  });

  it('check refuses what the boot refuses beyond the option schemas: a pattern RE2 cannot run, an unknown preset, a generated-shape key id, a missing base URL', async () => {
    const generatedShape = await run(['check', '--config', writeConfig(config({ keys: [{ key: { $env: 'CMD_KEY' }, org: 'o', id: 'key_abcdefghijklmnopqrstuvwx', guardrails: ['listed'] }] }))], SECRETS);
    expect(generatedShape.code).to.equal(1);
    expect(generatedShape.stderr).to.include('keys[0].id: "key_abcdefghijklmnopqrstuvwx" has the shape of a generated id (key_ and 24 characters); choose another');

    const bad = config({
      providers: [
        { id: 'up', type: 'openai', preset: 'no-such-vendor', apiKey: { $env: 'CMD_PROVIDER' } },
        { id: 'az', type: 'azure-openai', baseUrl: 'https://r.openai.azure.com', apiKey: { $env: 'CMD_PROVIDER' }, entraToken: { $env: 'CMD_PROVIDER' } },
      ],
      guardrails: [
        { id: 'listed', engine: 'block', options: { patterns: ['secret'] } },
        { id: 'everyone', engine: 'block', default: true, options: { patterns: ['(?=x)y'] } },
      ],
    });
    const checked = await run(['check', '--config', writeConfig(bad)], SECRETS);
    expect(checked.stdout).to.equal('');
    expect(checked.code).to.equal(1);
    const lines = checked.stderr.split('\n').map((l) => l.trim());
    expect(lines.some((l) => l.startsWith('providers[0].options: plugin "openai" failed to start: unknown preset "no-such-vendor"'))).to.equal(true);
    expect(lines).to.include('providers[1].options: plugin "azure-openai" failed to start: give exactly one of apiKey, entraToken or entraTokenCommand');
    expect(lines.some((l) => l.startsWith('guardrails[1].options.patterns[0]: the linear-time pattern engine (RE2)') && l.includes('RE2'))).to.equal(true);
    for (const secret of Object.values(SECRETS)) expect(checked.stderr).to.not.include(secret);

    // a plugin provider with no default base URL, in an entry without one, starts nowhere: check says so too
    const dir = mkdtempSync(path.join(tmpdir(), 'mg-cmd-'));
    writeFileSync(
      path.join(dir, 'nourl.js'),
      "module.exports = { kind: 'provider', id: 'nourl', apiVersion: 1, optionsSchema: {}, create: () => ({ operations: { chat: { toUpstream: () => ({ path: '/', headers: {}, body: '' }), fromUpstream: (b) => b } }, toError: () => new Error('x') }) };",
    );
    const file = path.join(dir, 'gateway.json');
    writeFileSync(file, JSON.stringify(config({ plugins: ['./nourl.js'], providers: [{ id: 'up', type: 'nourl' }] })));
    const noUrl = await run(['check', '--config', file], SECRETS);
    expect(noUrl.code).to.equal(1);
    expect(noUrl.stderr).to.include('providers[0].baseUrl: provider "up" needs a baseUrl');
    const booted = await run(['--config', file, '--port', '0'], SECRETS);
    expect(booted.code).to.equal(1);
    expect(booted.stderr).to.include('providers[0].baseUrl: provider "up" needs a baseUrl');
  });

  it('check refuses the MCP servers the boot refuses: the built-in server\'s name, a name or alias taken twice, a header the gateway sets', async () => {
    const servers = [
      { name: 'gateway_proxy', url: 'http://127.0.0.1:9/mcp', visibility: 'public' },
      { name: 'a', alias: 'docs', url: 'http://127.0.0.1:9/mcp', visibility: 'public' },
      { name: 'docs', url: 'http://127.0.0.1:9/mcp', visibility: 'public' },
      { name: 'b', url: 'http://127.0.0.1:9/mcp', visibility: 'public', staticHeaders: { 'content-type': { $env: 'CMD_PROVIDER' } } },
      { name: 'c', url: 'http://127.0.0.1:9/mcp', visibility: 'public', forwardHeaders: ['host'] },
    ];
    const checked = await run(['check', '--config', writeConfig(config({ keys: [], guardrails: [], mcpServers: servers }))], SECRETS);
    expect(checked.stdout).to.equal('');
    expect(checked.code).to.equal(1);
    expect(checked.stderr.split('\n').map((l) => l.trim()).filter((l) => l.startsWith('mcpServers'))).to.deep.equal([
      'mcpServers[0]: "gateway_proxy" is the gateway\'s own MCP server; give "gateway_proxy" another name and alias',
      'mcpServers[2]: the name or alias of "docs" is already used by MCP server "a" (in this config file) in the platform; rename one of them',
      'mcpServers[3].staticHeaders: "content-type" is set by the gateway and cannot be configured',
      'mcpServers[4].forwardHeaders: "host" is set by the gateway and cannot be configured',
    ]);
    expect(checked.stderr).to.not.include(SECRETS.CMD_PROVIDER);
    // the boot says the same of each, first of them first
    const booted = await run(['--config', writeConfig(config({ keys: [], guardrails: [], mcpServers: servers.slice(1) })), '--port', '0'], SECRETS);
    expect(booted.code).to.equal(1);
    expect(booted.stderr).to.include('mcpServers[1]: the name or alias of "docs" is already used by MCP server "a" (in this config file) in the platform; rename one of them');
  });

  it('check and the boot refuse an MCP server URL that does not parse, naming its path and not quoting it', async () => {
    const servers = [
      { name: 'docs', url: 'http://svc:CANARY-mcp-url-pw-80@127.0.0.1:9/mcp', visibility: 'public' },
      { name: 'wiki', url: 'http://svc:CANARY-mcp-url-pw-80@127.0.0.1:99999/mcp', visibility: 'public' },
    ];
    const file = writeConfig(config({ keys: [], guardrails: [], mcpServers: servers }));
    const checked = await run(['check', '--config', file], SECRETS);
    expect(checked.code).to.equal(1);
    expect(checked.stdout).to.equal('');
    expect(checked.stderr.split('\n').map((l) => l.trim()).filter((l) => l.startsWith('mcpServers'))).to.deep.equal(['mcpServers[1].url: is not a valid URL']);
    const booted = await run(['--config', file, '--port', '0'], SECRETS);
    expect(booted.code).to.equal(1);
    expect(booted.stderr).to.include('mcpServers[1].url: is not a valid URL');
    for (const out of [checked.stderr, booted.stderr]) expect(out).to.not.include('CANARY-mcp-url-pw-80');
  });

  it('check and the boot refuse a provider baseUrl that is not an http(s) URL, naming its path and not quoting it', async () => {
    for (const baseUrl of ['http://svc:CANARY-base-url-pw-81@127.0.0.1:99999/v1', 'localhost:8000/v1']) {
      const file = writeConfig(config({ providers: [{ id: 'up', type: 'openai', baseUrl, apiKey: { $env: 'CMD_PROVIDER' } }] }));
      const checked = await run(['check', '--config', file], SECRETS);
      expect(checked.code, baseUrl).to.equal(1);
      expect(checked.stdout, baseUrl).to.equal('');
      expect(checked.stderr, baseUrl).to.include('providers[0].baseUrl: must be an http(s) URL');
      const booted = await run(['--config', file, '--port', '0'], SECRETS);
      expect(booted.code, baseUrl).to.equal(1);
      expect(booted.stderr, baseUrl).to.include('providers[0].baseUrl: must be an http(s) URL');
      for (const out of [checked.stderr, booted.stderr]) expect(out).to.not.include('CANARY-base-url-pw-81');
    }
  });

  it('check refuses a store URL the gateway cannot open (an unknown kind, SQLite without a file), without its password', async () => {
    for (const [url, says] of [
      ['mysql://gw:CANARY-store-pw-79@db.internal/gw', 'store.url: unsupported store "mysql://***@db.internal/gw" (use memory://'],
      ['memroy://', 'store.url: unsupported store "memroy://"'],
      ['sqlite://', 'store.url: sqlite:// needs a file path, e.g. sqlite://./data/gateway.db'],
    ]) {
      const checked = await run(['check', '--config', writeConfig(config({ store: { url } }))], SECRETS);
      expect(checked.code, url).to.equal(1);
      expect(checked.stdout, url).to.equal('');
      expect(checked.stderr, url).to.include(says);
      expect(checked.stderr, url).to.not.include('CANARY-store-pw-79');
    }
  });

  it('check refuses PostgreSQL connections too few for the processes, as the boot does (it said valid, then the start failed)', async () => {
    const store = { url: 'postgres://gw:CANARY-store-pw-80@127.0.0.1:9/gw', maxConnections: 5 };
    const file = writeConfig(config({ store, server: { workers: 4 } }));
    const says = 'store.maxConnections: 5 PostgreSQL connections cannot serve 4 gateway processes';
    const checked = await run(['check', '--config', file], SECRETS);
    expect(checked.code).to.equal(1);
    expect(checked.stdout).to.equal('');
    expect(checked.stderr).to.include(says);
    expect(checked.stderr).to.not.include('CANARY-store-pw-80');
    const booted = await run(['--config', file, '--port', '0'], SECRETS);
    expect(booted.code).to.equal(1);
    expect(booted.stderr).to.include(says);
    // one process needs 3 of them: 2 are refused alike
    const one = await run(['check', '--config', writeConfig(config({ store: { ...store, maxConnections: 2 } }))], SECRETS);
    expect(one.code).to.equal(1);
    expect(one.stderr).to.include('store.maxConnections: 2 PostgreSQL connections cannot serve 1 gateway processes');
  });

  it('--port with an empty or non-decimal value is refused, not taken as port 0 (any free port) or as hex', async () => {
    for (const value of ['', ' ', '0x1f90', '1e3']) {
      const child = spawn(process.execPath, [MAIN, '--config', writeConfig(config()), '--port', value], { env: { ...process.env, ...SECRETS }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
      const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
      // a gateway that starts anyway is stopped at its startup line
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line.startsWith('model-gateway listening on')) child.kill('SIGTERM');
      });
      const code = await exit;
      expect(stderr, JSON.stringify(value)).to.include(`--port: must be an integer from 0 to 65535, got "${value}"`);
      expect(code, JSON.stringify(value)).to.equal(1);
    }
  });

  it('--host with an empty value is refused, not taken as the config\'s host (an unset $HOST listened on loopback only)', async () => {
    for (const value of ['', ' ']) {
      const child = spawn(process.execPath, [MAIN, '--config', writeConfig(config({ server: { host: '127.0.0.1', port: 0 } })), '--host', value], { env: { ...process.env, ...SECRETS }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
      const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
      // a gateway that starts anyway is stopped at its startup line
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line.startsWith('model-gateway listening on')) child.kill('SIGTERM');
      });
      const code = await exit;
      expect(stderr, JSON.stringify(value)).to.include(`--host: must be an address or host name, got ${JSON.stringify(value)}`);
      expect(code, JSON.stringify(value)).to.equal(1);
    }
  });

  it('a host that is no address of this machine is a config error naming server.host, or --host when given', async () => {
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): never an address of the host
    const fromConfig = await run(['--config', writeConfig(config({ server: { host: '192.0.2.1' } })), '--port', '0'], SECRETS);
    expect(fromConfig.code).to.equal(1);
    expect(fromConfig.stderr).to.include('model-gateway: config error:\n  server.host: cannot listen on "192.0.2.1": not an address of this machine (EADDRNOTAVAIL)');
    const fromFlag = await run(['--config', writeConfig(config()), '--port', '0', '--host', '192.0.2.1'], SECRETS);
    expect(fromFlag.code).to.equal(1);
    expect(fromFlag.stderr).to.include('  --host: cannot listen on "192.0.2.1": not an address of this machine (EADDRNOTAVAIL)');
  });

  it('a port in use says so and how to pick another', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as { port: number }).port;
    try {
      const { code, stderr } = await run(['--config', writeConfig(config()), '--port', String(port)], SECRETS);
      expect(code).to.equal(1);
      // a line of its own (log lines, on stdout, may precede it on a terminal)
      expect(stderr.split('\n')).to.include(`model-gateway: port ${port} on 127.0.0.1 is already in use (another gateway?); pick another with --port N, or --port 0 for any free port`);
      expect(stderr).to.not.include('failed to start');
    } finally {
      holder.close();
    }
  });

  it('warns at boot about a guardrail that applies to nobody, and only that one', async () => {
    const child = spawn(process.execPath, [MAIN, '--config', writeConfig(config()), '--port', '0'], { env: { ...process.env, ...SECRETS, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const stdout: string[] = [];
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const exit = new Promise((resolve) => child.once('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        stdout.push(line);
        if (line.startsWith('web console:')) resolve();
      });
      exit.then(() => reject(new Error(`exited: ${stderr}`)));
    });
    child.kill('SIGTERM');
    expect(await exit).to.equal(0);
    // the log (JSON lines) is on stdout, before the startup lines
    const output = `${stdout.join('\n')}\n${stderr}`;
    const warnings = output.split('\n').filter((l) => l.includes('applies to nobody'));
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.include('orphan');
    expect(output).to.not.match(/"listed[^\n]*applies to nobody/);
    expect(output).to.not.match(/everyone[^\n]*applies to nobody/);
    for (const secret of Object.values(SECRETS)) expect(output).to.not.include(secret);
  });
});
