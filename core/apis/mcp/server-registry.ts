/**
 * The MCP server registry, persisted in the store: servers from the config file (upserted at boot, their
 * secrets kept in memory only, never written to the store) and servers registered through the management
 * API (their secrets in a separate collection that no read path returns). Reads are served from memory;
 * `reload()` picks up changes another gateway instance made to a shared store.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { McpAuthConfig, McpServerConfig } from '../../config/types';
import { ConfigError, GatewayError, InvalidRequestError, NotFoundError, PermissionError } from '../../errors/gateway-error';
import { knownSecrets } from '../../errors/scrub';
import type { Clock } from '../../plugins/contracts';
import { sealedCollection, type SealedCollection } from '../../store/secrets/sealed-collection';
import type { Collection, StoreBackend } from '../../store/store-backend';
import { bindSecretsToOrigin, droppedMessage, DROPPED_NOTICE_PREFIX, type BoundSecret } from './credential-binding';
import { egressViolation, type HostLookup } from '../../upstream/egress';
import { GATEWAY_PROXY } from './gateway-proxy-name';
import { normalizeServerName } from './naming';
import { DEFAULT_API_KEY_HEADER, redactUrl, type McpServerRecord, type McpServerSecrets } from './server-record';
import { lookupFrom } from '../../lookup/own-keys';
import type { ChangeEvent } from '../../store/events/change-events';
import { disableTool, emptyToolTable, enableTool, reviveToolTables, toolState } from './tool-states';
import { transportIdOf, unknownTransport, DEFAULT_MCP_TRANSPORT } from './transports';
import { baseUpstreamHeaders, basicCredentials } from './upstream-headers';

/** Who is changing the registry through the management API. */
export interface RegistryActor {
  /** the platform admin (adminKey) may act on every organisation and publish public servers */
  platformAdmin: boolean;
  /** an organisation admin's own organisation */
  org: string | null;
}

/** The management API's register body: the config entry's shape, secrets as plain strings. */
export type McpServerInput = McpServerConfig<string>;

export interface RegistryOptions {
  allowPrivateUpstreams: boolean;
  /** resolves host names for the egress rule (tests inject one) */
  lookup?: HostLookup;
  /** does this organisation exist? (organisations live outside the MCP registry) */
  orgExists?: (org: string) => boolean | Promise<boolean>;
  /** the MCP transport plugin ids a server may name (default: the built-in streamable-HTTP one) */
  transports?: readonly string[];
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/**
 * A header value the HTTP client will send (RFC 9110 field-value: no line break or other control
 * character): any other is refused by the client at every request, and the server read as unreachable.
 */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const UNSENDABLE_VALUE = 'must be sendable as an HTTP header value (no line break or control character)';
/**
 * A valid token that fetch's `Headers` (which the MCP transport sends through) silently drops: it builds
 * its header list in a plain object. Refused, so a configured header is never lost without a word.
 */
const UNSENDABLE_HEADERS = new Set(['__proto__']);
/** headers the gateway or HTTP itself controls; a static or forwarded value may not replace them */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'accept', 'connection', 'transfer-encoding', 'mcp-session-id', 'mcp-protocol-version', 'cookie']);

/** reads and compare-and-set writes an amend tries before it gives up its change (see amend) */
const AMEND_ATTEMPTS = 5;

export class McpServerRegistry {
  private readonly records = new Map<string, McpServerRecord>();
  /**
   * How often each server's copy here was written (saved through this instance, or read again from the
   * store): amend keeps a copy that changed while its own write was on its way (see amend).
   */
  private readonly copyWrites = new Map<string, number>();
  private readonly secrets = new Map<string, McpServerSecrets>();
  private readonly headerCache = new Map<string, Record<string, string>>();
  private readonly scrubbedSecrets = knownSecrets.group();
  private readonly recordStore: Collection<McpServerRecord>;
  /** encrypted at rest (store/secrets): the backend never holds a credential in clear */
  private readonly secretStore: SealedCollection<McpServerSecrets>;
  /** servers whose stored secrets the loaded key cannot decrypt: calls to them fail with this */
  private readonly unreadable = new Map<string, Error>();
  /** called after a server's URL, headers or existence changed (the pool drops its connection) */
  onChange: (id: string) => void = () => undefined;
  /** told of every change made through this instance, after it is stored (the other instances reload) */
  announce: (event: ChangeEvent) => void = () => undefined;

