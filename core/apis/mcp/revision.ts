/**
 * Which MCP revision a client's message speaks, and the shape of our answers in it. `/mcp` serves
 * 2026-07-28 and 2025-11-25 (and the older revisions the SDK 1.x negotiates) on one endpoint; every
 * message goes through the same pipeline whichever revision it came in, only its edges are translated:
 *
 * - 2026-07-28: the message carries `params._meta["io.modelcontextprotocol/protocolVersion"]` (with the
 *   client's capabilities beside it); the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers,
 *   when sent, must agree with the body. Results carry `resultType`; list results (and resource reads) carry the
 *   cache fields `ttlMs: 0` and `cacheScope: "private"` (what a key sees depends on the key).
 * - 2025-11-25 and earlier: no envelope; a legacy `initialize` works as before.
 */
import { GatewayError } from '../../errors/gateway-error';
import { GATEWAY_SERVER_INFO, GATEWAY_CAPABILITIES, GATEWAY_INSTRUCTIONS } from './protocol';
import { legacyTypes, modernClient } from './sdk';
import { MODERN_REVISION } from './upstream-session';
import { clientText } from '../../formats/client-text';
import { isJsonObject } from '../../types/json-object';

/** the 2026-07-28-era revisions we serve (per-request envelope) */
export const MODERN_VERSIONS: readonly string[] = [MODERN_REVISION];
let served: readonly string[] | undefined;
/** every revision we serve, newest first (the SDK's list, so read at the first MCP message: sdk.ts) */
export function servedVersions(): readonly string[] {
  return (served ??= [...MODERN_VERSIONS, ...legacyTypes().SUPPORTED_PROTOCOL_VERSIONS]);
}

/** 2026-07-28 error codes */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;
export const HEADER_MISMATCH = -32020;

/** What the gateway knows of the client from one message. */
export interface ClientRevision {
  modern: boolean;
  /** 2026-07-28: the capabilities the client declared on this request (input requests it can answer) */
  capabilities: Record<string, unknown>;
}

/** A message refused for its revision: the JSON-RPC error (HTTP 400). */
export class RevisionError extends GatewayError {
  constructor(
    readonly rpcCode: number,
    message: string,
    readonly rpcData?: unknown,
  ) {
    super(400, 'invalid_request_error', 'mcp_protocol_version', message);
  }
}

/** The revision of one message, from its `_meta` envelope and the request's headers; throws RevisionError. */
export function clientRevision(method: string, params: Record<string, unknown>, headers: { version?: string; method?: string; name?: string }): ClientRevision {
  const { CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY } = modernClient();
  const meta = isJsonObject(params._meta) ? params._meta : undefined;
  const claimed = meta ? meta[PROTOCOL_VERSION_META_KEY] : undefined;
  if (claimed !== undefined) {
    if (typeof claimed !== 'string' || !MODERN_VERSIONS.includes(claimed)) {
      throw new RevisionError(UNSUPPORTED_PROTOCOL_VERSION, `Unsupported protocol version: ${clientText(claimed)}. This gateway serves ${servedVersions().join(', ')}.`, {
        supported: servedVersions(),
        requested: clientText(claimed),
      });
    }
    if (headers.version !== undefined && headers.version !== claimed) {
      throw new RevisionError(HEADER_MISMATCH, `The MCP-Protocol-Version header (${headers.version}) does not match the request's protocol version (${claimed}).`);
    }
    if (headers.method !== undefined && headers.method !== method) {
      throw new RevisionError(HEADER_MISMATCH, `The Mcp-Method header (${headers.method}) does not match the request's method (${method}).`);
    }
    // what an intermediary routed or filtered on must be what runs: a call named one thing in its header
    // and another in its body would get past a rule written for the header
    const field = NAME_FIELD.get(method);
    if (field !== undefined && headers.name !== undefined && headerValue(headers.name) !== params[field]) {
      throw new RevisionError(HEADER_MISMATCH, `The Mcp-Name header (${clientText(headers.name)}) does not match the request's ${field} (${clientText(params[field])}).`);
    }
    const capabilities = meta![CLIENT_CAPABILITIES_META_KEY];
    return { modern: true, capabilities: isJsonObject(capabilities) ? capabilities : {} };
  }
  if (headers.version !== undefined) {
    if (MODERN_VERSIONS.includes(headers.version) && method !== 'server/discover') {
      throw new RevisionError(-32602, `The MCP-Protocol-Version header names ${headers.version}, but params._meta lacks "${PROTOCOL_VERSION_META_KEY}" and "${CLIENT_CAPABILITIES_META_KEY}".`);
    }
    if (!servedVersions().includes(headers.version)) {
      throw new RevisionError(UNSUPPORTED_PROTOCOL_VERSION, `Unsupported protocol version: ${headers.version}. This gateway serves ${servedVersions().join(', ')}.`, {
        supported: servedVersions(),
        requested: headers.version,
      });
    }
  }
  return { modern: false, capabilities: {} };
}

/** the body field a 2026-07-28 request's `Mcp-Name` header mirrors, by method */
const NAME_FIELD = new Map([
  ['tools/call', 'name'],
  ['prompts/get', 'name'],
  ['resources/read', 'uri'],
]);

/** A header value as 2026-07-28 encodes it: `=?base64?<UTF-8 as Base64>?=` for what a plain header cannot carry. */
function headerValue(value: string): string | undefined {
  const wrapped = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(value);
  if (!wrapped) return value.startsWith('=?base64?') ? undefined : value;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(wrapped[1], 'base64'));
  } catch {
    return undefined;
  }
}

