/**
 * The config rules a schema cannot express: references that must resolve (a model's provider, a key's
 * organisation, guardrails and MCP servers), unique ids, server-name normalisation. They run even when the
 * shape has errors, so one load reports every problem; each check skips entries whose shape is wrong
 * (the schema already named them).
 */
import { GATEWAY_PROXY } from '../apis/mcp/gateway-proxy-name';
import { normalizeServerName } from '../apis/mcp/naming';
import { GENERATED_ID } from '../auth/key-registry';
import { orgKeyId } from '../auth/org-key-id';
import type { ValidationProblem } from './validators';
import { isJsonObject } from '../types/json-object';

/** Names a key may refer to. */
export interface KnownNames {
  orgs: ReadonlySet<string>;
  guardrails: ReadonlySet<string>;
  /** MCP server names and aliases */
  servers: ReadonlySet<string>;
}

type Entry = Record<string, unknown>;

const problem = (path: string, text: string): ValidationProblem => ({ path, message: `${path}: ${text}` });
const isEntry: (v: unknown) => v is Entry = isJsonObject;
const str = (v: unknown): v is string => typeof v === 'string';

/** The entries of a list with their indexes (a list that is not an array has none). */
function entries(list: unknown): [number, Entry][] {
  return Array.isArray(list) ? list.map((v, i) => [i, v] as [number, unknown]).filter((e): e is [number, Entry] => isEntry(e[1])) : [];
}

function strings(list: unknown): [number, string][] {
  return Array.isArray(list) ? list.map((v, i) => [i, v] as [number, unknown]).filter((e): e is [number, string] => str(e[1])) : [];
}

/** A key's references: the same rule for a config entry and a management-API body (`at` = "" there). */
export function keyReferenceProblems(key: Entry, known: KnownNames, at = ''): ValidationProblem[] {
  const p = (field: string) => (at ? `${at}.${field}` : field);
  const out: ValidationProblem[] = [];
  if (str(key.org) && !known.orgs.has(key.org)) out.push(problem(p('org'), `unknown organization "${key.org}"`));
  for (const [j, g] of strings(key.guardrails)) if (!known.guardrails.has(g)) out.push(problem(`${p('guardrails')}[${j}]`, `unknown guardrail "${g}"`));
  const mcp = isEntry(key.mcp) ? key.mcp : {};
  // gateway_proxy, the built-in server of model tools, is a server a key may name like any other
  const knownServer = (s: string) => s === GATEWAY_PROXY || known.servers.has(s);
  for (const [j, s] of strings(mcp.servers)) if (!knownServer(s)) out.push(problem(`${p('mcp.servers')}[${j}]`, `unknown MCP server "${s}"`));
  if (isEntry(mcp.tools)) for (const s of Object.keys(mcp.tools)) if (!knownServer(s)) out.push(problem(`${p('mcp.tools')}.${s}`, `unknown MCP server "${s}"`));
  return out;
}

function duplicates(list: unknown, field: string, section: string, what: string): ValidationProblem[] {
  const seen = new Set<string>();
  const out: ValidationProblem[] = [];
  for (const [i, e] of entries(list)) {
    const id = e[field];
    if (!str(id)) continue;
    if (seen.has(id)) out.push(problem(`${section}[${i}].${field}`, `duplicate ${what} "${id}"`));
    seen.add(id);
  }
  return out;
}

/**
 * Two keys under one id in one organisation shared its budget, limits and log rows, and the management
 * API showed the first as both. (Organisations may each have their own `bot`.)
 */
function duplicateKeyIds(list: unknown): ValidationProblem[] {
  const seen = new Set<string>();
  const out: ValidationProblem[] = [];
  for (const [i, k] of entries(list)) {
    if (!str(k.id) || !str(k.org)) continue;
    const owned = orgKeyId(k.org, k.id);
    if (seen.has(owned)) out.push(problem(`keys[${i}].id`, `duplicate key id "${k.id}" in organization ${k.org}`));
    seen.add(owned);
  }
  return out;
}

/**
 * A key is found by its secret: a second key with the same one silently replaced the first (its models,
 * limits and organisation), and a key with the admin key's secret was the platform admin. Named by path,
 * never by value.
 */
function reusedSecrets(config: Entry): ValidationProblem[] {
  const firstWith = new Map<string, string>();
  if (str(config.adminKey) && config.adminKey) firstWith.set(config.adminKey, 'adminKey');
  const out: ValidationProblem[] = [];
  for (const [i, k] of entries(config.keys)) {
    if (!str(k.key) || !k.key) continue;
    const first = firstWith.get(k.key);
    if (first) out.push(problem(`keys[${i}].key`, `the same secret as ${first}; every key needs its own`));
    else firstWith.set(k.key, `keys[${i}].key`);
  }
  return out;
}

/** Normalised MCP server entries (name and alias rules, defaults that depend on other fields). */
export interface NormalizedServer {
  index: number;
  name: string;
  alias: string;
  visibility: 'private' | 'public';
}

