import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, readConfigFile, resolveConfig } from '../../../core/config/load-config';
import { ConfigError } from '../../../core/errors/gateway-error';
import { REPO_ROOT } from '../../support/fixtures';

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

const base = {
  organizations: [{ id: 'acme' }],
  providers: [{ id: 'oai', type: 'openai', baseUrl: 'http://127.0.0.1:9/v1' }],
  models: [{ name: 'a', provider: 'oai' }, { name: 'b', provider: 'oai' }],
};

describe('config loading and validation', () => {
  it('names the path of a model that points at an unknown provider', () => {
    const msg = errorOf(() => resolveConfig({ ...base, models: [...base.models, { name: 'c', provider: 'oai2' }] }, {}));
    expect(msg).to.equal('models[2].provider: unknown provider "oai2"');
  });

  it('rejects unknown fields at every level, with their paths', () => {
    const msg = errorOf(() => resolveConfig({ ...base, colour: 'red', models: [{ name: 'a', provider: 'oai', prize: 1 }] }, {}));
    expect(msg.split('\n')).to.have.members(['colour: unknown field', 'models[0].prize: unknown field (did you mean "price"?)']);
  });

  it('reports every error at once', () => {
    const msg = errorOf(() =>
      resolveConfig({ organizations: [{ id: 'acme' }], keys: [{ key: 'k', org: 'nope' }], providers: [], models: [{ name: 'x', provider: 'p' }] }, {}),
    );
    expect(msg.split('\n')).to.have.members(['models[0].provider: unknown provider "p"', 'keys[0].org: unknown organization "nope"']);
  });

  it('refuses two keys with one id or one secret, and a key with the admin key (the later one took the earlier one\'s place)', () => {
    const keys = [
      { key: 'sk-first-0001', org: 'acme', id: 'bot', models: ['a'] },
      { key: 'sk-second-0002', org: 'acme', id: 'bot' },
      { key: { $env: 'TEST_CI_KEY' }, org: 'acme', id: 'ci' },
      { key: 'sk-admin-0003', org: 'acme', id: 'ops' },
      // another organisation may have its own `bot`
      { key: 'sk-fourth-0004', org: 'globex', id: 'bot' },
    ];
    const msg = errorOf(() => resolveConfig({ ...base, organizations: [{ id: 'acme' }, { id: 'globex' }], adminKey: 'sk-admin-0003', keys }, { TEST_CI_KEY: 'sk-first-0001' }));
    expect(msg.split('\n')).to.have.members(['keys[1].id: duplicate key id "bot" in organization acme', 'keys[2].key: the same secret as keys[0].key; every key needs its own', 'keys[3].key: the same secret as adminKey; every key needs its own']);
    for (const secret of ['sk-first-0001', 'sk-second-0002', 'sk-admin-0003']) expect(msg).to.not.include(secret);
    expect(resolveConfig({ ...base, organizations: [{ id: 'acme' }, { id: 'globex' }], keys: [keys[0], keys[4]] }, {}).keys.map((k) => k.id)).to.deep.equal(['bot', 'bot']);
  });

  it('refuses entries of one model name with different kinds (a chat request was drawn to the embedding entry)', () => {
    const models = [{ name: 'a', provider: 'oai' }, { name: 'a', provider: 'oai', model: 'text-embedding-3-small', kind: 'embedding' }, { name: 'b', provider: 'oai', kind: 'chat' }, { name: 'b', provider: 'oai', model: 'b2' }];
    const msg = errorOf(() => resolveConfig({ ...base, models }, {}));
    expect(msg).to.equal('models[1].kind: "embedding", but models[0] of the same name "a" is "chat": the entries of one name are one load-balanced group, all of one kind');
  });

  it('names a missing required field and a wrong enum value', () => {
    const msg = errorOf(() => resolveConfig({ keys: [{ org: 'acme', role: 'owner' }] }, {}));
    expect(msg).to.include('keys[0].key: is required');
    expect(msg).to.include('keys[0].role: must be one of "member", "admin"');
  });

  it('resolves env() markers and names the field of a missing variable without any value', () => {
    const cfg = resolveConfig({ ...base, providers: [{ id: 'oai', type: 'openai', apiKey: { $env: 'TEST_OAI_KEY' } }] }, { TEST_OAI_KEY: 'sk-secret-123' });
    expect(cfg.providers[0].apiKey).to.equal('sk-secret-123');
    const msg = errorOf(() => resolveConfig({ ...base, providers: [{ id: 'oai', type: 'openai', apiKey: { $env: 'NOPE_KEY' } }] }, {}));
    expect(msg).to.equal('providers[0].apiKey: environment variable NOPE_KEY is not set');
  });

  it("keeps the values a plugin's options read with env() for the scrubber (the secret fields are known by name)", () => {
    const cfg = resolveConfig(
      {
        ...base,
        providers: [{ id: 'oai', type: 'openai', apiKey: { $env: 'TEST_KEY' }, options: { region: { $env: 'TEST_REGION' } } }],
        guardrails: [{ id: 'g', engine: 'regex', options: { patterns: [], vendor: { key: { $env: 'TEST_VENDOR_KEY' } } } }],
      },
      { TEST_KEY: 'sk-provider-0123456', TEST_REGION: 'eu-north-1', TEST_VENDOR_KEY: 'vk-0123456789' },
    );
    expect([...(cfg.envValues ?? [])].sort()).to.deep.equal(['eu-north-1', 'vk-0123456789']);
  });

  it('reads only variables the environment has: constructor, toString and __proto__ are not set', () => {
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      for (const environment of [{}, process.env]) {
        const msg = errorOf(() => resolveConfig({ ...base, providers: [{ id: 'oai', type: 'openai', apiKey: { $env: name } }] }, environment));
        expect(msg).to.equal(`providers[0].apiKey: environment variable ${name} is not set`);
      }
    }
  });

  it('applies the server-name rules: spaces become underscores, dashes are refused, names unique per organization', () => {
    const cfg = resolveConfig({ organizations: [{ id: 'acme' }], mcpServers: [{ name: 'Docs search', url: 'http://127.0.0.1:1/mcp', org: 'acme' }] }, {});
    expect(cfg.mcpServers[0].name).to.equal('Docs_search');
    expect(cfg.mcpServers[0].alias).to.equal('Docs_search');
    expect(errorOf(() => resolveConfig({ mcpServers: [{ name: 'docs-search', url: 'http://x/mcp' }] }, {}))).to.include('mcpServers[0].name: "docs-search" contains "-"');
    const dup = errorOf(() =>
      resolveConfig({ organizations: [{ id: 'acme' }], mcpServers: [{ name: 'docs', url: 'http://x/mcp', org: 'acme' }, { name: 'docs', url: 'http://y/mcp', org: 'acme' }] }, {}),
    );
    expect(dup).to.include('mcpServers[1].name: duplicate server name "docs"');
  });

  it('defaults deployment ids, upstream model names, kinds and weights', () => {
    const cfg = resolveConfig(base, {});
    expect(cfg.models[0]).to.deep.include({ name: 'a', model: 'a', id: 'oai/a', kind: 'chat', weight: 1 });
    expect(cfg.store.url).to.equal('sqlite://./data/gateway.db');
    expect(cfg.server).to.deep.include({ host: '127.0.0.1', port: 4000 });
  });

  it('loads a TypeScript config with defineConfig and env(), and a JSON config of the same shape', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mg-config-'));
    const defineConfigPath = path.join(REPO_ROOT, 'core', 'config', 'define-config').replace(/\\/g, '/');
    writeFileSync(
      path.join(dir, 'gw.config.ts'),
      `import { defineConfig, env } from '${defineConfigPath}';\nconst port: number = 4100;\nexport default defineConfig({ server: { port }, adminKey: env('TS_ADMIN'), organizations: [{ id: 'o' }] });\n`,
    );
    const ts = await loadConfig(path.join(dir, 'gw.config.ts'), { TS_ADMIN: 'adm' });
    expect(ts.server.port).to.equal(4100);
    expect(ts.adminKey).to.equal('adm');
    writeFileSync(path.join(dir, 'gw.json'), JSON.stringify({ server: { port: 4200 }, adminKey: { $env: 'TS_ADMIN' } }));
    const json = await loadConfig(path.join(dir, 'gw.json'), { TS_ADMIN: 'adm2' });
    expect(json.server.port).to.equal(4200);
    expect(json.adminKey).to.equal('adm2');
    writeFileSync(path.join(dir, 'bad.json'), '{ "server": ');
    const err = await loadConfig(path.join(dir, 'bad.json'), {}).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ConfigError);
  });
});

