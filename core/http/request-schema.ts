/**
 * Request bodies checked at the edge, as the upstream API itself would check them: each API family writes
 * its request schema once (core/apis/<family>/request-schema.ts, TypeBox like the config schemas), and it
 * is compiled here when the family's module loads. A compiled validator is generated code, so the check
 * costs little on the fast JSON path.
 *
 * Unlike the config schemas, request schemas leave unknown fields alone (they pass through to the
 * upstream unchanged), fill in no defaults (the body is forwarded as the client sent it) and stop at the
 * first problem: the answer names one `param`, as the OpenAI and Anthropic APIs do.
 */
import Ajv, { type ErrorObject } from 'ajv';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { InvalidRequestError } from '../errors/gateway-error';

// allowUnionTypes: `type: ["integer", "null"]` is how an optional field that may be sent as null is said;
// verbose: an error carries its schema, for the schema's `hint`
const ajv = new Ajv({ strict: true, allowUnionTypes: true, allErrors: false, useDefaults: false, coerceTypes: false, verbose: true });
// `hint` is an annotation: what the error message says instead of ajv's generic sentence
ajv.addVocabulary(['hint']);

/** How a family names a parameter and words a message (its API's own style). */
export type ParamStyle = 'openai' | 'anthropic';

/** A field that may also be sent as `null` (read as "not set", as the OpenAI API does). */
export function Nullable<T extends TSchema>(schema: T): TSchema & { static: Static<T> | null } {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [(schema as unknown as { type: string }).type, 'null'] });
}

export interface RequestValidator {
  /** Throws an InvalidRequestError (400, `param` set) at the first problem; returns the body unchanged. */
  check(body: Record<string, unknown>): void;
}

export function compileRequestSchema(schema: TSchema, style: ParamStyle): RequestValidator {
  const validate = ajv.compile(schema);
  return {
    check(body) {
      if (!validate(body)) throw toRequestError(validate.errors ?? [], style);
    },
  };
}

const ARTICLE: Record<string, string> = { string: 'a string', integer: 'an integer', number: 'a number', boolean: 'a boolean', object: 'an object', array: 'an array', null: 'null' };

/**
 * ajv stops at the first failing keyword; for a union (`anyOf`) it reports each branch first and the union
 * last, so the last error is the one that failed at the outermost place.
 */
function toRequestError(errors: ErrorObject[], style: ParamStyle): InvalidRequestError {
  let error = errors[errors.length - 1];
  // an if/then reports what failed in `then` before itself ("must match then"): that is the answer
  if (error.keyword === 'if' && errors.length > 1) error = errors[errors.length - 2];
  const segments = pointerSegments(error.instancePath);
  if (error.keyword === 'required') {
    segments.push((error.params as { missingProperty: string }).missingProperty);
    const param = paramName(segments, style);
    const message = style === 'openai' ? `Missing required parameter: '${param}'.` : `${param}: Field required`;
    return new InvalidRequestError(message, 'missing_required_parameter', { param });
  }
  const param = paramName(segments, style) || null;
  const hint = (error.parentSchema as { hint?: string } | undefined)?.hint;
  let text: string;
  let code = 'invalid_value';
  if (hint) text = hint;
  else if (error.keyword === 'type') {
    const types = ([] as string[]).concat((error.params as { type: string | string[] }).type).filter((t) => t !== 'null');
    text = `expected ${types.map((t) => ARTICLE[t] ?? t).join(' or ')}`;
    code = 'invalid_type';
  } else if (error.keyword === 'enum') text = `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  else if (error.keyword === 'minItems') text = `must contain at least ${(error.params as { limit: number }).limit} item(s)`;
  else text = error.message ?? 'is not valid';
  if (param === null) return new InvalidRequestError(`The request body ${text}.`, code === 'invalid_type' ? 'invalid_body' : code);
  const message = style === 'openai' ? `Invalid ${code === 'invalid_type' ? 'type' : 'value'} for '${param}': ${text}.` : `${param}: ${text}`;
  return new InvalidRequestError(message, code, { param });
}

/** "/messages/0/role" -> ["messages", "0", "role"] */
function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** OpenAI names `messages[0].role`; Anthropic `messages.0.role`. */
function paramName(segments: string[], style: ParamStyle): string {
  if (style === 'anthropic') return segments.join('.');
  return segments.reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}
