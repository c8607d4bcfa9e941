import path from 'node:path';
import { GATEWAY_PROXY } from '../apis/mcp/gateway-proxy-name';
import { readFile } from 'node:fs/promises';
import Ajv, { type ErrorObject } from 'ajv';
import { createJiti } from 'jiti';
import { ConfigError } from '../errors/gateway-error';
import { normalizeServerName } from '../apis/mcp/naming';
import { resolveEnvRefs } from './env';
import { configSchema } from './schema';
import type { GatewayConfigInput, ResolvedConfig } from './types';

const ajv = new Ajv({ allErrors: true, strict: false });
const validateShape = ajv.compile(configSchema);

/** "/models/2/provider" -> "models[2].provider" */
export function jsonPointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

export function describeAjvError(error: ErrorObject, root = ''): string {
  let at = jsonPointerToPath(error.instancePath);
  if (root) at = at ? `${root}.${at}` : root;
  if (error.keyword === 'additionalProperties') {
    const field = (error.params as { additionalProperty: string }).additionalProperty;
    return `${at ? `${at}.` : ''}${field}: unknown field`;
  }
  if (error.keyword === 'required') {
    const field = (error.params as { missingProperty: string }).missingProperty;
    return `${at ? `${at}.` : ''}${field}: is required`;
  }
  if (error.keyword === 'enum') return `${at}: must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  return `${at || '(root)'}: ${error.message}`;
}

/**
 * A failed `oneOf` (a secret, an auth variant) makes ajv report why each branch failed; one line that
 * names the field reads better than the whole list.
 */
function collapseOneOfErrors(errors: ErrorObject[]): ErrorObject[] {
  const oneOfPaths = errors.filter((e) => e.keyword === 'oneOf').map((e) => e.instancePath);
  return errors
    .filter((e) => e.keyword === 'oneOf' || !oneOfPaths.some((p) => e.instancePath === p || e.instancePath.startsWith(`${p}/`)))
    .map((e) => (e.keyword === 'oneOf' ? { ...e, message: 'is not one of the accepted forms (a string, an env() marker, or an object of one of the documented types)' } : e));
}

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
      return JSON.parse(text);
    } catch (err) {
      // V8 quotes the text around the error ('..."adminKey": sk-adm"...'): it may be a literal secret
      const reason = (err as Error).message.replace(/,\s*(?:\.\.\.)?"[\s\S]* is not valid JSON$/, '');
      throw new ConfigError('', `config file ${file} is not valid JSON: ${reason}`);
    }
  }
  const jiti = createJiti(__filename, { moduleCache: false, interopDefault: true });
  try {
    const mod = (await jiti.import(absolute)) as { default?: unknown };
    return mod && typeof mod === 'object' && 'default' in mod ? mod.default : mod;
  } catch (err) {
    throw new ConfigError('', `cannot load config file ${file}: ${(err as Error).message}`);
  }
}

/**
 * Validate in two passes: the shape (this function), then plugin options (the plugin registry, at boot).
 * Every problem is reported, each with its path.
 */
export function resolveConfig(input: unknown, environment: NodeJS.ProcessEnv = process.env, baseDir = process.cwd()): ResolvedConfig {
  if (!validateShape(input)) {
    throw new ConfigErrors(collapseOneOfErrors(validateShape.errors ?? []).map((e) => describeAjvError(e)));
  }
  const raw = input as GatewayConfigInput;
  const resolved = resolveEnvRefs(raw, environment) as GatewayConfigInput<string>;
  const errors: string[] = [];

  const orgIds = new Set<string>();
  (resolved.organizations ?? []).forEach((org, i) => {
    if (orgIds.has(org.id)) errors.push(`organizations[${i}].id: duplicate organization "${org.id}"`);
    orgIds.add(org.id);
  });
  const providerIds = new Set<string>();
  (resolved.providers ?? []).forEach((p, i) => {
    if (providerIds.has(p.id)) errors.push(`providers[${i}].id: duplicate provider "${p.id}"`);
    providerIds.add(p.id);
  });
  const guardrailIds = new Set<string>();
  (resolved.guardrails ?? []).forEach((g, i) => {
    if (guardrailIds.has(g.id)) errors.push(`guardrails[${i}].id: duplicate guardrail "${g.id}"`);
    guardrailIds.add(g.id);
  });

  const modelNames = new Set((resolved.models ?? []).map((m) => m.name));
  const deploymentIds = new Set<string>();
  const models = (resolved.models ?? []).map((m, i) => {
    if (!providerIds.has(m.provider)) errors.push(`models[${i}].provider: unknown provider "${m.provider}"`);
    const model = m.model ?? m.name;
    const id = m.id ?? `${m.provider}/${model}`;
    if (m.id && deploymentIds.has(id)) errors.push(`models[${i}].id: duplicate deployment id "${id}"`);
    deploymentIds.add(id);
    (m.fallbacks ?? []).forEach((f, j) => {
      if (!modelNames.has(f)) errors.push(`models[${i}].fallbacks[${j}]: unknown model "${f}"`);
    });
    return { ...m, model, id, kind: m.kind ?? 'chat', weight: m.weight ?? 1 };
  });

  const serverKeys = new Set<string>();
  const mcpServers = (resolved.mcpServers ?? []).map((s, i) => {
    const at = `mcpServers[${i}]`;
    const name = normalizeServerName(s.name);
    if ('error' in name) errors.push(`${at}.name: ${name.error}`);
    const alias = normalizeServerName(s.alias ?? s.name);
    if ('error' in alias) errors.push(`${at}.alias: ${alias.error}`);
    const visibility = s.visibility ?? (s.org ? 'private' : 'public');
    if (s.org && !orgIds.has(s.org)) errors.push(`${at}.org: unknown organization "${s.org}"`);
    if (!s.org && visibility === 'private') errors.push(`${at}.org: a private server needs an owning organization`);
    if (s.transport && s.transport !== 'streamable-http') {
      errors.push(`${at}.transport: "${s.transport}" is not supported; upstream MCP servers must use streamable HTTP (stdio and the old SSE transport are not accepted)`);
    }
    if (!/^https?:\/\//i.test(s.url)) errors.push(`${at}.url: must be an http(s) URL of a streamable-HTTP MCP endpoint`);
    const finalName = 'name' in name ? name.name : s.name;
    const ownerKey = `${s.org ?? '(platform)'}/${finalName}`;
    if (serverKeys.has(ownerKey)) errors.push(`${at}.name: duplicate server name "${finalName}" in organization ${s.org ?? '(platform)'}`);
    serverKeys.add(ownerKey);
    return { ...s, name: finalName, alias: 'name' in alias ? alias.name : s.alias, visibility };
  });
  // gateway_proxy, the built-in server of model tools, is a server a key may name like any other
  const serverNames = new Set([GATEWAY_PROXY, ...mcpServers.flatMap((s) => [s.name, s.alias ?? s.name])]);

  (resolved.keys ?? []).forEach((k, i) => {
    if (!orgIds.has(k.org)) errors.push(`keys[${i}].org: unknown organization "${k.org}"`);
    (k.guardrails ?? []).forEach((g, j) => {
      if (!guardrailIds.has(g)) errors.push(`keys[${i}].guardrails[${j}]: unknown guardrail "${g}"`);
    });
    (k.mcp?.servers ?? []).forEach((s, j) => {
      if (!serverNames.has(s)) errors.push(`keys[${i}].mcp.servers[${j}]: unknown MCP server "${s}"`);
    });
    for (const s of Object.keys(k.mcp?.tools ?? {})) {
      if (!serverNames.has(s)) errors.push(`keys[${i}].mcp.tools.${s}: unknown MCP server "${s}"`);
    }
  });
  if (errors.length) throw new ConfigErrors(errors);

  return {
    server: {
      host: resolved.server?.host ?? '127.0.0.1',
      port: resolved.server?.port ?? 4000,
      drainSeconds: resolved.server?.drainSeconds ?? 10,
      bodyLimitBytes: resolved.server?.bodyLimitBytes ?? 10 * 1024 * 1024,
      allowedOrigins: resolved.server?.allowedOrigins ?? [],
    },
    store: { url: resolved.store?.url ?? 'sqlite://./data/gateway.db', sweepIntervalSeconds: resolved.store?.sweepIntervalSeconds ?? 60 },
    adminKey: resolved.adminKey,
    organizations: resolved.organizations ?? [],
    keys: resolved.keys ?? [],
    providers: resolved.providers ?? [],
    models,
    mcpServers,
    guardrails: resolved.guardrails ?? [],
    plugins: resolved.plugins ?? [],
    mcp: {
      healthCheckIntervalSeconds: resolved.mcp?.healthCheckIntervalSeconds ?? 60,
      discoveryTimeoutSeconds: resolved.mcp?.discoveryTimeoutSeconds ?? 30,
      allowPrivateUpstreams: resolved.mcp?.allowPrivateUpstreams ?? false,
    },
    routing: resolved.routing ?? {},
    timeouts: {
      connectMs: resolved.timeouts?.connectMs ?? 10_000,
      firstByteMs: resolved.timeouts?.firstByteMs ?? 120_000,
      idleMs: resolved.timeouts?.idleMs ?? 60_000,
      totalMs: resolved.timeouts?.totalMs ?? 600_000,
    },
    responses: {
      maxToolRounds: resolved.responses?.maxToolRounds ?? 10,
      timeLimitSeconds: resolved.responses?.timeLimitSeconds ?? 300,
      maxToolCallsPerRound: resolved.responses?.maxToolCallsPerRound ?? 16,
      maxToolCalls: resolved.responses?.maxToolCalls ?? 64,
      maxStoredPerKey: resolved.responses?.maxStoredPerKey ?? 1000,
    },
    images: resolved.images ?? {},
    baseDir,
  };
}

export async function loadConfig(file: string, environment: NodeJS.ProcessEnv = process.env): Promise<ResolvedConfig> {
  const input = await readConfigFile(file);
  return resolveConfig(input, environment, path.dirname(path.resolve(file)));
}