/**
 * 2026-07-28 `tools/call`: each argument the tool's input schema marks `x-mcp-header: <Name>` travels as the
 * `Mcp-Param-<Name>` header too, for intermediaries that route or filter without reading the body. A header
 * that was sent must name the argument's value (else -32020): what runs is the body, so an intermediary's
 * rule applied to the header must hold for it. `sent`: the request's `mcp-param-*` headers, by the
 * lower-cased rest of their name.
 */
export function checkParamHeaders(inputSchema: unknown, args: Record<string, unknown> | undefined, sent: ReadonlyMap<string, string>): void {
  if (sent.size === 0) return;
  for (const { header, path } of mirroredArguments(inputSchema, [])) {
    const given = sent.get(header.toLowerCase());
    const value = argumentAt(args, path);
    if (given === undefined || value === undefined || value === null) continue;
    if (!sameValue(headerValue(given), value)) {
      throw new RevisionError(HEADER_MISMATCH, `The Mcp-Param-${header} header (${clientText(given)}) does not match the argument ${path.join('.')} (${clientText(value)}).`);
    }
  }
}

/** The arguments an input schema mirrors in headers: `x-mcp-header` on properties reached through `properties` alone. */
function mirroredArguments(schema: unknown, path: string[]): { header: string; path: string[] }[] {
  const properties = isJsonObject(schema) ? schema.properties : undefined;
  if (!isJsonObject(properties)) return [];
  return Object.entries(properties).flatMap(([key, property]) => {
    if (!isJsonObject(property)) return [];
    const header = property['x-mcp-header'];
    const here = typeof header === 'string' && header !== '' ? [{ header, path: [...path, key] }] : [];
    return [...here, ...mirroredArguments(property, [...path, key])];
  });
}

function argumentAt(args: unknown, path: string[]): unknown {
  let value = args;
  for (const key of path) {
    if (!isJsonObject(value) || !Object.hasOwn(value, key)) return undefined;
    value = value[key];
  }
  return value;
}

/** a header's text against an argument's value: strings as they are, numbers by value, booleans as true/false */
function sameValue(text: string | undefined, value: unknown): boolean {
  if (text === undefined) return false;
  if (typeof value === 'string') return text === value;
  if (typeof value === 'boolean') return text === String(value);
  if (typeof value === 'number') return text.trim() !== '' && Number(text) === value;
  return true;
}

/** `server/discover`: the same answer with or without a key (nothing in it depends on the caller). */
export function discoverResult() {
  return {
    supportedVersions: [MODERN_REVISION, legacyTypes().LATEST_PROTOCOL_VERSION],
    capabilities: GATEWAY_CAPABILITIES,
    instructions: GATEWAY_INSTRUCTIONS,
    ttlMs: 0,
    cacheScope: 'public',
  };
}

/**
 * The tools a client's revision can carry. 2026-07-28 lets a tool's structured output be any JSON value;
 * 2025-11-25 only an object, and its clients refuse a whole list over one tool whose output schema says
 * otherwise (such a tool's results would not pass them either): an older client is not shown it.
 */
export function toolsFor<T extends Record<string, unknown>>(client: ClientRevision, tools: T[]): T[] {
  if (client.modern) return tools;
  return tools.filter(olderClientCarries);
}

/** whether a 2025-11-25 client can carry a tool's results: its output schema, if any, describes an object */
export function olderClientCarries(tool: Record<string, unknown>): boolean {
  return tool.outputSchema === undefined || (isJsonObject(tool.outputSchema) && tool.outputSchema.type === 'object');
}

/** results a 2026-07-28 client may cache: ours depend on the key, so they are private and fresh */
const CACHEABLE = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'resources/read']);

/** the methods whose result is an upstream's, relayed */
const RELAYED = new Set(['tools/call', 'prompts/get', 'resources/read']);

/** A result in the client's revision: `resultType` (and the cache fields) for 2026-07-28, none for older. */
export function resultFor(client: ClientRevision, method: string, result: unknown): unknown {
  if (!isJsonObject(result)) return result;
  const serverInfoKey = modernClient().SERVER_INFO_META_KEY;
  if (!client.modern) {
    // a 2026-07-28 upstream's fields have no meaning in 2025-11-25, and its cache hints (public, an hour)
    // would be wrong for what the gateway serves even there: a shared cache honouring them would hand one
    // key's answer to another. Nor is the upstream the server this client talks to.
    const { resultType: _type, ttlMs: _ttl, cacheScope: _scope, ...rest } = result;
    if (isJsonObject(rest._meta) && Object.hasOwn(rest._meta, serverInfoKey)) {
      const { [serverInfoKey]: _info, ...meta } = rest._meta;
      if (Object.keys(meta).length > 0) rest._meta = meta;
      else delete rest._meta;
    }
    return rest;
  }
  const out: Record<string, unknown> = { ...result, resultType: result.resultType ?? 'complete' };
  if (RELAYED.has(method)) {
    // an upstream's cache hints on a relayed answer (a tool result or prompt it calls public for an hour,
    // an input request) describe its answer, not the guarded one this key gets: only ours go out
    delete out.ttlMs;
    delete out.cacheScope;
  }
  if (out.resultType === 'complete' && CACHEABLE.has(method)) {
    // an upstream's own hints (a resource it calls public for an hour) do not hold for what the gateway
    // serves: scope, tool states and guardrails make it one key's answer, so a shared cache must not reuse it
    out.ttlMs = 0;
    out.cacheScope = 'private';
  }
  // the client talks to the gateway: the server info in the result is ours, not an upstream's
  out._meta = { ...(isJsonObject(result._meta) ? result._meta : {}), [serverInfoKey]: GATEWAY_SERVER_INFO };
  return out;
}
