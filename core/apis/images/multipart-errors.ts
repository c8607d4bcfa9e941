import { GatewayError, InvalidRequestError } from '../../errors/gateway-error';

/** The errors an image-edit upload can end with; each names the field at fault when there is one. */
export const uploadErrors = {
  notMultipart: () => new InvalidRequestError("Image edits take a 'multipart/form-data' body.", 'invalid_content_type'),
  malformed: (detail: string) => new InvalidRequestError(`The multipart body could not be read: ${detail}.`, 'invalid_multipart'),
  boundaryTooLong: (max: number) => new InvalidRequestError(`The multipart boundary is longer than ${max} characters (RFC 2046).`, 'invalid_multipart'),
  fileTooLarge: (field: string, max: number) =>
    new GatewayError(413, 'invalid_request_error', 'file_too_large', `The file in '${field}' is larger than the limit of ${max} bytes.`, { param: field }),
  fieldTooLarge: (field: string, max: number) =>
    new GatewayError(413, 'invalid_request_error', 'field_too_large', `The value of '${field}' is longer than the limit of ${max} bytes.`, { param: field }),
  tooManyParts: (what: string, max: number) => new InvalidRequestError(`Too many ${what} in the multipart body (the limit is ${max}).`, 'too_many_parts'),
  missingImage: () => new InvalidRequestError("Missing required parameter: 'image' (an image edit needs an image file part).", 'missing_required_parameter', { param: 'image' }),
  notAFile: (field: string) => new InvalidRequestError(`'${field}' must be a file upload, not a text field.`, 'invalid_type', { param: field }),
  aborted: () => new InvalidRequestError('The request body was not received completely.', 'request_aborted'),
  resent: () =>
    new GatewayError(502, 'upstream_error', 'upload_not_replayable', 'The upload was already streamed to an upstream and cannot be sent again.'),
};