  constructor(
    store: StoreBackend,
    private readonly clock: Clock,
    private readonly options: RegistryOptions,
  ) {
    this.recordStore = store.collection<McpServerRecord>('mcp_servers');
    this.secretStore = sealedCollection<McpServerSecrets>(store, 'mcp_server_secrets');
  }

  /** Boot: load what the store holds, then upsert the config file's servers (secrets in memory only). */
  async init(configServers: McpServerConfig<string>[]): Promise<void> {
    // At boot a secret the key cannot open stops the start with the reason (wrong or missing key).
    await this.reload(true);
    // secrets an older version stored in clear are encrypted now
    await this.secretStore.sealUnsealed();
    const configIds = new Set<string>();
    for (const [i, server] of configServers.entries()) {
      const id = configServerId(server.org ?? null, server.name);
      configIds.add(id);
      const alias = server.alias ?? server.name;
      const own = ownConfigProblem(server, i);
      if (own) throw own;
      const clash = this.list().find((r) => r.id !== id && (r.source === 'api' || configIds.has(r.id)) && r.org === (server.org ?? null) && (r.name === server.name || r.alias.toLowerCase() === alias.toLowerCase()));
      if (clash) throw nameClash(server, i, clash.name, clash.source === 'api' ? 'registered through the management API' : 'in this config file');
      const badTransport = unknownTransport(transportIdOf(server.transport), this.transportIds);
      if (badTransport) throw new ConfigError(`mcpServers[${i}].transport`, badTransport);
      const existing = this.records.get(id);
      const record = this.buildRecord(id, server, 'config', false, existing);
      if (existing && JSON.stringify(existing.allowedTools ?? null) !== JSON.stringify(record.allowedTools ?? null)) {
        // The operator changed the allow list in the file: the next discovery applies it afresh.
        delete record.discoveredAt;
        for (const name of Object.keys(record.tools)) if (!(record.allowedTools ?? []).includes(name)) delete record.tools[name];
      }
      this.secrets.set(id, secretsOf(server));
      this.changed(id);
      await this.save(record);
    }
    // A server removed from the config file is removed from the registry too.
    for (const record of [...this.records.values()]) {
      if (record.source === 'config' && !configIds.has(record.id)) await this.delete(record.id);
    }
  }

  /**
   * Re-read records and API secrets from the store (another instance may have changed them). A secret
   * that does not decrypt fails the boot (`strict`); later it makes calls to that server fail instead.
   */
  async reload(strict = false): Promise<void> {
    const stored = await this.recordStore.all();
    const seen = new Set<string>();
    for (const record of stored) {
      reviveToolTables(record);
      seen.add(record.id);
      const before = this.records.get(record.id);
      this.keepCopy(record);
      if (record.source === 'api' && (!before || before.updatedAt !== record.updatedAt || !this.secrets.has(record.id))) {
        try {
          const secrets = await this.secretStore.get(record.id);
          // header names come from outside: a null-prototype table again after the JSON round trip
          if (secrets) this.secrets.set(record.id, { ...secrets, staticHeaders: lookupFrom(secrets.staticHeaders) });
          this.unreadable.delete(record.id);
        } catch (err) {
          if (strict) throw err;
          // never keep the old secrets for a record that changed: its URL may have moved
          this.secrets.delete(record.id);
          this.unreadable.set(record.id, err as Error);
        }
        this.changed(record.id);
      }
    }
    for (const id of [...this.records.keys()]) {
      if (!seen.has(id) && this.records.get(id)!.source === 'api') {
        this.dropCopy(id);
        this.secrets.delete(id);
        this.changed(id);
      }
    }
  }