/** Every reference and uniqueness problem of a config (already env-resolved), plus the normalised servers. */
export function configReferenceProblems(config: Entry): { problems: ValidationProblem[]; servers: NormalizedServer[] } {
  const problems: ValidationProblem[] = [
    ...duplicates(config.organizations, 'id', 'organizations', 'organization'),
    ...duplicates(config.providers, 'id', 'providers', 'provider'),
    ...duplicates(config.guardrails, 'id', 'guardrails', 'guardrail'),
    ...duplicateKeyIds(config.keys),
    ...reusedSecrets(config),
  ];
  const idsOf = (list: unknown) => new Set(entries(list).map(([, e]) => e.id).filter(str));
  const orgs = idsOf(config.organizations);
  const providers = idsOf(config.providers);

  const modelNames = new Set(entries(config.models).map(([, m]) => m.name).filter(str));
  const deploymentIds = new Set<string>();
  const explicitIds = new Set<string>();
  // a name's entries are one load-balanced group: a chat request drawn to an embedding entry went to it
  const groupKind = new Map<string, { kind: unknown; at: number }>();
  for (const [i, m] of entries(config.models)) {
    if (str(m.name)) {
      const kind = m.kind ?? 'chat';
      const first = groupKind.get(m.name);
      if (!first) groupKind.set(m.name, { kind, at: i });
      else if (first.kind !== kind) problems.push(problem(`models[${i}].kind`, `"${String(kind)}", but models[${first.at}] of the same name "${m.name}" is "${String(first.kind)}": the entries of one name are one load-balanced group, all of one kind`));
    }
    if (str(m.provider) && !providers.has(m.provider)) problems.push(problem(`models[${i}].provider`, `unknown provider "${m.provider}"`));
    const id = str(m.id) ? m.id : `${String(m.provider)}/${String(m.model ?? m.name)}`;
    // entries that default to one id are one upstream model; an id written out is one deployment's alone,
    // whichever comes first (a later default id equal to it shared its cooldowns and health unseen)
    if (str(m.id) ? deploymentIds.has(id) : explicitIds.has(id)) problems.push(problem(`models[${i}].id`, `duplicate deployment id "${id}"${str(m.id) ? '' : ' (its default, provider/model)'}`));
    deploymentIds.add(id);
    if (str(m.id)) explicitIds.add(id);
    for (const [j, f] of strings(m.fallbacks)) if (!modelNames.has(f)) problems.push(problem(`models[${i}].fallbacks[${j}]`, `unknown model "${f}"`));
  }
  // a request skips a fallback of another kind (core/routing/plan-candidates.ts): the entry named one that never ran
  for (const [i, m] of entries(config.models)) {
    const kind = m.kind ?? 'chat';
    for (const [j, f] of strings(m.fallbacks)) {
      const target = groupKind.get(f)?.kind;
      if (target !== undefined && target !== kind) problems.push(problem(`models[${i}].fallbacks[${j}]`, `"${f}" is of kind ${String(target)} and this model of kind ${String(kind)}; a fallback must be of its model's kind`));
    }
  }

  const servers: NormalizedServer[] = [];
  const owners = new Set<string>();
  for (const [i, s] of entries(config.mcpServers)) {
    const at = `mcpServers[${i}]`;
    if (!str(s.name)) continue;
    const name = normalizeServerName(s.name);
    if ('error' in name) problems.push(problem(`${at}.name`, name.error));
    const alias = normalizeServerName(str(s.alias) ? s.alias : s.name);
    if ('error' in alias) problems.push(problem(`${at}.alias`, alias.error));
    const org = str(s.org) ? s.org : undefined;
    const visibility = s.visibility === 'private' || s.visibility === 'public' ? s.visibility : org ? 'private' : 'public';
    if (org && !orgs.has(org)) problems.push(problem(`${at}.org`, `unknown organization "${org}"`));
    if (!org && visibility === 'private') problems.push(problem(`${at}.org`, 'a private server needs an owning organization'));
    // `transport` names an MCP transport plugin: checked at boot, once plugins are loaded (core/apis/mcp/server-registry.ts)
    const finalName = 'name' in name ? name.name : s.name;
    const owner = `${org ?? '(platform)'}/${finalName}`;
    if (owners.has(owner)) problems.push(problem(`${at}.name`, `duplicate server name "${finalName}" in organization ${org ?? '(platform)'}`));
    owners.add(owner);
    servers.push({ index: i, name: finalName, alias: 'name' in alias ? alias.name : str(s.alias) ? s.alias : finalName, visibility });
  }

  const known: KnownNames = {
    orgs,
    guardrails: idsOf(config.guardrails),
    servers: new Set(servers.flatMap((s) => [s.name, s.alias])),
  };
  for (const [i, k] of entries(config.keys)) {
    problems.push(...keyReferenceProblems(k, known, `keys[${i}]`));
    // here, not only when the key registry opens: `check` reports it too
    if (str(k.id) && GENERATED_ID.test(k.id)) problems.push(problem(`keys[${i}].id`, `"${k.id}" has the shape of a generated id (key_ and 24 characters); choose another`));
  }
  return { problems, servers };
}