describe('config loading: a TypeScript config kept outside any project', () => {
  it("imports defineConfig and env from 'model-gateway' (the running gateway), as the README writes it, with no node_modules beside it", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mg-config-outside-'));
    writeFileSync(
      path.join(dir, 'gateway.config.ts'),
      "import { defineConfig, env } from 'model-gateway';\nimport { InvalidRequestError } from 'model-gateway/sdk';\nexport default defineConfig({ adminKey: env('OUTSIDE_ADMIN'), organizations: [{ id: typeof InvalidRequestError }] });\n",
    );
    const cfg = await loadConfig(path.join(dir, 'gateway.config.ts'), { OUTSIDE_ADMIN: 'adm-outside' });
    expect(cfg.adminKey).to.equal('adm-outside');
    expect(cfg.organizations).to.deep.equal([{ id: 'function' }]);
  });
});

describe('config loading: a TypeScript config that throws', () => {
  it('says where in the file the error was thrown, not only its message', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mg-config-'));
    const defineConfigPath = path.join(REPO_ROOT, 'core', 'config', 'define-config').replace(/\\/g, '/');
    const file = path.join(dir, 'gateway.config.ts');
    writeFileSync(
      file,
      `import { defineConfig } from '${defineConfigPath}';\nconst regions: Record<string, { port: number }> = {};\n\nexport default defineConfig({ server: { port: regions.eu.port } });\n`,
    );
    const err = await readConfigFile(file).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message).to.include(`cannot load config file ${file}:`).and.include("reading 'port'");
    expect(message).to.match(new RegExp(`at ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:4:\\d+`));
  });
});