  /**
   * Change one record as background work does (a health check's discovery and status), without losing a
   * change made meanwhile elsewhere: the change is applied to the record as stored and written only if
   * the store still holds what was read (compare and set), else read and applied again. An operator's
   * decision made through another instance between this instance's read and its write (a tool turned
   * off) is kept, not overwritten by a check that started before it. The local copy then matches what
   * was stored. Undefined when the server is gone: removed here, or (an API server no longer stored)
   * removed through another instance, which a write here must not bring back. When other writes keep
   * winning, the local copy is answered unchanged and nothing is written (the next check tries again).
   * When the local copy was written while the compare-and-set was on its way (an operator's change made
   * here, whose own write reaches the store after this one, or a reload), that copy is the newer one and
   * is kept as it is; the change is not applied to it.
   */
  async amend(id: string, change: (record: McpServerRecord) => void): Promise<McpServerRecord | undefined> {
    for (let attempt = 0; attempt < AMEND_ATTEMPTS; attempt++) {
      const local = this.records.get(id);
      if (!local) return undefined;
      const writes = this.copyWrites.get(id);
      const stored = await this.recordStore.get(id);
      if (!stored) {
        if (local.source === 'api') return undefined;
        change(local);
        await this.save(local);
        return local;
      }
      const next = reviveToolTables(structuredClone(stored));
      change(next);
      if (await this.recordStore.replace(id, stored, next)) {
        const current = this.records.get(id);
        if (!current || this.copyWrites.get(id) !== writes) return current;
        return reviveToolTables(Object.assign(current, next));
      }
    }
    return this.records.get(id);
  }

  list(): McpServerRecord[] {
    return [...this.records.values()];
  }

  get(id: string): McpServerRecord | undefined {
    return this.records.get(id);
  }

  /** The servers an actor may manage: every one for the platform admin, its organisation's private ones otherwise. */
  listFor(actor: RegistryActor): McpServerRecord[] {
    return this.list().filter((r) => canManage(actor, r));
  }

  /** A server the actor may manage, by id (or by name within the actor's organisation); else 404. */
  getFor(actor: RegistryActor, idOrName: string): McpServerRecord {
    // By name: within the organisation admin's own organisation, or among platform-owned servers. An id the
    // actor may not manage is no answer: a config server's id is derived from its organisation and name, so
    // an admin whose server is named like it would get a 404 that says the other organisation has that server.
    const byId = this.records.get(idOrName);
    const record = byId && canManage(actor, byId) ? byId : this.list().find((r) => r.name === idOrName && r.org === (actor.platformAdmin ? null : actor.org));
    if (!record || !canManage(actor, record)) throw new NotFoundError(`No MCP server "${idOrName}".`, 'mcp_server_not_found');
    return record;
  }

  /** Stored credential and static headers of a server, resolved: for upstream calls only. */
  upstreamHeaders(id: string): Record<string, string> {
    this.throwIfUnreadable(id);
    let headers = this.headerCache.get(id);
    if (!headers) {
      const secrets = this.secrets.get(id) ?? { auth: { type: 'none' as const }, staticHeaders: {} };
      headers = baseUpstreamHeaders(secrets);
      this.headerCache.set(id, headers);
    }
    return headers;
  }

  /** The URL to connect to: the full one when the record shows it redacted. */
  upstreamUrl(id: string): string {
    return this.secrets.get(id)?.url ?? this.records.get(id)?.url ?? '';
  }

  /** Every stored secret value, so tests and log scrubbing can check none leaks. */
  secretValues(): string[] {
    const values: string[] = [];
    for (const s of this.secrets.values()) {
      values.push(...Object.values(s.staticHeaders));
      if (s.auth.type === 'api_key') values.push(s.auth.key);
      if (s.auth.type === 'bearer') values.push(s.auth.token);
      if (s.auth.type === 'basic') values.push(s.auth.username, s.auth.password, basicCredentials(s.auth.username, s.auth.password));
      if (s.url) values.push(...urlSecrets(s.url));
    }
    return values.filter((v) => v.length > 0);
  }

  /** Must connections to this server stay on public addresses (egress rule)? */
  publicOnly(record: McpServerRecord): boolean {
    return record.egressRestricted && !this.options.allowPrivateUpstreams;
  }

  /** Is a new connection to this server allowed right now (egress rule)? An error message if not. */
  async egressCheck(id: string): Promise<string | undefined> {
    const record = this.records.get(id);
    if (!record || !record.egressRestricted || this.options.allowPrivateUpstreams) return undefined;
    return egressViolation(record.url, this.options.lookup);
  }

