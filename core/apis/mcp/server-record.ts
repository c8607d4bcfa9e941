/**
 * What the gateway stores about one upstream MCP server. The record never holds a credential or a static
 * header value: those live apart (`McpServerSecrets`), so no read path can leak them by accident.
 */
import type { McpAuthConfig } from '../../config/types';
import { transportIdOf } from './transports';

export type ToolStatus = 'enabled' | 'hidden';

/** Why a tool is hidden. */
export type HiddenReason =
  | 'not_in_allowed_tools'
  | 'discovered_later'
  | 'definition_changed'
  | 'disabled_by_operator';

export interface ToolState {
  status: ToolStatus;
  hiddenReason?: HiddenReason;
  description?: string;
  /** hash of the whole definition (every field a client sees, tool-pin.ts) an operator or the first discovery approved */
  approvedHash?: string;
  /** per-field hashes of the approved definition, to say which fields changed (absent in records from before) */
  approvedFields?: Record<string, string>;
  /** hash of the definition seen at the latest discovery */
  currentHash: string;
  currentFields?: Record<string, string>;
  /** the fields that differ from the approved definition, while they do (e.g. ["annotations"]) */
  changedFields?: string[];
  firstSeenAt: string;
  /** false when the latest discovery no longer listed it */
  present: boolean;
}

/** unknown until the first check; then healthy or unhealthy after each one (see health-monitor.ts) */
export type HealthStatus = 'unknown' | 'healthy' | 'unhealthy';

export interface HealthRecord {
  status: HealthStatus;
  checkedAt?: string;
  lastHealthyAt?: string;
  lastError?: string;
  consecutiveFailures: number;
  /** the MCP revision the last successful check spoke to the server in (2026-07-28, or 2025-11-25 and earlier) */
  protocolVersion?: string;
  /** the lists the last successful check found cut at the page limit (discovery.ts MAX_PAGES): their later items are not served */
  cappedLists?: string[];
}

export type McpAuthType = McpAuthConfig['type'];

export interface McpServerRecord {
  id: string;
  name: string;
  alias: string;
  url: string;
  /** the MCP transport plugin id that carries its traffic (records stored before transports were plugins have none: the default) */
  transport?: string;
  /** owning organisation; null for a platform-owned (public) server */
  org: string | null;
  visibility: 'private' | 'public';
  description?: string;
  authType: McpAuthType;
  /** the header an api_key credential is sent in */
  apiKeyHeader?: string;
  forwardHeaders: string[];
  staticHeaderNames: string[];
  allowedTools?: string[];
  pricePerCall?: number;
  /** by upstream tool name: a null-prototype table, read with `ownValue` */
  toolPrices?: Record<string, number>;
  /** config-file servers are the operator's; api servers may be egress-restricted */
  source: 'config' | 'api';
  /** registered by an organisation admin: may not reach private addresses (unless config allows) */
  egressRestricted: boolean;
  createdAt: string;
  updatedAt: string;
  /** set once a discovery has succeeded; the first one decides the initial tool states */
  discoveredAt?: string;
  /** by upstream tool name: a null-prototype table, read through `toolState` (tool-states.ts) */
  tools: Record<string, ToolState>;
  /** operator-facing notes: why tools were hidden */
  notices: string[];
  health: HealthRecord;
}

/** The write-only part: resolved credential and static header values. */
export interface McpServerSecrets {
  auth: McpAuthConfig<string>;
  staticHeaders: Record<string, string>;
  /** the full URL when it carries a password or query values (the record holds it redacted) */
  url?: string;
}

export const DEFAULT_API_KEY_HEADER = 'x-api-key';

/**
 * A URL as reads show it: a password in the user part and query values are replaced by `***` (some
 * hosted MCP servers put a token there; use `auth` or `staticHeaders` for credentials instead). A user
 * name without a password is a token written alone (`https://TOKEN@host/`): it is replaced too.
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    else if (u.username) u.username = '***';
    for (const key of [...new Set(u.searchParams.keys())]) u.searchParams.set(key, '***');
    return u.href.replace(/%2A%2A%2A/g, '***');
  } catch {
    return '***';
  }
}

/** What the management API shows: auth type and header names, never a value. */
export function toPublicView(record: McpServerRecord) {
  return {
    id: record.id,
    name: record.name,
    alias: record.alias,
    url: redactUrl(record.url),
    transport: transportIdOf(record.transport),
    org: record.org,
    visibility: record.visibility,
    description: record.description ?? null,
    auth: record.authType === 'api_key' ? { type: record.authType, header: record.apiKeyHeader ?? DEFAULT_API_KEY_HEADER } : { type: record.authType },
    forwardHeaders: record.forwardHeaders,
    staticHeaders: record.staticHeaderNames,
    allowedTools: record.allowedTools ?? null,
    pricePerCall: record.pricePerCall ?? null,
    toolPrices: record.toolPrices ?? null,
    source: record.source,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    discoveredAt: record.discoveredAt ?? null,
    health: record.health,
    tools: Object.entries(record.tools)
      .filter(([, t]) => t.present)
      .map(([name, t]) => ({
        name,
        description: t.description ?? null,
        status: t.status,
        enabled: t.status === 'enabled',
        hiddenReason: t.hiddenReason ?? null,
        changedFields: t.changedFields ?? null,
      })),
    notices: record.notices,
  };
}

export type McpServerPublicView = ReturnType<typeof toPublicView>;
