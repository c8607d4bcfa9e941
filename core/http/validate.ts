import { InvalidRequestError } from '../errors/gateway-error';

/** Small checks for request bodies: each failure names the parameter, as the OpenAI API does. */
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

export function optionalBoolean(body: Record<string, any>, field: string): void {
  const value = body[field];
  if (value !== undefined && value !== null && typeof value !== 'boolean') {
    throw new InvalidRequestError(`Invalid type for '${field}': expected a boolean.`, 'invalid_type', { param: field });
  }
}

export function optionalNumber(body: Record<string, any>, field: string): void {
  const value = body[field];
  if (value !== undefined && value !== null && (typeof value !== 'number' || !Number.isFinite(value))) {
    throw new InvalidRequestError(`Invalid type for '${field}': expected a number.`, 'invalid_type', { param: field });
  }
}