  async register(actor: RegistryActor, input: McpServerInput): Promise<McpServerRecord> {
    const normalized = await this.validateInput(actor, input, undefined);
    const id = `mcp_${randomBytes(8).toString('hex')}`;
    const record = this.buildRecord(id, normalized, 'api', !actor.platformAdmin);
    this.secrets.set(id, secretsOf(normalized));
    await this.secretStore.set(id, secretsOf(normalized));
    this.changed(id);
    await this.save(record);
    this.announce({ type: 'mcp-server.changed', serverId: id, change: 'added' });
    return record;
  }

  /**
   * Change a server. Credentials are bound to the URL's origin (credential-binding.ts): moving the server
   * to another origin drops its stored credential and static header values unless the patch sets them,
   * and `droppedSecrets` says what went.
   */
  /** `removed`: optional fields the PATCH set to `null` (mcp-routes.ts says which may be). */
  async update(actor: RegistryActor, idOrName: string, patch: Partial<McpServerInput>, removed: readonly string[] = []): Promise<{ record: McpServerRecord; droppedSecrets: BoundSecret[] }> {
    const existing = this.getFor(actor, idOrName);
    if (existing.source === 'config') {
      throw new InvalidRequestError(`MCP server "${existing.name}" is defined in the config file; change it there.`, 'mcp_server_from_config');
    }
    // an update that would keep secrets the key cannot read must not overwrite them with nothing
    if (patch.auth === undefined || patch.staticHeaders === undefined) this.throwIfUnreadable(existing.id);
    const current = this.secrets.get(existing.id) ?? { auth: { type: 'none' as const }, staticHeaders: {} };
    const kept = bindSecretsToOrigin(existing.url, patch as Parameters<typeof bindSecretsToOrigin>[1], current);
    const merged: McpServerInput = {
      name: patch.name ?? existing.name,
      alias: removed.includes('alias') ? undefined : (patch.alias ?? (patch.name !== undefined && existing.alias === existing.name ? undefined : existing.alias)),
      // the record holds the URL redacted; the full one (password, query values) is kept with the secrets.
      // The redacted URL sent back as it was read (a console edit, a script's read-modify-write) is no
      // change: taken as the new URL, it replaced the token with "***" and the server stopped answering.
      url: patch.url !== undefined && patch.url !== existing.url ? patch.url : (current.url ?? existing.url),
      transport: patch.transport ?? existing.transport,
      org: existing.org ?? undefined,
      visibility: patch.visibility ?? existing.visibility,
      description: removed.includes('description') ? undefined : (patch.description ?? existing.description),
      // write-only values: absent in the patch means "keep what is stored" (on the same origin only)
      auth: kept.auth,
      staticHeaders: kept.staticHeaders,
      forwardHeaders: patch.forwardHeaders ?? existing.forwardHeaders,
      allowedTools: patch.allowedTools ?? existing.allowedTools,
      pricePerCall: removed.includes('pricePerCall') ? undefined : (patch.pricePerCall ?? existing.pricePerCall),
      toolPrices: removed.includes('toolPrices') ? undefined : (patch.toolPrices ?? existing.toolPrices),
    };
    if ('org' in patch && (patch.org ?? null) !== existing.org) throw new InvalidRequestError('A server cannot move to another organisation.', 'invalid_request', { param: 'org' });
    const normalized = await this.validateInput(actor, merged, existing, patch.url !== undefined && patch.url !== existing.url);
    // The egress rule follows whoever set the URL: an organisation admin's URL is checked, the platform admin's trusted.
    const egressRestricted = patch.url !== undefined && patch.url !== existing.url ? !actor.platformAdmin : existing.egressRestricted;
    const record = this.buildRecord(existing.id, normalized, 'api', egressRestricted, existing);
    if (patch.auth !== undefined || patch.staticHeaders !== undefined) record.notices = record.notices.filter((n) => !n.startsWith(DROPPED_NOTICE_PREFIX));
    if (kept.dropped.length > 0) record.notices = [...record.notices, `${DROPPED_NOTICE_PREFIX} ${droppedMessage(kept.dropped)}`];
    if (patch.allowedTools) {
      const allowed = new Set(patch.allowedTools);
      for (const [name, state] of Object.entries(record.tools)) allowed.has(name) ? enableTool(state) : disableTool(state);
    }
    this.secrets.set(record.id, secretsOf(normalized));
    this.unreadable.delete(record.id);
    await this.secretStore.set(record.id, secretsOf(normalized));
    // the change's listeners read the updated record (a check of the old URL is stopped: health-monitor.ts)
    this.keepCopy(record);
    this.changed(record.id);
    await this.recordStore.set(record.id, record);
    this.announce({ type: 'mcp-server.changed', serverId: record.id, change: 'updated' });
    return { record, droppedSecrets: kept.dropped };
  }

