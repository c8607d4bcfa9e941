import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import type { GatewayError } from '../../errors/gateway-error';
import { EditUpload, FILE_FIELDS, addField, lowerFirst } from './edit-upload';
import type { ResolvedImagesSettings } from './images-settings';
import { uploadErrors } from './multipart-errors';

/** The form fields an edit's image comes in (one, or several as `image[]`). */
const IMAGE_FIELDS: ReadonlySet<string> = new Set(['image', 'image[]']);

/** RFC 2046 §5.1.1: a boundary is 1 to 70 characters. */
export const MAX_BOUNDARY_LENGTH = 70;

export function isMultipartFormData(contentType: string | undefined): boolean {
  return typeof contentType === 'string' && /^\s*multipart\/form-data\s*(;|$)/i.test(contentType);
}

/**
 * Start reading an image-edit request with busboy. Text fields are collected until both `model` and
 * `prompt` are known (the pipeline needs them to route and to run guardrails); file parts before that
 * point are spooled to temporary files, file parts after it stay on the socket until the upstream body
 * pulls them. Every limit violation fails the upload with a 400/413 and stops reading.
 *
 * Clients that send `model` and `prompt` before the files (as the OpenAI SDKs do when those keys come
 * first) are streamed end to end without touching the disk.
 */
export function readEditForm(req: IncomingMessage, settings: ResolvedImagesSettings): EditUpload {
  const upload = new EditUpload(settings.maxFileBytes);
  upload.stopReading = () => discardBody(req);
  // The route checks the key before it reads, and a client may go away during that wait: its request has
  // already emitted 'close', and what it had sent would be parsed (and spooled to disk) for a body that
  // never ends. Nothing is read for it.
  if (req.destroyed) {
    upload.fail(uploadErrors.aborted());
    return upload;
  }

  const boundary = /;\s*boundary=(?:"([^"]*)"|([^;\s]*))/i.exec(req.headers['content-type'] ?? '');
  const boundaryLength = (boundary?.[1] ?? boundary?.[2] ?? '').length;
  if (boundaryLength > MAX_BOUNDARY_LENGTH) {
    upload.fail(uploadErrors.boundaryTooLong(MAX_BOUNDARY_LENGTH));
    return upload;
  }

  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      defParamCharset: 'utf8',
      limits: {
        fileSize: settings.maxFileBytes,
        files: settings.maxFiles,
        fields: settings.maxFields,
        fieldSize: settings.maxFieldBytes,
        parts: settings.maxFiles + settings.maxFields,
        fieldNameSize: 256,
        headerPairs: 32,
      },
    });
  } catch (err) {
    upload.fail(uploadErrors.malformed(lowerFirst((err as Error).message)));
    return upload;
  }
  upload.stopReading = () => {
    req.unpipe(parser);
    parser.destroy();
    discardBody(req);
  };

  // busboy must not be destroyed from inside its own event handlers (it keeps using the part it is on):
  // a failure is noted at once, so no later event starts the pipeline, and acted on in the next tick.
  let failed = false;
  const fail = (err: GatewayError) => {
    if (failed) return;
    failed = true;
    process.nextTick(() => upload.fail(err));
  };
  parser.on('field', (name, value, info) => {
    if (failed) return;
    if (info.valueTruncated) return fail(uploadErrors.fieldTooLarge(name, settings.maxFieldBytes));
    if (info.nameTruncated) return fail(uploadErrors.malformed('a field name is too long'));
    if (FILE_FIELDS.has(name)) return fail(uploadErrors.notAFile(name));
    if (upload.started) return upload.live.push({ kind: 'field', name, value });
    addField(upload.fields, name, value);
    if (isNonEmptyString(upload.fields.model) && isNonEmptyString(upload.fields.prompt)) upload.start();
  });
  // an edit without an image would reach the upstream (and be billed by it) only to be refused there
  let sawImage = false;
  parser.on('file', (field, stream, info) => {
    if (failed) return void stream.resume();
    if (IMAGE_FIELDS.has(field)) sawImage = true;
    stream.on('limit', () => fail(uploadErrors.fileTooLarge(field, settings.maxFileBytes)));
    // busboy destroys the part it is on with an error when the body ends early or reading stops. A live
    // part nobody reads yet (the upstream body has not reached it) has no other listener, and an 'error'
    // without one is uncaught: one truncated upload from any key ended the whole process.
    stream.on('error', (err: Error) => fail(uploadErrors.malformed(lowerFirst(err.message))));
    const filename = info.filename || 'file';
    if (upload.started) upload.live.push({ kind: 'file', field, filename, mimeType: info.mimeType, stream });
    else upload.spool(field, filename, info.mimeType, stream, settings.tempDir);
  });
  parser.on('partsLimit', () => fail(uploadErrors.tooManyParts('parts', settings.maxFiles + settings.maxFields)));
  parser.on('filesLimit', () => fail(uploadErrors.tooManyParts('files', settings.maxFiles)));
  parser.on('fieldsLimit', () => fail(uploadErrors.tooManyParts('text fields', settings.maxFields)));
  parser.on('error', (err: Error) => fail(uploadErrors.malformed(lowerFirst(err.message))));
  parser.on('close', () => {
    // the upstream body is not complete until the live parts end: failing here stops it unsent
    if (!failed && !sawImage) return fail(uploadErrors.missingImage());
    upload.live.end();
    if (!failed) upload.start();
  });
  req.on('close', () => {
    if (!req.complete) upload.fail(uploadErrors.aborted());
  });
  req.pipe(parser);
  return upload;
}

/** Let the rest of the request body go by unread (the answer may already be on its way). */
export function discardBody(req: IncomingMessage): void {
  if (!req.readableEnded && !req.destroyed) req.resume();
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}
