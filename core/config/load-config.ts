import path from 'node:path';
import { readFile, stat } from 'node:fs/promises';
import { createJiti } from './jiti';
import { ConfigError } from '../errors/gateway-error';
import { copyData } from './copy-data';
import { resolveEnvRefs } from './env';
import { configReferenceProblems } from './references';
import type { GatewayConfigInput, ResolvedConfig } from './types';
import { validators, type ValidationProblem } from './validators';

/** Several config errors reported at once, each with its path. */
export class ConfigErrors extends ConfigError {
  constructor(readonly messages: string[]) {
    super('', messages.join('\n'));
    this.name = 'ConfigError';
  }
}

/** Read a `.ts`, `.js`, `.mjs`, `.cjs` or `.json` config file. TypeScript is compiled at run time by jiti. */
export async function readConfigFile(file: string): Promise<unknown> {
  const absolute = path.resolve(file);
  if (absolute.endsWith('.json')) {
    let text: string;
    try {
      text = await readFile(absolute, 'utf8');
    } catch (err) {
      throw new ConfigError('', `cannot read config file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    try {
      // a byte-order mark (Notepad, Windows PowerShell's utf8) is not JSON, but Node's own JSON loading skips it
      return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    } catch (err) {
      const reason = withoutQuotedJson((err as Error).message);
      throw new ConfigError('', `config file ${file} is not valid JSON: ${reason}`);
    }
  }
  // checked first: for a missing file jiti says "Cannot find module" with a require stack of our own files,
  // and so it does for a directory (what `docker run -v` mounts where the host has no such file)
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(absolute)).isDirectory();
  } catch (err) {
    throw new ConfigError('', `cannot read config file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (isDirectory) throw new ConfigError('', `cannot read config file ${file}: it is a directory, not a file`);
  const jiti = createJiti(__filename, { moduleCache: false, interopDefault: true });
  let mod: { default?: unknown };
  try {
    mod = (await jiti.import(absolute)) as { default?: unknown };
  } catch (err) {
    // a TypeScript config's own JSON.parse(process.env.KEYS) fails with V8's quote of that text too
    const message = withoutQuotedJson(err instanceof Error ? err.message : String(err));
    throw new ConfigError('', `cannot load config file ${file}: ${message}${message.includes(absolute) ? '' : thrownAt(err, absolute)}`);
  }
  // jiti hands a CommonJS `module.exports = {...}` over as `default` too: without one, the file exports no config
  // (and its module object is not a config: it cannot even be cloned)
  if (mod && typeof mod === 'object' && 'default' in mod) return mod.default;
  throw new ConfigError('', `config file ${file} has no default export: write export default defineConfig({ ... })`);
}

/** V8 quotes the text around a JSON syntax error ('..."adminKey": sk-adm"...'): it may be a literal secret. */
function withoutQuotedJson(message: string): string {
  return message.replace(/,\s*(?:\.\.\.)?"[\s\S]* is not valid JSON$/, '');
}

/** Where in the config file an error was thrown, from its stack: a bare "Cannot read properties of undefined" does not say which line. */
function thrownAt(err: unknown, absolute: string): string {
  const stack = err instanceof Error ? (err.stack ?? '') : '';
  const line = stack.split('\n').find((l) => l.includes(`${absolute}:`));
  const position = line === undefined ? null : /^:(\d+):(\d+)/.exec(line.slice(line.indexOf(`${absolute}:`) + absolute.length));
  return position ? ` (at ${absolute}:${position[1]}:${position[2]})` : '';
}

/**
 * Validate and resolve a config in one pass: the shape (schema.ts, which also fills in defaults), env()
 * markers and references are all checked before anything is reported, so one load lists every problem,
 * each with its path. Plugin options are checked later, by the plugin registry, against each plugin's
 * own schema.
 */
export function resolveConfig(input: unknown, environment: NodeJS.ProcessEnv = process.env, baseDir = process.cwd()): ResolvedConfig {
  const parts = resolveParts(input, environment);
  if (parts.problems.length) throw new ConfigErrors(parts.problems);
  return finishConfig(parts, baseDir);
}

/** A config whose parts resolved without a problem, with the defaults that depend on other fields. */
function finishConfig({ resolved, references, envValues }: ReturnType<typeof resolveParts>, baseDir: string): ResolvedConfig {
  const config = resolved as Required<GatewayConfigInput<string>>;
  // defaults that depend on other fields; every other default comes from the schema
  const models = config.models.map((m) => {
    const model = m.model ?? m.name;
    return { ...m, model, id: m.id ?? `${m.provider}/${model}` };
  });
  const mcpServers = config.mcpServers.map((s, i) => {
    const normalized = references.servers.find((n) => n.index === i)!;
    return { ...s, name: normalized.name, alias: normalized.alias, visibility: normalized.visibility };
  });
  return { ...(config as unknown as ResolvedConfig), models, mcpServers, baseDir, envValues: [...envValues] };
}

/**
 * Where a plugin's own options are (a provider's or a guardrail's `options`): the plugin's shape, so a
 * value read there with env() is kept for the scrubber as a secret. Only there: elsewhere the secret
 * fields are known by name, and an env() model name or base URL scrubbed from every log line would hide
 * what the log is for.
 */
const PLUGIN_OPTIONS = /^(?:providers|guardrails)\[\d+\]\.options(?:[.[]|$)/;

function resolveParts(input: unknown, environment: NodeJS.ProcessEnv) {
  // defaults are written into the value, so work on a copy: the caller's object stays as written
  const value = copyData(input);
  const shape = validators.config.check(value);
  const envProblems: string[] = [];
  const envValues = new Set<string>();
  const resolved = resolveEnvRefs(value, environment, '', envProblems, (path, read) => {
    if (PLUGIN_OPTIONS.test(path)) envValues.add(read);
  }) as GatewayConfigInput<string>;
  const references = typeof resolved === 'object' && resolved !== null && !Array.isArray(resolved) ? configReferenceProblems(resolved as Record<string, unknown>) : { problems: [], servers: [] };
  const problems = [...shape.map((p) => p.message), ...envProblems, ...withoutShapeErrors(references.problems, shape)];
  return { resolved, references, problems, envValues };
}

/**
 * For `check`: the load's problems without throwing, and the value as far as it resolved, so the plugin
 * checks that follow a load can run in the same pass and every problem is reported at once.
 */
export async function loadConfigForCheck(file: string, environment: NodeJS.ProcessEnv = process.env): Promise<{ config?: ResolvedConfig; problems: string[]; partial: unknown; baseDir: string }> {
  const input = await readConfigFile(file);
  const baseDir = path.dirname(path.resolve(file));
  const parts = resolveParts(input, environment);
  return { config: parts.problems.length ? undefined : finishConfig(parts, baseDir), problems: parts.problems, partial: parts.resolved, baseDir };
}

/** A field the schema already refused is not reported a second time by the reference checks. */
function withoutShapeErrors(problems: ValidationProblem[], shape: ValidationProblem[]): string[] {
  const refused = new Set(shape.map((p) => p.path));
  return problems.filter((p) => !refused.has(p.path)).map((p) => p.message);
}

export async function loadConfig(file: string, environment: NodeJS.ProcessEnv = process.env): Promise<ResolvedConfig> {
  const input = await readConfigFile(file);
  return resolveConfig(input, environment, path.dirname(path.resolve(file)));
}