  async remove(actor: RegistryActor, idOrName: string): Promise<McpServerRecord> {
    const existing = this.getFor(actor, idOrName);
    if (existing.source === 'config') {
      throw new InvalidRequestError(`MCP server "${existing.name}" is defined in the config file; remove it there.`, 'mcp_server_from_config');
    }
    await this.delete(existing.id);
    this.announce({ type: 'mcp-server.changed', serverId: existing.id, change: 'removed' });
    return existing;
  }

  async setToolEnabled(actor: RegistryActor, idOrName: string, tool: string, enabled: boolean): Promise<McpServerRecord> {
    const record = this.getFor(actor, idOrName);
    const state = toolState(record, tool);
    if (!state) throw new NotFoundError(`MCP server "${record.name}" has no discovered tool "${tool}".`, 'mcp_tool_not_found');
    if (enabled) {
      enableTool(state);
      record.notices = record.notices.filter((n) => !n.includes(`tool "${tool}"`));
    } else disableTool(state);
    await this.save(record);
    this.announce({ type: 'tool-state.changed', serverId: record.id, tool, enabled });
    return record;
  }

  /**
   * Keep a record here and write it to the store whole (the last writer wins): a registration, an update,
   * an operator's tool decision, a config server at boot. Background work (health checks) goes through
   * amend instead, which does not overwrite a change made meanwhile.
   */
  async save(record: McpServerRecord): Promise<void> {
    this.keepCopy(record);
    await this.recordStore.set(record.id, record);
  }

  private async delete(id: string): Promise<void> {
    this.dropCopy(id);
    this.secrets.delete(id);
    this.unreadable.delete(id);
    await this.recordStore.delete(id);
    await this.secretStore.delete(id);
    this.changed(id);
  }

  private keepCopy(record: McpServerRecord): void {
    this.records.set(record.id, record);
    this.copyWrites.set(record.id, (this.copyWrites.get(record.id) ?? 0) + 1);
  }

  private dropCopy(id: string): void {
    this.records.delete(id);
    this.copyWrites.delete(id);
  }

  private get transportIds(): readonly string[] {
    return this.options.transports ?? [DEFAULT_MCP_TRANSPORT];
  }

  private throwIfUnreadable(id: string): void {
    const unreadable = this.unreadable.get(id);
    if (!unreadable) return;
    const name = this.records.get(id)?.name ?? id;
    throw new GatewayError(
      500,
      'server_error',
      'mcp_secret_unreadable',
      `The stored credentials of MCP server "${name}" cannot be decrypted with the gateway's secret key; the operator must load the key they were stored with (GATEWAY_SECRET_KEY or the key file).`,
      { cause: unreadable },
    );
  }

  private changed(id: string): void {
    this.headerCache.delete(id);
    // every change of a server's secrets passes here: keep the scrubber's copy of them current
    this.scrubbedSecrets.replace(this.secretValues());
    this.onChange(id);
  }

  /** The gateway is closing: its servers' secrets no longer need scrubbing. */
  dispose(): void {
    this.scrubbedSecrets.release();
  }

