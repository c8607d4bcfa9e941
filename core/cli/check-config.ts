import type { ResolvedConfig } from '../config/types';
import { BUILTIN_PLUGINS } from '../plugins/builtins';
import type { PluginDeps, PluginStore } from '../plugins/contracts';
import { PluginRegistry } from '../plugins/registry';
import { ModelCatalog } from '../routing/model-catalog';
import { storeUrlProblem } from '../store/open-store';
import { transportIdOf } from '../apis/mcp/transports';
import { configServerProblems } from '../apis/mcp/server-registry';
import { redactUrl } from '../apis/mcp/server-record';
import { ConfigError } from '../errors/gateway-error';
import { unusedGuardrails, unusedGuardrailWarning } from './unused-guardrails';
import { isJsonObject } from '../types/json-object';
import { postgresConnections } from '../store/postgres-pool-size';
import { resolveWorkers } from './cluster';
import { tempDirProblem } from '../apis/images/images-settings';

/**
 * `model-gateway check`: the config is already loaded (shape, env() values, references: load-config.ts);
 * this loads its plugins, checks every plugin it names exists and accepts its options, and describes what
 * would run. Names, ids, types and URLs only: a key is shown by its name or id, never its secret, and no
 * header, credential or plugin option value is printed.
 */
export async function checkConfig(config: ResolvedConfig): Promise<{ lines: string[]; problems: string[]; warnings: string[] }> {
  const { problems, registry } = await pluginCheck(config, config.baseDir);
  if (!problems.length && registry) problems.push(...(await creationProblems(config, registry)));
  problems.push(...configServerProblems(config.mcpServers));
  const storeProblem = storeUrlProblem(config.store.url);
  if (storeProblem) problems.unshift(`store.url: ${storeProblem}`);
  const spoolProblem = tempDirProblem(config.images.tempDir);
  if (spoolProblem) problems.push(`images.tempDir: ${spoolProblem}`);
  // the boot refuses server.workers processes that store.maxConnections cannot serve before it forks them
  try {
    postgresConnections(config.store, resolveWorkers(config.server.workers, 'server.workers'));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(err.message);
  }
  const lines = [
    `server: http://${config.server.host}:${config.server.port}`,
    `store: ${storeKind(config.store.url)}`,
    `admin key: ${config.adminKey ? 'set' : 'none (management API only for organisation admin keys)'}`,
    // a base URL may carry a password or a key in its query: printed as the management API reads show one
    section('providers', config.providers.map((p) => `${p.id} (${p.type}${p.baseUrl ? `, ${redactUrl(p.baseUrl)}` : ''})`)),
    section('models', config.models.map((m) => `${m.name} -> ${m.provider}/${m.model ?? m.name} (${m.kind ?? 'chat'})`)),
    section('organizations', config.organizations.map((o) => o.id)),
    section('keys', config.keys.map((k) => `${k.name ?? k.id ?? '(unnamed)'} (org ${k.org}, ${k.role ?? 'member'}${k.guardrails?.length ? `, guardrails ${k.guardrails.join(', ')}` : ''})`)),
    section('mcp servers', config.mcpServers.map((s) => `${s.name} (${transportIdOf(s.transport)}, ${s.visibility ?? 'private'}${s.org ? `, org ${s.org}` : ''})`)),
    section('guardrails', config.guardrails.map((g) => `${g.id} (${g.engine}, ${g.default ? 'default' : 'listed keys only'}, ${g.mode ?? 'enforce'})`)),
  ];
  const warnings = unusedGuardrails(config.guardrails, config.keys).map(unusedGuardrailWarning);
  return { lines, problems, warnings };
}

/**
 * Every plugin the config names exists and accepts its options. Also run on a config that failed to load
 * (`config` is then its value as far as it resolved), so `check` reports these with the load's problems
 * rather than only once those are fixed; an entry whose plugin id or options the load already refused is
 * skipped, so nothing is reported twice.
 */
export async function pluginProblems(config: unknown, baseDir: string, loadProblems: string[] = []): Promise<string[]> {
  return (await pluginCheck(config, baseDir, loadProblems)).problems;
}

