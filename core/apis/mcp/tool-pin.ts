/**
 * A tool's pin: what a client sees of it, hashed, so a later discovery can tell whether the upstream
 * changed anything. Clients decide what to auto-approve on every field of a listed tool (`title`,
 * `annotations.readOnlyHint`, `outputSchema`, `_meta`...), and `tools/list` hands them the item as the
 * upstream listed it, so the pin covers every top-level field of that item, name included, not a chosen few.
 *
 * The hash is over canonical JSON (object keys sorted), so key order alone is never a change. The whole
 * definition is one SHA-256; each field also gets a short hash so the record can say which fields changed
 * (the short ones only explain, the full hash decides).
 */
import { createHash } from 'node:crypto';
import { emptyLookup } from '../../lookup/own-keys';

/** A tool as an upstream lists it: `name` plus whatever else it sent. */
export type ListedTool = { readonly name: string } & Readonly<Record<string, unknown>>;

export interface ToolPin {
  /** SHA-256 of the whole definition */
  hash: string;
  /** field name -> short hash of that field's value */
  fields: Record<string, string>;
}

/** Stable JSON: object keys sorted and undefined members left out, as JSON.stringify would. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (value && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    const entries = Object.keys(object)
      .sort()
      .filter((k) => object[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(object[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export function pinTool(tool: ListedTool): ToolPin {
  const fields = emptyLookup<string>();
  const members: string[] = [];
  // each field is serialised once: its text gives the field's hash and is a member of the whole (= canonicalJson(tool))
  for (const key of Object.keys(tool).sort()) {
    if (tool[key] === undefined) continue;
    const text = canonicalJson(tool[key]);
    fields[key] = sha256(text).slice(0, 16);
    members.push(`${JSON.stringify(key)}:${text}`);
  }
  return { hash: sha256(`{${members.join(',')}}`), fields };
}

/** The fields whose value differs between two pins (added, removed or changed), sorted. */
export function changedFields(approved: Readonly<Record<string, string>>, current: Readonly<Record<string, string>>): string[] {
  const names = new Set([...Object.keys(approved), ...Object.keys(current)]);
  return [...names].filter((n) => (Object.hasOwn(approved, n) ? approved[n] : undefined) !== (Object.hasOwn(current, n) ? current[n] : undefined)).sort();
}

/**
 * The hash records written before pins covered every field used (description and input schema only).
 * A stored approval in that form is accepted once if those two still match, then re-pinned in full.
 */
export function legacyDefinitionHash(tool: ListedTool): string {
  return sha256(canonicalJson({ description: tool.description ?? '', inputSchema: tool.inputSchema ?? null }));
}

/** What a legacy approval covered: when it no longer matches, one of these changed. */
export const LEGACY_PINNED_FIELDS = ['description', 'inputSchema'];