  private buildRecord(id: string, input: McpServerInput, source: 'config' | 'api', egressRestricted: boolean, existing?: McpServerRecord): McpServerRecord {
    const now = new Date(this.clock.now()).toISOString();
    const auth = input.auth ?? { type: 'none' as const };
    const record: McpServerRecord = {
      id,
      name: input.name,
      alias: input.alias ?? input.name,
      url: redactUrl(input.url),
      transport: transportIdOf(input.transport),
      org: input.org ?? null,
      visibility: input.visibility ?? (input.org ? 'private' : 'public'),
      description: input.description,
      authType: auth.type,
      apiKeyHeader: auth.type === 'api_key' ? (auth.header ?? DEFAULT_API_KEY_HEADER).toLowerCase() : undefined,
      forwardHeaders: (input.forwardHeaders ?? []).map((h) => h.toLowerCase()),
      staticHeaderNames: Object.keys(input.staticHeaders ?? {}).map((h) => h.toLowerCase()),
      allowedTools: input.allowedTools,
      pricePerCall: input.pricePerCall,
      toolPrices: input.toolPrices && lookupFrom(input.toolPrices),
      source,
      egressRestricted,
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
      discoveredAt: existing?.discoveredAt,
      tools: existing?.tools ?? emptyToolTable(),
      notices: existing?.notices ?? [],
      health: existing?.health ?? { status: 'unknown', consecutiveFailures: 0 },
    };
    for (const key of Object.keys(record) as (keyof McpServerRecord)[]) if (record[key] === undefined) delete record[key];
    return record;
  }

