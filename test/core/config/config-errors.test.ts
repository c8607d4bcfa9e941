import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, readConfigFile, resolveConfig } from '../../../core/config/load-config';
import { ConfigError } from '../../../core/errors/gateway-error';
import { startGateway } from '../../support/start-gateway';
import { checkConfig } from '../../../core/cli/check-config';

const dir = mkdtempSync(path.join(tmpdir(), 'mg-config-errors-'));

/** Write `config` as a JSON config file, load it, and return the lines of the boot error. */
async function bootErrors(config: unknown, environment: NodeJS.ProcessEnv = {}): Promise<string[]> {
  const file = path.join(dir, `gateway-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(config));
  const err = await loadConfig(file, environment).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).to.be.instanceOf(ConfigError);
  return (err as Error).message.split('\n');
}

const base = {
  organizations: [{ id: 'acme' }],
  providers: [{ id: 'oai', type: 'openai', baseUrl: 'http://127.0.0.1:9/v1' }],
  models: [{ name: 'gpt', provider: 'oai' }],
};

describe('config errors: the management API refusals, as boot errors with paths', () => {
  it('refuses in a config file what the management API refuses, each field by its path', async () => {
    const lines = await bootErrors({
      ...base,
      organizations: [{ id: 'acme', maxBudget: -1 }],
      keys: [
        { key: 'k1', org: 'acme', models: 'gpt-*' },
        { key: 'k2', org: 'acme', maxBudget: 'lots', rpm: -5, tpm: 1.5, role: 'platform_admin' },
      ],
      mcpServers: [{ name: 'docs', alias: 'my-docs', url: 'ftp://docs.example.com/mcp', org: 'acme' }],
    });
    expect(lines).to.include.members([
      'organizations[0].maxBudget: must be >= 0',
      'keys[0].models: must be array',
      'keys[1].maxBudget: must be number',
      'keys[1].rpm: must be >= 1',
      'keys[1].tpm: must be integer',
      'keys[1].role: must be one of "member", "admin"',
      'mcpServers[0].alias: "my-docs" contains "-"; use "_" instead',
      'mcpServers[0].url: must be an http(s) URL',
    ]);
  });

  it('reports every kind of mistake in one pass: unknown fields, missing env vars, bad references, wrong types', async () => {
    const lines = await bootErrors({
      organizations: [{ id: 'acme' }],
      providers: [{ id: 'oai', type: 'openai', apiKey: { $env: 'MISSING_OAI_KEY' } }],
      models: [{ name: 'gpt', provider: 'oai2', pirce: { inputPerMTok: 1 } }],
      keys: [{ key: { $env: 'MISSING_KEY' }, org: 'globex', guardrails: ['nope'], mcp: { servers: ['ghost'] }, rpm: 0 }],
      guardrails: [{ id: 'g', engine: 'block', phase: 'during' }],
      sever: { port: 1 },
    });
    expect(lines).to.have.members([
      'models[0].pirce: unknown field (did you mean "price"?)',
      'sever: unknown field (did you mean "server"?)',
      'keys[0].rpm: must be >= 1',
      'guardrails[0].phase: must be one of "pre", "post"',
      'providers[0].apiKey: environment variable MISSING_OAI_KEY is not set',
      'keys[0].key: environment variable MISSING_KEY is not set',
      'models[0].provider: unknown provider "oai2"',
      'keys[0].org: unknown organization "globex"',
      'keys[0].guardrails[0]: unknown guardrail "nope"',
      'keys[0].mcp.servers[0]: unknown MCP server "ghost"',
    ]);
  });

  it('refuses a provider header name that is not an HTTP token, or is __proto__ (kept by JSON, a prototype elsewhere)', async () => {
    const headers = JSON.parse('{"X-Team": "blue", "Bad Name": "x", "__proto__": "y"}');
    const lines = await bootErrors({ ...base, providers: [{ ...base.providers[0], headers }] });
    const why = "is not an HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only, and not __proto__)";
    expect(lines).to.have.members([`providers[0].headers.Bad Name: ${why}`, `providers[0].headers.__proto__: ${why}`]);
  });

  it('refuses an images.tempDir that is not a folder, at boot and in check (every edit spooled before its prompt failed with a 500)', async () => {
    const missing = path.join(dir, 'no-such-spool');
    const err = await startGateway({ ...base, images: { tempDir: missing } }).then(
      (gw) => gw.close(),
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ConfigError);
    expect((err as Error).message).to.equal(`images.tempDir: cannot use ${missing}: ENOENT`);
    const checked = await checkConfig(resolveConfig({ ...base, images: { tempDir: missing } }, {}));
    expect(checked.problems).to.include(`images.tempDir: cannot use ${missing}: ENOENT`);
    // an existing folder is fine
    expect((await checkConfig(resolveConfig({ ...base, images: { tempDir: dir } }, {}))).problems).to.deep.equal([]);
  });

  it('refuses a server.allowedOrigins entry no browser Origin can equal (a trailing slash, a path, capitals), which 403ed every browser call to /mcp', async () => {
    const allowedOrigins = ['https://app.example.com/', 'https://app.example.com/mcp', 'HTTPS://App.Example.com', 'https://ok.example.com', 'http://localhost:6274', 'http://[::1]:3000', '*', 'null'];
    const lines = await bootErrors({ ...base, server: { allowedOrigins } });
    const why = 'is not an origin as a browser sends it: scheme://host[:port] in lower case, without a path (e.g. "https://app.example.com"), or "*"';
    expect(lines).to.have.members([0, 1, 2].map((i) => `server.allowedOrigins[${i}]: ${JSON.stringify(allowedOrigins[i])} ${why}`));
  });

  it('refuses a fallback of another kind than its model, which a request skipped without a word', async () => {
    const lines = await bootErrors({
      ...base,
      models: [
        { name: 'gpt', provider: 'oai', fallbacks: ['embed', 'gpt-backup'] },
        { name: 'gpt-backup', provider: 'oai', model: 'gpt-4o-mini' },
        { name: 'embed', provider: 'oai', kind: 'embedding', fallbacks: ['gpt'] },
      ],
    });
    expect(lines).to.have.members([
      'models[0].fallbacks[0]: "embed" is of kind embedding and this model of kind chat; a fallback must be of its model\'s kind',
      'models[2].fallbacks[0]: "gpt" is of kind chat and this model of kind embedding; a fallback must be of its model\'s kind',
    ]);
  });

  it('does not print the text a TypeScript config\'s own JSON.parse of an environment variable failed on (V8 quotes it: a secret)', async () => {
    const file = path.join(dir, 'json-keys.config.ts');
    writeFileSync(file, `export default { organizations: [{ id: 'acme' }], keys: JSON.parse(process.env.MG_TEST_KEYS_JSON ?? '[]') };\n`);
    for (const text of ['[{"org":"acme","key":sk-live-CANARY-1}]', '[{"org":"acme","key":"sk-live-CANARY-2"},]']) {
      process.env.MG_TEST_KEYS_JSON = text;
      try {
        const err = await readConfigFile(file).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).to.be.instanceOf(ConfigError);
        const message = (err as Error).message;
        expect(message).to.match(/^cannot load config file .*json-keys\.config\.ts: Unexpected token '[s\]]' \(at .*json-keys\.config\.ts:1:\d+\)$/);
        expect(message).to.not.include('CANARY').and.to.not.include('sk-live');
      } finally {
        delete process.env.MG_TEST_KEYS_JSON;
      }
    }
  });

  it('refuses a deployment id taken twice whichever entry comes first, the one written out or the default provider/model', async () => {
    const models = [
      { name: 'a', provider: 'oai', id: 'oai/b' },
      { name: 'b', provider: 'oai' },
      // two names for one upstream model share its default id: one deployment, allowed
      { name: 'c', provider: 'oai', model: 'gpt-4o' },
      { name: 'c-alias', provider: 'oai', model: 'gpt-4o' },
    ];
    expect(await bootErrors({ ...base, models })).to.deep.equal(['models[1].id: duplicate deployment id "oai/b" (its default, provider/model)']);
    // the other order was refused already
    expect(await bootErrors({ ...base, models: [models[1], models[0]] })).to.deep.equal(['models[1].id: duplicate deployment id "oai/b"']);
  });

  it('refuses a key whose secret is empty (no request can present it), as an unset env() is refused', async () => {
    const lines = await bootErrors({ ...base, keys: [{ key: '', org: 'acme', name: 'team' }, { key: { $env: 'UNSET_TEAM_KEY' }, org: 'acme' }, { key: 'sk-team-ok', org: 'acme' }] });
    expect(lines).to.have.members(['keys[0].key: must be a non-empty string or an env() marker ({ "$env": "NAME" })', 'keys[1].key: environment variable UNSET_TEAM_KEY is not set']);
  });

  it('refuses a timer setting past what a Node timer holds (24.8 days): it ran after 1 ms, a 30-day health-check interval checked in a loop', async () => {
    const month = 30 * 86_400;
    const lines = await bootErrors({
      ...base,
      server: { drainSeconds: month },
      store: { url: 'memory://', sweepIntervalSeconds: month, timeoutMs: month * 1000 },
      mcp: { healthCheckIntervalSeconds: month, discoveryTimeoutSeconds: month },
      timeouts: { totalMs: month * 1000 },
      models: [{ name: 'gpt', provider: 'oai', timeouts: { idleMs: month * 1000 } }],
      responses: { timeLimitSeconds: month },
      guardrails: [{ id: 'g', engine: 'block', default: true, timeoutMs: month * 1000, options: { words: ['x'] } }],
    });
    expect(lines).to.have.members([
      'server.drainSeconds: must be <= 2147483',
      'store.sweepIntervalSeconds: must be <= 2147483',
      'store.timeoutMs: must be <= 2147483647',
      'mcp.healthCheckIntervalSeconds: must be <= 2147483',
      'mcp.discoveryTimeoutSeconds: must be <= 2147483',
      'timeouts.totalMs: must be <= 2147483647',
      'models[0].timeouts.idleMs: must be <= 2147483647',
      'responses.timeLimitSeconds: must be <= 2147483',
      'guardrails[0].timeoutMs: must be <= 2147483647',
    ]);
    // the longest each may be still loads
    const longest = { ...base, server: { drainSeconds: 2_147_483 }, mcp: { healthCheckIntervalSeconds: 2_147_483 }, timeouts: { totalMs: 2_147_483_647 } };
    expect(resolveConfig(longest, {}).mcp.healthCheckIntervalSeconds).to.equal(2_147_483);
  });

  it('suggests the field a misspelt name was meant to be, at any depth', () => {
    const lines = (() => {
      try {
        resolveConfig({ ...base, models: [{ name: 'gpt', provider: 'oai', pirce: {} }], mcp: { helthCheckIntervalSeconds: 5 }, responses: { maxToolRunds: 3 } }, {});
      } catch (err) {
        return (err as Error).message.split('\n');
      }
      return [];
    })();
    expect(lines).to.have.members([
      'models[0].pirce: unknown field (did you mean "price"?)',
      'mcp.helthCheckIntervalSeconds: unknown field (did you mean "healthCheckIntervalSeconds"?)',
      'responses.maxToolRunds: unknown field (did you mean "maxToolRounds"?)',
    ]);
  });

  it('checks plugin options with the same validator: a misspelt option is a boot error with its path and a suggestion', async () => {
    const err = await startGateway({
      ...base,
      guardrails: [{ id: 'no-secrets', engine: 'block', options: { paterns: ['secret'] } }],
    }).then(
      (gw) => gw.close(),
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message).to.match(/^guardrails\[0\]\.options: /);
    expect(message).to.include('guardrails[0].options.paterns: unknown field (did you mean "patterns"?)');
    expect(message).to.include('needs one of "patterns", "words"');
  });

  it('names a plugin option written as a function in a TypeScript config, at boot and in check (they failed with "could not be cloned")', async () => {
    const file = path.join(dir, 'gateway.config.ts');
    writeFileSync(file, `export default { guardrails: [{ id: 'g', engine: 'block', default: true, options: { patterns: () => ['secret'] } }] };\n`);
    const err = await startGateway((await readConfigFile(file)) as Parameters<typeof startGateway>[0]).then(
      (gw) => gw.close(),
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ConfigError);
    expect((err as Error).message).to.include('guardrails[0].options.patterns: must be array');
    const checked = await checkConfig(await loadConfig(file, {}));
    expect(checked.problems).to.include('guardrails[0].options.patterns: must be array');
  });
});
