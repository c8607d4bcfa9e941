import path from 'node:path';
import { copyData } from '../config/copy-data';
import { createJiti } from '../config/jiti';
import { PluginError } from '../errors/gateway-error';
import { compileSchema, type SchemaValidator } from '../config/validators';
import type { PluginContext, PluginDefinition, PluginDeps, PluginKind } from './contracts';

const KINDS: readonly PluginKind[] = ['provider', 'guardrail', 'mcp-transport'];
const SUPPORTED_API_VERSIONS = new Set([1]);
const PLUGIN_ID = /^[a-z0-9][a-z0-9-]*$/;

interface Entry {
  definition: PluginDefinition;
  validate: SchemaValidator;
  source: string;
}

/**
 * Every plugin the gateway knows, validated once at boot: known kind, supported apiVersion, unique id,
 * an options schema that compiles (with the same strict ajv as the config file, so defaults and error
 * messages work alike). Options are checked against it before `create` is called.
 */
export class PluginRegistry {
  private readonly entries = new Map<string, Entry>();

  register(candidate: unknown, source: string): void {
    const def = candidate as Partial<PluginDefinition> | undefined;
    if (!def || typeof def !== 'object') throw new PluginError(source, 'does not export a plugin definition');
    if (!KINDS.includes(def.kind as PluginKind)) throw new PluginError(source, `unknown plugin kind ${JSON.stringify(def.kind)} (expected one of ${KINDS.join(', ')})`);
    if (typeof def.id !== 'string' || !PLUGIN_ID.test(def.id)) throw new PluginError(source, `invalid plugin id ${JSON.stringify(def.id)} (lower-case letters, digits and "-")`);
    if (!SUPPORTED_API_VERSIONS.has(def.apiVersion as number)) throw new PluginError(source, `plugin "${def.id}" has unsupported apiVersion ${JSON.stringify(def.apiVersion)} (supported: 1)`);
    if (typeof def.create !== 'function') throw new PluginError(source, `plugin "${def.id}" has no create() function`);
    const key = `${def.kind}:${def.id}`;
    const existing = this.entries.get(key);
    if (existing) throw new PluginError(source, `duplicate ${def.kind} plugin id "${def.id}" (already registered by ${existing.source})`);
    let validate: SchemaValidator;
    try {
      validate = compileSchema(def.optionsSchema ?? {});
    } catch (err) {
      throw new PluginError(source, `plugin "${def.id}" has an invalid optionsSchema: ${(err as Error).message}`);
    }
    const badDefault = defaultProblem(def.optionsSchema ?? {});
    if (badDefault) throw new PluginError(source, `plugin "${def.id}" has an invalid optionsSchema: ${badDefault}`);
    this.entries.set(key, { definition: def as PluginDefinition, validate, source });
  }

  has(kind: PluginKind, id: string): boolean {
    return this.entries.has(`${kind}:${id}`);
  }

  ids(kind: PluginKind): string[] {
    return [...this.entries.values()].filter((e) => e.definition.kind === kind).map((e) => e.definition.id);
  }

  /** What is wrong with `options` for this plugin (each message starts with optionsPath); none when fine. */
  optionProblems(kind: PluginKind, id: string, options: unknown, optionsPath: string): string[] {
    const entry = this.entries.get(`${kind}:${id}`);
    if (!entry) return [`${optionsPath}: unknown ${kind} plugin "${id}"`];
    return entry.validate.check(copyData(options ?? {}), optionsPath).map((p) => p.message);
  }

