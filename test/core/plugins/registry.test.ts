import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PluginError } from '../../../core/errors/gateway-error';
import { PluginRegistry } from '../../../core/plugins/registry';
import type { PluginDeps } from '../../../core/plugins/contracts';

const deps = {} as PluginDeps;
const guardrail = (id: string, extra: object = {}) => ({
  kind: 'guardrail',
  id,
  apiVersion: 1,
  optionsSchema: { type: 'object', additionalProperties: false, properties: { words: { type: 'array', items: { type: 'string' } } } },
  create: (options: unknown) => ({ options, check: () => ({ action: 'allow' }) }),
  ...extra,
});

describe('plugin registry', () => {
  it('rejects duplicate ids, unknown kinds and unsupported apiVersions at registration', () => {
    const registry = new PluginRegistry();
    registry.register(guardrail('words'), 'a');
    expect(() => registry.register(guardrail('words'), 'plugins[1]')).to.throw(PluginError, 'plugins[1]: duplicate guardrail plugin id "words" (already registered by a)');
    expect(() => registry.register(guardrail('x', { kind: 'widget' }), 'p')).to.throw(PluginError, 'unknown plugin kind "widget"');
    expect(() => registry.register(guardrail('y', { apiVersion: 2 }), 'p')).to.throw(PluginError, 'unsupported apiVersion 2');
    expect(() => registry.register(guardrail('z', { optionsSchema: { type: 'nonsense' } }), 'p')).to.throw(PluginError, 'invalid optionsSchema');
  });

  it('compiles option schemas strictly, like the config schema: a misspelt keyword is an error at registration', () => {
    const registry = new PluginRegistry();
    // "propertes" would otherwise be ignored, and every option accepted unchecked
    const sloppy = { type: 'object', propertes: { words: { type: 'array' } } };
    expect(() => registry.register(guardrail('sloppy', { optionsSchema: sloppy }), 'plugins[0]')).to.throw(PluginError, 'plugins[0]: plugin "sloppy" has an invalid optionsSchema: strict mode: unknown keyword: "propertes"');
  });

  it('refuses at registration a default its own schema refuses (the operator who left the option out was blamed for it)', () => {
    const registry = new PluginRegistry();
    const schema = (prefix: unknown) => ({
      type: 'object',
      additionalProperties: false,
      properties: { prefix: { type: 'string', pattern: '^[A-Z]{2,8}$', default: prefix }, nested: { type: 'object', properties: { n: { type: 'integer', minimum: 1, default: 2 } } } },
    });
    expect(() => registry.register(guardrail('lower-default', { optionsSchema: schema('emp') }), 'plugins[0]')).to.throw(
      PluginError,
      'plugins[0]: plugin "lower-default" has an invalid optionsSchema: the default of "prefix" fails its own schema (prefix: must match ^[A-Z]{2,8}$)',
    );
    const nested = schema('EMP');
    nested.properties.nested.properties.n.default = 0;
    expect(() => registry.register(guardrail('nested-default', { optionsSchema: nested }), 'plugins[1]')).to.throw(PluginError, 'the default of "nested.n" fails its own schema (nested.n: must be >= 1)');
    registry.register(guardrail('good-default', { optionsSchema: schema('EMP') }), 'plugins[2]');
    expect(registry.has('guardrail', 'good-default')).to.equal(true);
  });

  it('validates options against the plugin schema and names the option path', async () => {
    const registry = new PluginRegistry();
    registry.register(guardrail('words'), 'a');
    const err = (await registry.create('guardrail', 'words', { words: ['ok', 7] }, deps, 'guardrails[2].options').catch((e: unknown) => e)) as Error;
    expect(err).to.be.instanceOf(PluginError);
    expect(err.message).to.equal('guardrails[2].options: guardrails[2].options.words[1]: must be string');
    const unknown = (await registry.create('guardrail', 'words', { wrds: [] }, deps, 'guardrails[0].options').catch((e: unknown) => e)) as Error;
    expect(unknown.message).to.include('guardrails[0].options.wrds: unknown field');
    const made = await registry.create<{ options: unknown }>('guardrail', 'words', { words: ['a'] }, deps, 'x');
    expect(made.options).to.deep.equal({ words: ['a'] });
  });

  it('refuses at start a guardrail engine whose create() returns no check(), naming its options', async () => {
    const registry = new PluginRegistry();
    registry.register(guardrail('hollow', { create: () => ({}) }), 'a');
    registry.register(guardrail('nothing', { create: async () => undefined }), 'b');
    for (const id of ['hollow', 'nothing']) {
      const err = (await registry.create('guardrail', id, {}, deps, 'guardrails[3].options').catch((e: unknown) => e)) as Error;
      expect(err).to.be.instanceOf(PluginError);
      expect(err.message).to.equal(`guardrails[3].options: plugin "${id}" failed to start: its create() returned no check() function`);
    }
  });

  it('loads external plugins named by path, as one definition or an array', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mg-plugins-'));
    writeFileSync(path.join(dir, 'one.js'), `module.exports = { kind: 'guardrail', id: 'ext-one', apiVersion: 1, optionsSchema: {}, create: () => ({}) };`);
    writeFileSync(
      path.join(dir, 'many.mjs'),
      `export default [{ kind: 'provider', id: 'ext-prov', apiVersion: 1, optionsSchema: {}, create: () => ({ operations: {} }) }, { kind: 'guardrail', id: 'ext-two', apiVersion: 1, optionsSchema: {}, create: () => ({}) }];`,
    );
    const registry = new PluginRegistry();
    await registry.loadExternal(['./one.js', './many.mjs'], dir);
    expect(registry.has('guardrail', 'ext-one')).to.equal(true);
    expect(registry.has('provider', 'ext-prov')).to.equal(true);
    expect(registry.has('guardrail', 'ext-two')).to.equal(true);
    const missing = (await registry.loadExternal(['./nope.js'], dir).catch((e: unknown) => e)) as Error;
    expect(missing.message).to.match(/^plugins\[0\]: cannot load plugin "\.\/nope\.js"/);
  });

  it('names every plugin of the list that fails, a line each, not only the first', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mg-plugins-'));
    writeFileSync(path.join(dir, 'good.js'), `module.exports = { kind: 'guardrail', id: 'ext-good', apiVersion: 1, optionsSchema: {}, create: () => ({}) };`);
    writeFileSync(path.join(dir, 'no-create.js'), `module.exports = { kind: 'guardrail', id: 'ext-bad', apiVersion: 1, optionsSchema: {} };`);
    const registry = new PluginRegistry();
    const err = (await registry.loadExternal(['./nope.js', './good.js', './no-create.js'], dir).catch((e: unknown) => e)) as Error;
    expect(err).to.be.instanceOf(PluginError);
    const lines = err.message.split('\n');
    expect(lines).to.have.length(2);
    expect(lines[0]).to.match(/^plugins\[0\]: cannot load plugin "\.\/nope\.js"/);
    expect(lines[1]).to.equal('plugins[2]: plugin "ext-bad" has no create() function');
  });
});
