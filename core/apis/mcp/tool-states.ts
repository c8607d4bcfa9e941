/**
 * Which discovered tools are exposed (interface.md §3, issue rule 4), as pure functions over the record:
 *
 * - first successful discovery: tools named in `allowedTools` are enabled; with no `allowedTools`, every
 *   tool found is enabled. Others are hidden (`not_in_allowed_tools`).
 * - a tool first seen by a later discovery stays hidden (`discovered_later`) until an operator enables it,
 *   unless the operator named it in `allowedTools` beforehand (that is an explicit approval by name).
 * - an enabled tool whose definition (every field a client sees, see tool-pin.ts) no longer hashes to the
 *   approved value is hidden (`definition_changed`) until an operator enables it again; the state names
 *   the fields that changed (`changedFields`) and a notice says why.
 *
 * Tool names come from upstreams and from the management API, so `record.tools` is a null-prototype
 * table and is read only through `toolState` (a tool named `__proto__` or `constructor` is just a tool).
 */
import { emptyLookup, lookupFrom, ownValue } from '../../lookup/own-keys';
import type { McpServerRecord, ToolState } from './server-record';
import { changedFields, LEGACY_PINNED_FIELDS, legacyDefinitionHash, pinTool, type ListedTool } from './tool-pin';

export type DiscoveredTool = ListedTool;

/** The state of one tool by name, never an inherited member of the table. */
export function toolState(record: Pick<McpServerRecord, 'tools'>, name: string): ToolState | undefined {
  return ownValue(record.tools, name);
}

/** Make a record read from the store or JSON safe to index by tool name (null-prototype tables). */
export function reviveToolTables(record: McpServerRecord): McpServerRecord {
  record.tools = lookupFrom(record.tools);
  for (const state of Object.values(record.tools)) {
    if (state.approvedFields) state.approvedFields = lookupFrom(state.approvedFields);
    if (state.currentFields) state.currentFields = lookupFrom(state.currentFields);
  }
  if (record.toolPrices) record.toolPrices = lookupFrom(record.toolPrices);
  return record;
}

/** Apply one successful discovery to the record's tool states (mutates and returns the record). */
export function reconcileTools(record: McpServerRecord, discovered: DiscoveredTool[], nowIso: string): McpServerRecord {
  if (Object.getPrototypeOf(record.tools) !== null) reviveToolTables(record);
  const first = record.discoveredAt === undefined;
  const allowed = record.allowedTools ? new Set(record.allowedTools) : undefined;
  const seen = new Set<string>();
  for (const tool of discovered) {
    // an upstream that lists one name twice: the first listing is the one clients are served
    if (seen.has(tool.name)) continue;
    seen.add(tool.name);
    const pin = pinTool(tool);
    const state = toolState(record, tool.name);
    if (!state) {
      const enable = allowed ? allowed.has(tool.name) : first;
      const base = { description: describe(tool), currentHash: pin.hash, currentFields: pin.fields, firstSeenAt: nowIso, present: true };
      record.tools[tool.name] = enable
        ? { status: 'enabled', ...base, approvedHash: pin.hash, approvedFields: pin.fields }
        : { status: 'hidden', hiddenReason: first || allowed ? 'not_in_allowed_tools' : 'discovered_later', ...base };
      if (!enable && !first && !allowed) record.notices.push(`${nowIso}: tool "${tool.name}" appeared after the first discovery and is hidden until an operator enables it`);
      continue;
    }
    state.present = true;
    state.description = describe(tool);
    state.currentHash = pin.hash;
    state.currentFields = pin.fields;
    if (state.approvedHash !== undefined && !state.approvedFields && state.approvedHash === legacyDefinitionHash(tool)) {
      // approved before pins covered every field: what was pinned then still matches, so pin it in full now
      state.approvedHash = pin.hash;
      state.approvedFields = pin.fields;
    }
    if (state.approvedHash === pin.hash) {
      delete state.changedFields;
      continue;
    }
    if (state.approvedHash !== undefined) state.changedFields = state.approvedFields ? changedFields(state.approvedFields, pin.fields) : [...LEGACY_PINNED_FIELDS];
    if (state.status === 'enabled') {
      state.status = 'hidden';
      state.hiddenReason = 'definition_changed';
      record.notices.push(
        `${nowIso}: tool "${tool.name}" is hidden because its ${(state.changedFields ?? []).join(', ') || 'definition'} changed upstream; enable it again to accept the new definition`,
      );
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
  if (state.currentFields) state.approvedFields = lookupFrom(state.currentFields);
  delete state.hiddenReason;
  delete state.changedFields;
}

export function disableTool(state: ToolState): void {
  state.status = 'hidden';
  state.hiddenReason = 'disabled_by_operator';
}

/** A fresh, empty tool table. */
export const emptyToolTable = () => emptyLookup<ToolState>();

/** The description the management API shows (only when the upstream sent a string). */
function describe(tool: DiscoveredTool): string | undefined {
  return typeof tool.description === 'string' ? tool.description : undefined;
}

/** Keep the record small: only the latest notices. */
const MAX_NOTICES = 50;
function trimNotices(record: McpServerRecord): void {
  if (record.notices.length > MAX_NOTICES) record.notices.splice(0, record.notices.length - MAX_NOTICES);
}