describe('config loading: a TypeScript config without a default export', () => {
  it('says the default export is missing (it failed with "#<Object> could not be cloned")', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mg-config-'));
    const defineConfigPath = path.join(REPO_ROOT, 'core', 'config', 'define-config').replace(/\\/g, '/');
    const body = `defineConfig({ server: { port: 4100 }, organizations: [{ id: 'o' }] });\n`;
    for (const [name, text] of [
      ['named.config.ts', `import { defineConfig } from '${defineConfigPath}';\nexport const config = ${body}`],
      ['forgotten.config.ts', `import { defineConfig } from '${defineConfigPath}';\nconst config = ${body}`],
    ]) {
      const file = path.join(dir, name);
      writeFileSync(file, text);
      const err = await loadConfig(file, {}).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, name).to.be.instanceOf(ConfigError);
      expect((err as Error).message, name).to.equal(`config file ${file} has no default export: write export default defineConfig({ ... })`);
    }
  });
});

describe('config loading: a TypeScript config with values of the wrong type', () => {
  it('names each field whose value is a function or an object where data belongs (it failed with "could not be cloned")', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mg-config-'));
    const defineConfigPath = path.join(REPO_ROOT, 'core', 'config', 'define-config').replace(/\\/g, '/');
    const file = path.join(dir, 'gateway.config.ts');
    writeFileSync(
      file,
      `import { defineConfig } from '${defineConfigPath}';\n` +
        `export default defineConfig({ providers: [{ id: 'p', type: 'openai', baseUrl: new URL('http://127.0.0.1:9/v1') as any }], models: [{ name: 'm', provider: 'p', weight: (() => 2) as any }] });\n`,
    );
    const err = await loadConfig(file, {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ConfigError);
    expect((err as Error).message.split('\n')).to.have.members(['providers[0].baseUrl: must be string', 'models[0].weight: must be number']);
  });
});

describe('config loading: a config file that does not exist', () => {
  it('says so in one line, for a TypeScript file as for a JSON one (not a module-resolution error with a require stack)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mg-config-'));
    for (const name of ['gateway.config.ts', 'gateway.json']) {
      const file = path.join(dir, name);
      const err = await readConfigFile(file).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, name).to.be.instanceOf(ConfigError);
      expect((err as Error).message, name).to.equal(`cannot read config file ${file}: ENOENT`);
    }
  });
});

describe('config loading: a malformed JSON config file', () => {
  it('is reported without quoting the text around the error (it may be a literal secret)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mg-review-config-'));
    const file = path.join(dir, 'gateway.json');
    // a common slip: the secret written with single quotes
    writeFileSync(file, `{"organizations": [{"id": "o"}], "adminKey": 'sk-admin-REVIEW-secret-123'}\n`);
    const err = await readConfigFile(file).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message).to.include(`config file ${file} is not valid JSON`);
    expect(message).to.not.include('sk-admin');
    expect(message).to.not.include('REVIEW');
  });

  it('reads a JSON config saved with a UTF-8 byte-order mark (Notepad, Windows PowerShell), which was refused as not valid JSON', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'mg-review-config-')), 'gateway.json');
    writeFileSync(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"server": {"port": 4321}, "organizations": [{"id": "o"}]}\n')]));
    const cfg = await loadConfig(file, {});
    expect(cfg.server.port).to.equal(4321);
    expect(cfg.organizations).to.deep.equal([{ id: 'o' }]);
  });
});
