/**
 * One ajv for every schema the gateway checks: the config file, the management API's bodies and plugin
 * options. Strict (a schema with a typo in a keyword does not compile), `useDefaults` (defaults live in
 * the schemas), every error reported. Each schema is compiled once, when this module loads or a plugin
 * registers, and reused for every config load and request.
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { distance } from 'fastest-levenshtein';
import type { TSchema } from '@sinclair/typebox';
import * as schemas from './schema';

// strictRequired is off: `anyOf: [{ required: ["a"] }, { required: ["b"] }]` beside the properties is
// valid JSON Schema that plugin option schemas use ("one of these fields"). verbose: errors carry the
// value and the schema, for hints and did-you-mean.
export const ajv = new Ajv({ strict: true, strictRequired: false, allErrors: true, useDefaults: true, verbose: true });
// `hint` is an annotation: the sentence an error message uses instead of ajv's generic one
ajv.addVocabulary(['hint']);

/** A compiled validator that reports problems as `path: message` lines. */
export interface SchemaValidator {
  /** the fields an object schema declares at its top level */
  readonly fields: readonly string[];
  /** validate (filling in defaults in place); the problems, empty when valid */
  check(value: unknown, root?: string): ValidationProblem[];
}

export interface ValidationProblem {
  /** where, e.g. "models[2].provider" ("" for the value itself) */
  path: string;
  /** "models[2].provider: must be string" */
  message: string;
}

export function compileSchema(schema: TSchema | Record<string, unknown>): SchemaValidator {
  const validate = ajv.compile(schema);
  const fields = Object.keys((schema as { properties?: object }).properties ?? {});
  return { fields, check: (value, root = '') => (validate(value) ? [] : describeErrors(validate, root)) };
}

/** The config file and the management API's bodies, compiled once. */
export const validators = {
  config: compileSchema(schemas.GatewayConfigSchema),
  organizationCreate: compileSchema(schemas.OrganizationCreateBody),
  organizationPatch: compileSchema(schemas.OrganizationPatchBody),
  keyCreate: compileSchema(schemas.KeyCreateBody),
  keyPatch: compileSchema(schemas.KeyPatchBody),
  mcpServerCreate: compileSchema(schemas.McpServerCreateBody),
  mcpServerPatch: compileSchema(schemas.McpServerPatchBody),
};

/** "/models/2/provider" -> "models[2].provider" */
export function jsonPointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

function join(root: string, path: string): string {
  if (!root) return path;
  if (!path) return root;
  return path.startsWith('[') ? `${root}${path}` : `${root}.${path}`;
}

/** The declared field closest to a misspelt one, if it is close enough to be a likely typo. */
export function didYouMean(field: string, known: string[]): string | undefined {
  const typed = field.toLowerCase();
  const letters = [...typed].sort().join('');
  let best: { name: string; cost: number } | undefined;
  for (const name of known) {
    const candidate = name.toLowerCase();
    // the same letters in another order ("rmp" for "rpm") is one slip, though it takes two edits
    const cost = [...candidate].sort().join('') === letters ? 1 : distance(typed, candidate);
    if (!best || cost < best.cost) best = { name, cost };
  }
  if (!best) return undefined;
  return best.cost <= Math.max(1, Math.floor(Math.max(field.length, best.name.length) / 3)) ? best.name : undefined;
}

function describe(error: ErrorObject, root: string): ValidationProblem {
  const at = join(root, jsonPointerToPath(error.instancePath));
  const hint = (error.parentSchema as { hint?: string } | undefined)?.hint;
  const line = (path: string, text: string) => ({ path, message: `${path || '(root)'}: ${text}` });
  switch (error.keyword) {
    case 'additionalProperties': {
      const field = (error.params as { additionalProperty: string }).additionalProperty;
      // a table of names (a header table) says what a name must be; an object of fields, what it knows
      if (hint) return line(join(at, field), hint);
      const known = Object.keys((error.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      const guess = didYouMean(field, known);
      return line(join(at, field), guess ? `unknown field (did you mean "${guess}"?)` : 'unknown field');
    }
    case 'required':
      return line(join(at, (error.params as { missingProperty: string }).missingProperty), 'is required');
    case 'enum':
      return line(at, `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`);
    case 'pattern':
      // the value is quoted only where the schema's hint asks for it ({value}): a URL may carry a password
      return line(at, hint ? hint.replace('{value}', JSON.stringify(error.data)) : `must match ${(error.params as { pattern: string }).pattern}`);
    case 'anyOf':
    case 'oneOf':
      return line(at, hint ?? describeAlternatives(error.parentSchema));
    default:
      return line(at, error.message ?? 'is not valid');
  }
}

/**
 * A union of literals (TypeBox's enum) reads like an enum: `must be one of "member", "admin"`; a union of
 * `required` lists (a plugin's "patterns or words") names the fields: `needs one of "patterns", "words"`.
 */
function describeAlternatives(schema: unknown): string {
  const options = ((schema as { anyOf?: unknown[]; oneOf?: unknown[] }).anyOf ?? (schema as { oneOf?: unknown[] }).oneOf ?? []) as { const?: unknown; required?: string[] }[];
  if (options.length && options.every((o) => o && 'const' in o)) return `must be one of ${options.map((o) => JSON.stringify(o.const)).join(', ')}`;
  if (options.length && options.every((o) => o && Object.keys(o).length === 1 && Array.isArray(o.required))) {
    return `needs one of ${options.map((o) => o.required!.map((f) => JSON.stringify(f)).join(' and ')).join(', ')}`;
  }
  return 'is not one of the accepted forms';
}

/**
 * Turn ajv's errors into one line per problem. A failed union makes ajv report why each branch failed;
 * the union's own line (with its hint) says it better, so the branch errors under it are dropped.
 */
export function describeErrors(validate: ValidateFunction, root = ''): ValidationProblem[] {
  const errors = validate.errors ?? [];
  const unions = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  const kept = errors.filter((e) => {
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf') return !unions.some((u) => u !== e && isUnder(e, u));
    return !unions.some((u) => isUnder(e, u));
  });
  const seen = new Set<string>();
  return kept.map((e) => describe(e, root)).filter((p) => (seen.has(p.message) ? false : (seen.add(p.message), true)));
}

/** Was `error` raised inside the union that `union` reports (same value or deeper, under its schema)? */
function isUnder(error: ErrorObject, union: ErrorObject): boolean {
  const samePlace = error.instancePath === union.instancePath || error.instancePath.startsWith(`${union.instancePath}/`);
  return samePlace && error.schemaPath.startsWith(`${union.schemaPath}/`);
}
