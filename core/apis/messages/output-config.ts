/**
 * Structured output between the Messages format and the canonical chat format, both ways:
 *
 *   Messages `output_config: {format: {type: "json_schema", schema}}`  <->  chat `response_format:
 *   {type: "json_schema", json_schema: {name, schema, strict}}`, and `output_config.effort` <-> chat
 *   `reasoning_effort`.
 *
 * Anything that has no equivalent on the other side is refused with a 400 naming it: a client that asked
 * for a format must never get free text back because a field was dropped on the way.
 */
import { InvalidRequestError } from '../../errors/gateway-error';
import { clientText } from '../../formats/client-text';

/** Chat json_schema formats need a name; Messages formats have none. */
export const SCHEMA_NAME = 'response';

/** Messages efforts with a chat `reasoning_effort` of the same name (`max` has none). */
const EFFORTS = new Set(['low', 'medium', 'high', 'xhigh']);

/** What a Messages `output_config` adds to a chat request. */
export function chatFieldsOfOutputConfig(config: unknown): { response_format?: unknown; reasoning_effort?: string } {
  if (config === undefined || config === null) return {};
  if (typeof config !== 'object' || Array.isArray(config)) throw new InvalidRequestError('output_config: must be an object', 'invalid_request', { param: 'output_config' });
  const out: { response_format?: unknown; reasoning_effort?: string } = {};
  for (const [key, value] of Object.entries(config)) {
    if (value === undefined || value === null) continue;
    if (key === 'format') out.response_format = responseFormatOf(value);
    else if (key === 'effort' && typeof value === 'string' && EFFORTS.has(value)) out.reasoning_effort = value;
    else throw untranslatable(`output_config.${key}`);
  }
  return out;
}

function responseFormatOf(format: any): unknown {
  if (format?.type !== 'json_schema') throw untranslatable('output_config.format.type', `${JSON.stringify(clientText(format?.type))} `);
  if (typeof format.schema !== 'object' || format.schema === null) {
    throw new InvalidRequestError('output_config.format.schema: must be a JSON schema object', 'invalid_request', { param: 'output_config.format.schema' });
  }
  for (const key of Object.keys(format)) if (key !== 'type' && key !== 'schema') throw untranslatable(`output_config.format.${key}`);
  return { type: 'json_schema', json_schema: { name: SCHEMA_NAME, schema: format.schema, strict: true } };
}

/**
 * A chat `response_format` -> the Messages `output_config.format` (undefined for plain text). JSON mode
 * without a schema has no Messages equivalent and is refused.
 */
export function outputFormatOfResponseFormat(format: unknown): { type: 'json_schema'; schema: Record<string, unknown> } | undefined {
  if (format === undefined || format === null) return undefined;
  const type = (format as { type?: unknown }).type;
  if (type === 'text') return undefined;
  const schema = (format as { json_schema?: { schema?: unknown } }).json_schema?.schema;
  if (type === 'json_schema' && typeof schema === 'object' && schema !== null) return { type: 'json_schema', schema: schema as Record<string, unknown> };
  if (type === 'json_schema') throw new InvalidRequestError('response_format.json_schema.schema: field required', 'invalid_request', { param: 'response_format.json_schema.schema' });
  throw new InvalidRequestError(
    `response_format: type ${JSON.stringify(clientText(type))} has no equivalent on Anthropic models; send a json_schema format instead`,
    'unsupported_parameter',
    { param: 'response_format.type' },
  );
}

function untranslatable(param: string, what = ''): InvalidRequestError {
  return new InvalidRequestError(`${param}: ${what}is supported only for Anthropic models`, 'unsupported_parameter', { param });
}