async function pluginCheck(config: unknown, baseDir: string, loadProblems: string[] = []): Promise<{ problems: string[]; registry?: PluginRegistry }> {
  const at = (path: string) => loadProblems.some((p) => p.startsWith(`${path}:`));
  const within = (path: string) => at(path) || loadProblems.some((p) => p.startsWith(`${path}.`) || p.startsWith(`${path}[`));
  const c: Record<string, unknown> = isJsonObject(config) ? config : {};
  const list = (field: string): unknown[] => (Array.isArray(c[field]) ? (c[field] as unknown[]) : []);
  // without a sound plugin list there is no telling which ids exist
  if (within('plugins')) return { problems: [] };
  const registry = new PluginRegistry();
  for (const plugin of BUILTIN_PLUGINS) registry.register(plugin, `builtin:${plugin.id}`);
  try {
    await registry.loadExternal(list('plugins') as string[], baseDir);
  } catch (err) {
    if (err instanceof ConfigError && loadProblems.length) return { problems: [err.message] };
    throw err;
  }

  const problems: string[] = [];
  const optionsOk = (kind: 'provider' | 'guardrail' | 'mcp-transport', entry: unknown, idField: 'type' | 'engine', path: string) => {
    if (!isJsonObject(entry) || typeof entry[idField] !== 'string' || at(path) || within(`${path}.${idField}`) || within(`${path}.options`)) return;
    const id = entry[idField] as string;
    // named by the field, as the boot names it (guardrails[1].engine, providers[0].type)
    if (!registry.has(kind, id)) return problems.push(`${path}.${idField}: unknown ${kind} plugin "${id}" (loaded: ${registry.ids(kind).join(', ')})`);
    problems.push(...registry.optionProblems(kind, id, entry.options, `${path}.options`));
  };
  list('providers').forEach((p, i) => optionsOk('provider', p, 'type', `providers[${i}]`));
  list('guardrails').forEach((g, i) => optionsOk('guardrail', g, 'engine', `guardrails[${i}]`));
  list('mcpServers').forEach((s, i) => {
    const path = `mcpServers[${i}]`;
    if (!isJsonObject(s) || at(path) || within(`${path}.transport`)) return;
    const id = transportIdOf(s.transport as string | undefined);
    if (!registry.has('mcp-transport', id)) problems.push(`${path}.transport: unknown MCP transport "${id}" (loaded: ${registry.ids('mcp-transport').join(', ')})`);
  });
  return { problems, registry };
}

/**
 * What the boot refuses beyond the option schemas: a plugin's create() checks what a schema cannot (a
 * block pattern RE2 cannot run, an unknown preset, Azure's one credential) and the catalog needs a base
 * URL. `check` said "valid" for such a config and the boot then failed, so it creates the providers,
 * the guardrail engines and the catalog as the boot does, with a throwaway store and no log output (a
 * plugin that fetches something in create() does so here too, as at boot).
 */
async function creationProblems(config: ResolvedConfig, registry: PluginRegistry): Promise<string[]> {
  const problems: string[] = [];
  const attempt = async (create: () => Promise<unknown>) => {
    try {
      await create();
      return true;
    } catch (err) {
      problems.push((err as Error).message);
      return false;
    }
  };
  let providersCreated = true;
  for (const [i, p] of config.providers.entries()) {
    if (!(await attempt(() => registry.create('provider', p.type, p.options, checkDeps(), `providers[${i}].options`, { provider: p })))) providersCreated = false;
  }
  for (const [i, g] of config.guardrails.entries()) await attempt(() => registry.create('guardrail', g.engine, g.options ?? {}, checkDeps(), `guardrails[${i}].options`));
  if (providersCreated) await attempt(() => ModelCatalog.build(config, registry, checkDeps));
  return problems;
}

function checkDeps(): PluginDeps {
  const values = new Map<string, unknown>();
  const store: PluginStore = {
    get: async <T>(key: string) => values.get(key) as T | undefined,
    set: async (key, value) => void values.set(key, value),
    delete: async (key) => void values.delete(key),
  };
  const quiet = () => undefined;
  return {
    logger: { debug: quiet, info: quiet, warn: quiet, error: quiet },
    clock: { now: () => Date.now() },
    store,
    fetch: globalThis.fetch,
  };
}

function section(title: string, items: string[]): string {
  return items.length === 0 ? `${title}: none` : `${title}:\n${items.map((i) => `  - ${i}`).join('\n')}`;
}

/** The store's kind and place, without the user name or password a server URL may carry. */
function storeKind(url: string): string {
  if (url.startsWith('sqlite:') || url.startsWith('memory:')) return url;
  try {
    const u = new URL(url);
    return `${u.protocol.replace(/:$/, '')} at ${u.hostname}${u.port ? `:${u.port}` : ''}`;
  } catch {
    return '(unparsable URL)';
  }
}
