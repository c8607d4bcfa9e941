import { InvalidRequestError } from '../errors/gateway-error';
import type { SchemaValidator } from '../config/validators';

/**
 * Small checks for bodies the gateway reads itself (model request bodies have their schemas in
 * core/apis/<family>/request-schema.ts): each failure names the parameter, as the OpenAI API does.
 */
export function requireObjectBody(body: unknown): Record<string, any> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidRequestError('The request body must be a JSON object.', 'invalid_body');
  }
  return body as Record<string, any>;
}

export function requireString(body: Record<string, any>, field: string): string {
  const value = body[field];
  if (value === undefined || value === null) throw new InvalidRequestError(`Missing required parameter: '${field}'.`, 'missing_required_parameter', { param: field });
  if (typeof value !== 'string' || value.length === 0) throw new InvalidRequestError(`Invalid type for '${field}': expected a non-empty string.`, 'invalid_type', { param: field });
  return value;
}

/**
 * Check a management-API body against its compiled schema (config/validators.ts, the one the config
 * file uses). `readOnly` fields may not appear (a patch cannot move a key to another organisation).
 * The first problem's path is the error's `param`; the message lists every problem.
 */
export function validateBody<T>(validator: SchemaValidator, body: unknown, readOnly: readonly string[] = []): T {
  const object = requireObjectBody(body);
  for (const field of readOnly) {
    if (Object.hasOwn(object, field)) throw new InvalidRequestError(`${field}: cannot be changed`, 'read_only_field', { param: field });
  }
  const problems = validator.check(object);
  if (problems.length) throw new InvalidRequestError(problems.map((p) => p.message).join('; '), 'invalid_value', { param: problems[0].path || null });
  return object as T;
}

/**
 * A patch body: the fields to set, checked like `validateBody`, and the fields to remove, written as
 * `null` ("no rpm limit any more", "every model"). Patch schemas have every field optional, so removing
 * one leaves a valid record; a `null` for a field the schema does not declare is refused like any
 * unknown field.
 */
export function validatePatch<T>(validator: SchemaValidator, body: unknown, readOnly: readonly string[] = []): { set: T; clear: string[] } {
  const object = requireObjectBody(body);
  const set: Record<string, unknown> = {};
  const clear: string[] = [];
  for (const [field, value] of Object.entries(object)) {
    if (value === null && validator.fields.includes(field)) clear.push(field);
    // defined, not assigned: a "__proto__" field stays a field (and is refused as unknown)
    else Object.defineProperty(set, field, { value, enumerable: true, writable: true, configurable: true });
  }
  return { set: validateBody<T>(validator, set, readOnly), clear };
}
