/**
 * Which discovered tools are exposed (interface.md §3, issue rule 4), as pure functions over the record:
 *
 * - first successful discovery: tools named in `allowedTools` are enabled; with no `allowedTools`, every
 *   tool found is enabled. Others are hidden (`not_in_allowed_tools`).
 * - a tool first seen by a later discovery stays hidden (`discovered_later`) until an operator enables it,
 *   unless the operator named it in `allowedTools` beforehand (that is an explicit approval by name).
 * - an enabled tool whose definition (description + input schema) no longer hashes to the approved value
 *   is hidden (`definition_changed`) until an operator enables it again; a notice says why.
 */
import { createHash } from 'node:crypto';
import type { McpServerRecord, ToolState } from './server-record';

export interface DiscoveredTool {
  name: string;
  description?: string;
  inputSchema?: unknown;
}

/** Stable JSON: object keys sorted, so a re-ordered schema does not count as a change. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export function toolDefinitionHash(tool: DiscoveredTool): string {
  return createHash('sha256')
    .update(canonicalJson({ description: tool.description ?? '', inputSchema: tool.inputSchema ?? null }))
    .digest('hex');
}

/** Apply one successful discovery to the record's tool states (mutates and returns the record). */
export function reconcileTools(record: McpServerRecord, discovered: DiscoveredTool[], nowIso: string): McpServerRecord {
  const first = record.discoveredAt === undefined;
  const allowed = record.allowedTools ? new Set(record.allowedTools) : undefined;
  const seen = new Set<string>();
  for (const tool of discovered) {
    seen.add(tool.name);
    const hash = toolDefinitionHash(tool);
    const state = record.tools[tool.name];
    if (!state) {
      const enable = allowed ? allowed.has(tool.name) : first;
      record.tools[tool.name] = enable
        ? { status: 'enabled', description: tool.description, approvedHash: hash, currentHash: hash, firstSeenAt: nowIso, present: true }
        : {
            status: 'hidden',
            hiddenReason: first || allowed ? 'not_in_allowed_tools' : 'discovered_later',
            description: tool.description,
            currentHash: hash,
            firstSeenAt: nowIso,
            present: true,
          };
      if (!enable && !first && !allowed) record.notices.push(`${nowIso}: tool "${tool.name}" appeared after the first discovery and is hidden until an operator enables it`);
      continue;
    }
    state.present = true;
    state.description = tool.description;
    state.currentHash = hash;
    if (state.status === 'enabled' && state.approvedHash !== hash) {
      state.status = 'hidden';
      state.hiddenReason = 'definition_changed';
      record.notices.push(`${nowIso}: tool "${tool.name}" is hidden because its description or input schema changed upstream; enable it again to accept the new definition`);
    }
  }
  for (const [name, state] of Object.entries(record.tools)) if (!seen.has(name)) state.present = false;
  record.discoveredAt ??= nowIso;
  trimNotices(record);
  return record;
}

/** An operator enables a tool: its current definition becomes the approved one. */
export function enableTool(state: ToolState): void {
  state.status = 'enabled';
  state.approvedHash = state.currentHash;
  delete state.hiddenReason;
}

export function disableTool(state: ToolState): void {
  state.status = 'hidden';
  state.hiddenReason = 'disabled_by_operator';
}

/** Keep the record small: only the latest notices. */
const MAX_NOTICES = 50;
function trimNotices(record: McpServerRecord): void {
  if (record.notices.length > MAX_NOTICES) record.notices.splice(0, record.notices.length - MAX_NOTICES);
}