  /**
   * Validate `options` against the plugin's schema (errors carry `optionsPath`, e.g.
   * "guardrails[0].options") and create the instance.
   */
  async create<I>(kind: PluginKind, id: string, options: unknown, deps: PluginDeps, optionsPath: string, context: PluginContext = {}): Promise<I> {
    const entry = this.entries.get(`${kind}:${id}`);
    if (!entry) throw new PluginError(optionsPath, `unknown ${kind} plugin "${id}"`);
    const value = copyData(options ?? {});
    const problems = entry.validate.check(value, optionsPath);
    // the error already starts with optionsPath: a problem with the options object itself is not named twice
    if (problems.length) throw new PluginError(optionsPath, problems.map((p) => p.message.replace(`${optionsPath}: `, '')).join('; '));
    let instance: unknown;
    try {
      instance = await entry.definition.create(value, deps, context);
    } catch (err) {
      // a plugin's PluginError names an option by its path within the options: the operator gets the
      // config path (guardrails[1].options.patterns[0]), as schema errors give it
      if (err instanceof PluginError && err.path && err.message.startsWith(`${err.path}: `)) {
        throw new PluginError(`${optionsPath}.${err.path}`, err.message.slice(err.path.length + 2));
      }
      throw new PluginError(optionsPath, `plugin "${id}" failed to start: ${(err as Error).message}`);
    }
    // what the gateway calls on every request, checked now: an engine without check() booted, and every
    // guarded request then failed with an internal error
    if (kind === 'guardrail' && typeof (instance as { check?: unknown } | null)?.check !== 'function') {
      throw new PluginError(optionsPath, `plugin "${id}" failed to start: its create() returned no check() function`);
    }
    return instance as I;
  }

  /**
   * Load the plugins a config names: a path (relative to the config file) or a package name. A module
   * may export one definition or an array of them, as `default` or as the module itself. Every entry is
   * tried, and one error names each that failed (a line each), so an operator fixing a list of plugins
   * learns of all its problems in one start or `check`, not one per try.
   */
  async loadExternal(specifiers: string[], baseDir: string): Promise<void> {
    let jiti: ReturnType<typeof createJiti> | undefined;
    const problems: PluginError[] = [];
    for (const [i, spec] of specifiers.entries()) {
      jiti ??= createJiti(path.join(baseDir, 'gateway.config.ts'), { interopDefault: true });
      const at = `plugins[${i}]`;
      const target = spec.startsWith('.') || path.isAbsolute(spec) ? path.resolve(baseDir, spec) : spec;
      let mod: unknown;
      try {
        mod = await jiti.import(target);
      } catch (err) {
        problems.push(new PluginError(at, `cannot load plugin "${spec}": ${(err as Error).message.split('\n')[0]}`));
        continue;
      }
      // A TypeScript plugin compiled to CommonJS arrives wrapped twice ({ default: { default: def } }).
      let exported: unknown = mod;
      while (exported && typeof exported === 'object' && !Array.isArray(exported) && !('kind' in exported) && 'default' in exported) exported = (exported as { default: unknown }).default;
      try {
        for (const def of Array.isArray(exported) ? exported : [exported]) this.register(def, at);
      } catch (err) {
        if (!(err instanceof PluginError)) throw err;
        problems.push(err);
      }
    }
    if (problems.length === 1) throw problems[0];
    if (problems.length > 1) throw new PluginError('', problems.map((p) => p.message).join('\n'));
  }
}

/**
 * A `default` its own property schema refuses. ajv fills defaults in without checking them, so an operator
 * who left the option out was told their config broke the plugin's schema (`guardrails[0].options.prefix:
 * must match ...`) for a value the plugin wrote.
 */
function defaultProblem(schema: unknown, at = ''): string | undefined {
  const properties = schema && typeof schema === 'object' ? (schema as { properties?: unknown }).properties : undefined;
  if (!properties || typeof properties !== 'object') return undefined;
  for (const [name, property] of Object.entries(properties)) {
    if (!property || typeof property !== 'object') continue;
    const path = at ? `${at}.${name}` : name;
    if (Object.hasOwn(property, 'default')) {
      const { default: value, ...own } = property as Record<string, unknown>;
      let problems: string[] = [];
      try {
        problems = compileSchema(own).check(copyData(value), path).map((p) => p.message);
      } catch {
        // a property schema that does not compile alone (a $ref into its parent) is not checked here
      }
      if (problems.length) return `the default of "${path}" fails its own schema (${problems.join('; ')})`;
    }
    const deeper = defaultProblem(property, path);
    if (deeper) return deeper;
  }
  return undefined;
}