  /** Validate and normalise a management-API body (contracts §2 rules, ownership, egress). */
  private async validateInput(actor: RegistryActor, input: McpServerInput, existing: McpServerRecord | undefined, urlChanged = true): Promise<McpServerInput> {
    if (!input || typeof input !== 'object') throw new InvalidRequestError('The body must be a JSON object.');
    const bad = (param: string, message: string) => new InvalidRequestError(`${param}: ${message}`, 'invalid_request', { param });
    if (typeof input.name !== 'string') throw bad('name', 'is required');
    const name = normalizeServerName(input.name);
    if ('error' in name) throw bad('name', name.error);
    const alias = normalizeServerName(input.alias ?? name.name);
    if ('error' in alias) throw bad('alias', alias.error);
    // the built-in server of models: x-mcp-servers and `<alias>-<tool>` names must keep meaning that one
    if (name.name.toLowerCase() === GATEWAY_PROXY) throw bad('name', `"${GATEWAY_PROXY}" is the gateway's own MCP server; choose another name`);
    if (alias.name.toLowerCase() === GATEWAY_PROXY) throw bad('alias', `"${GATEWAY_PROXY}" is the gateway's own MCP server; choose another alias`);
    if (typeof input.url !== 'string' || !/^https?:\/\//i.test(input.url)) throw bad('url', 'must be the http(s) URL of a streamable-HTTP MCP endpoint');
    if (!URL.canParse(input.url)) throw bad('url', 'is not a valid URL');
    if (input.transport !== undefined) {
      if (typeof input.transport !== 'string') throw bad('transport', 'must be the id of an MCP transport plugin');
      const badTransport = unknownTransport(transportIdOf(input.transport), this.transportIds);
      if (badTransport) throw bad('transport', badTransport);
    }
    let org = input.org ?? null;
    let visibility = input.visibility;
    if (!actor.platformAdmin) {
      if (org !== null && org !== actor.org) throw new PermissionError('An organisation admin may only register servers of its own organisation.');
      if (visibility === 'public') throw new PermissionError('Only the platform admin may publish a public MCP server.');
      org = actor.org;
      visibility = 'private';
    }
    visibility ??= org ? 'private' : 'public';
    if (visibility === 'private' && !org) throw bad('org', 'a private server needs an owning organisation');
    if (org && this.options.orgExists && !(await this.options.orgExists(org))) throw bad('org', `unknown organization "${org}"`);
    const duplicate = this.list().find((r) => r.id !== existing?.id && r.org === org && r.name === name.name);
    if (duplicate) throw new GatewayError(409, 'invalid_request_error', 'mcp_server_exists', `An MCP server named "${name.name}" already exists in ${org ? `organization ${org}` : 'the platform'}.`, { param: 'name' });
    // aliases prefix tool names and name per-user headers (case-insensitive), so they must be unique within an owner too, case aside
    const sameAlias = this.list().find((r) => r.id !== existing?.id && r.org === org && r.alias.toLowerCase() === alias.name.toLowerCase());
    if (sameAlias) throw new GatewayError(409, 'invalid_request_error', 'mcp_server_exists', `The alias "${alias.name}" is already used by MCP server "${sameAlias.name}" in ${org ? `organization ${org}` : 'the platform'}.`, { param: 'alias' });
    validateAuth(input.auth, bad);
    validateHeaderNames(input.forwardHeaders ?? [], 'forwardHeaders', bad);
    if (input.staticHeaders !== undefined) {
      if (typeof input.staticHeaders !== 'object' || Array.isArray(input.staticHeaders)) throw bad('staticHeaders', 'must be an object of header names to values');
      validateHeaderNames(Object.keys(input.staticHeaders), 'staticHeaders', bad);
      for (const [k, v] of Object.entries(input.staticHeaders)) {
        if (typeof v !== 'string') throw bad(`staticHeaders.${k}`, 'must be a string');
        if (!HEADER_VALUE.test(v)) throw bad(`staticHeaders.${k}`, UNSENDABLE_VALUE);
      }
    }
    if (input.allowedTools !== undefined && (!Array.isArray(input.allowedTools) || input.allowedTools.some((t) => typeof t !== 'string'))) throw bad('allowedTools', 'must be an array of tool names');
    if (input.pricePerCall !== undefined && !(typeof input.pricePerCall === 'number' && input.pricePerCall >= 0)) throw bad('pricePerCall', 'must be a non-negative number');
    if (input.toolPrices !== undefined) {
      for (const [k, v] of Object.entries(input.toolPrices)) if (!(typeof v === 'number' && v >= 0)) throw bad(`toolPrices.${k}`, 'must be a non-negative number');
    }
    if (!actor.platformAdmin && urlChanged && !this.options.allowPrivateUpstreams) {
      const violation = await egressViolation(input.url, this.options.lookup);
      if (violation) throw bad('url', violation);
    }
    return { ...input, name: name.name, alias: alias.name, org: org ?? undefined, visibility };
  }
}

/**
 * An organisation admin manages its organisation's private servers only. A server the platform published
 * for everyone stays the platform admin's even when its `org` names the organisation that owns it: removed,
 * its tools hidden or a changed tool definition accepted by that organisation's admin, it would change for
 * every organisation.
 */
export function canManage(actor: RegistryActor, record: McpServerRecord): boolean {
  return actor.platformAdmin || (actor.org !== null && record.org === actor.org && record.visibility === 'private');
}

/** Config servers get a stable id from their owner and name, so their tool states survive restarts. */
export function configServerId(org: string | null, name: string): string {
  return `mcp_${createHash('sha256').update(`${org ?? ''}/${name}`).digest('hex').slice(0, 16)}`;
}

function secretsOf(input: McpServerInput): McpServerSecrets {
  const secrets: McpServerSecrets = { auth: (input.auth ?? { type: 'none' }) as McpAuthConfig<string>, staticHeaders: lookupFrom(input.staticHeaders) };
  // a password or query values in the URL (some hosted servers take a token there) are secrets too
  if (redactUrl(input.url) !== input.url) secrets.url = input.url;
  return secrets;
}

/**
 * The parts of a URL that reads show as `***`: the password (or a user name written alone) and every query
 * value, and the user part as the transport sends it (HTTP Basic, encoded).
 */
function urlSecrets(url: string): string[] {
  const u = new URL(url);
  const username = decodeURIComponent(u.username);
  const password = decodeURIComponent(u.password);
  const userPart = u.username || u.password ? [u.password ? password : username, basicCredentials(username, password)] : [];
  return [...userPart, ...u.searchParams.values()];
}

function validateAuth(auth: unknown, bad: (param: string, message: string) => Error): void {
  if (auth === undefined) return;
  const a = auth as Record<string, unknown>;
  const str = (field: string) => {
    if (typeof a[field] !== 'string' || a[field] === '') throw bad(`auth.${field}`, 'is required');
  };
  switch (a?.type) {
    case 'none':
      return;
    case 'api_key':
      str('key');
      if (!HEADER_VALUE.test(a.key as string)) throw bad('auth.key', UNSENDABLE_VALUE);
      validateAuthHeader(a.header, bad);
      return;
    case 'bearer':
      str('token');
      if (!HEADER_VALUE.test(a.token as string)) throw bad('auth.token', UNSENDABLE_VALUE);
      return;
    case 'basic':
      str('username');
      return str('password');
    default:
      throw bad('auth.type', 'must be one of none, api_key, bearer, basic');
  }
}

/** `auth.header` of an api_key credential (names are sent lower-cased: `__PROTO__` is `__proto__`) */
function validateAuthHeader(header: unknown, bad: (param: string, message: string) => Error): void {
  if (header !== undefined && (typeof header !== 'string' || !HEADER_NAME.test(header) || UNSENDABLE_HEADERS.has(header.toLowerCase()))) throw bad('auth.header', 'must be a header name');
}

/** What the boot refuses in one server of the config file by itself: the built-in server's name, a URL that does not parse, header names. */
function ownConfigProblem(server: McpServerConfig, i: number): ConfigError | undefined {
  const alias = server.alias ?? server.name;
  if ([server.name, alias].some((n) => n.toLowerCase() === GATEWAY_PROXY)) {
    return new ConfigError(`mcpServers[${i}]`, `"${GATEWAY_PROXY}" is the gateway's own MCP server; give "${server.name}" another name and alias`);
  }
  // the schema sees only the http(s) prefix: a port past 65535 or a bad host failed the start with a bare
  // "Invalid URL" naming no field, and check said valid. Not quoted: a URL may carry a password
  if (!URL.canParse(server.url)) return new ConfigError(`mcpServers[${i}].url`, 'is not a valid URL');
  try {
    validateConfigHeaders(server, (param, message) => new ConfigError(`mcpServers[${i}].${param}`, message));
  } catch (err) {
    return err as ConfigError;
  }
  return undefined;
}

function nameClash(server: McpServerConfig, i: number, other: string, where: string): ConfigError {
  return new ConfigError(`mcpServers[${i}]`, `the name or alias of "${server.name}" is already used by MCP server "${other}" (${where}) in ${server.org ? `organization ${server.org}` : 'the platform'}; rename one of them`);
}

/**
 * For `check`: what the boot refuses in the config file's servers among themselves (the store's servers
 * are not opened), each problem once; `init` applies the same rules.
 */
export function configServerProblems(servers: readonly McpServerConfig[]): string[] {
  const problems: string[] = [];
  for (const [i, server] of servers.entries()) {
    const own = ownConfigProblem(server, i);
    if (own) problems.push(own.message);
    const alias = (server.alias ?? server.name).toLowerCase();
    const clash = servers.slice(0, i).find((r) => (r.org ?? null) === (server.org ?? null) && (r.name === server.name || (r.alias ?? r.name).toLowerCase() === alias));
    if (clash) problems.push(nameClash(server, i, clash.name, 'in this config file').message);
  }
  return problems;
}

/** The header names and values of a server from the config file, checked as the management API checks them. */
function validateConfigHeaders(server: McpServerConfig, bad: (param: string, message: string) => Error): void {
  if (server.auth?.type === 'api_key') validateAuthHeader(server.auth.header, bad);
  validateHeaderNames(server.forwardHeaders ?? [], 'forwardHeaders', bad);
  if (server.staticHeaders) validateHeaderNames(Object.keys(server.staticHeaders), 'staticHeaders', bad);
  // values as env() resolved them: one read from a file may end in its line break, which the HTTP client
  // refused at every request, so the server only ever read as unreachable
  const unsendable = (value: unknown) => typeof value === 'string' && !HEADER_VALUE.test(value);
  if (server.auth?.type === 'api_key' && unsendable(server.auth.key)) throw bad('auth.key', UNSENDABLE_VALUE);
  if (server.auth?.type === 'bearer' && unsendable(server.auth.token)) throw bad('auth.token', UNSENDABLE_VALUE);
  for (const [name, value] of Object.entries(server.staticHeaders ?? {})) if (unsendable(value)) throw bad(`staticHeaders.${name}`, UNSENDABLE_VALUE);
}

function validateHeaderNames(names: unknown, param: string, bad: (param: string, message: string) => Error): void {
  if (!Array.isArray(names)) throw bad(param, 'must be an array of header names');
  for (const name of names) {
    if (typeof name !== 'string' || !HEADER_NAME.test(name)) throw bad(param, `"${String(name)}" is not a header name`);
    if (UNSENDABLE_HEADERS.has(name.toLowerCase())) throw bad(param, `"${name}" cannot be sent as a header by the HTTP client; choose another name`);
    if (RESERVED_HEADERS.has(name.toLowerCase())) throw bad(param, `"${name}" is set by the gateway and cannot be configured`);
  }
}
