import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GatewayError } from '../../errors/gateway-error';
import { MultipartEncoder } from './multipart-encoder';
import { uploadErrors } from './multipart-errors';
import { PartQueue } from './part-queue';

/** The form fields that must carry files (OpenAI images API). */
export const FILE_FIELDS: ReadonlySet<string> = new Set(['image', 'image[]', 'mask']);
/**
 * Fields the pipeline has decided on before the call (routing, guardrails). A second copy arriving later
 * in the body is dropped: it would reach the upstream unchecked.
 */
const DECIDED_FIELDS: ReadonlySet<string> = new Set(['model', 'prompt']);

export type EditFields = Record<string, string | string[] | boolean>;
/** whether a text field of the client's goes on to the upstream */
export type FieldFilter = (name: string, value: string) => boolean;

type FileStream = Readable & { truncated?: boolean };
export type LivePart =
  | { kind: 'field'; name: string; value: string }
  | { kind: 'file'; field: string; filename: string; mimeType: string; stream: FileStream };

interface SpooledFile {
  field: string;
  filename: string;
  mimeType: string;
  path: string;
  /** settles when the file is on disk: undefined, or why it is not */
  written: Promise<Error | undefined>;
}

type UploadPart = { kind: 'field'; name: string; value: string } | { kind: 'file'; field: string; filename: string; mimeType: string; content: AsyncIterable<Uint8Array> };

export interface UploadedFileInfo {
  field: string;
  filename: string;
  mimeType: string;
  size: number;
}

const UPLOAD = Symbol('model-gateway.edit-upload');

/** The upload behind an edit request body, for the provider operation that sends it on. */
export function editUploadOf(body: unknown): EditUpload | undefined {
  return (body as { [UPLOAD]?: EditUpload } | null)?.[UPLOAD];
}

/**
 * One multipart image-edit request on its way through the gateway. The text fields read before the
 * pipeline starts are `fields` (the request body the stages see and may rewrite: guardrails mask the
 * prompt in place). Files that arrived before `model` and `prompt` were spooled to temporary files; the
 * rest of the body is still on the socket and is streamed to the upstream part by part as it arrives,
 * so no whole file is ever held in memory. The body can be sent once; `dispose` removes every temporary
 * file and discards what the client has not sent yet, on every path.
 */
export class EditUpload {
  /** by the client's form field names: no prototype, so `__proto__` or `constructor` is just a field */
  readonly fields: EditFields = Object.create(null);
  /** the text fields known when the pipeline started, sent first */
  headFields: string[] = [];
  readonly live = new PartQueue<LivePart>();
  failure?: GatewayError;
  /** resolves when the pipeline may start (model and prompt known, or the body ended); rejects on failure */
  readonly ready: Promise<void>;
  /** detaches the parser and discards the rest of the request body (set by the reader) */
  stopReading: () => void = () => {};

  private readonly spooled: SpooledFile[] = [];
  private readonly tempPaths = new Set<string>();
  private readonly removals: Promise<unknown>[] = [];
  private gate?: { resolve(): void; reject(err: Error): void };
  private claimed = false;

  constructor(private readonly maxFileBytes: number) {
    Object.defineProperty(this.fields, UPLOAD, { value: this, enumerable: true });
    this.ready = new Promise<void>((resolve, reject) => (this.gate = { resolve, reject }));
    // the route awaits `ready`; a failure before it does must not count as unhandled
    this.ready.catch(() => {});
  }

  get started(): boolean {
    return this.gate === undefined;
  }

  /** The pipeline may start: the text fields read so far go first in the upstream body. */
  start(): void {
    if (!this.gate) return;
    this.headFields = Object.keys(this.fields);
    this.gate.resolve();
    this.gate = undefined;
  }

  fail(err: GatewayError): void {
    if (this.failure) return;
    this.failure = err;
    this.live.fail(err);
    this.gate?.reject(err);
    this.gate = undefined;
    this.stopReading();
  }

  /** Write a file part that arrived before the pipeline could start to a private temporary file. */
  spool(field: string, filename: string, mimeType: string, source: FileStream, dir: string): void {
    const file = path.join(dir, `model-gateway-upload-${randomBytes(12).toString('hex')}`);
    this.tempPaths.add(file);
    const sink = createWriteStream(file, { flags: 'wx', mode: 0o600 });
    // `pipeline` settles as soon as a failing source has errored, which can be before the file is even
    // open: removing it then would race the open that creates it. The file is done with when it closes.
    const closed = new Promise<void>((resolve) => sink.once('close', resolve));
    const written = pipeline(source, sink)
      .then(
        () => (source.truncated ? uploadErrors.fileTooLarge(field, this.maxFileBytes) : undefined),
        (err: Error) => {
          // a disk problem is ours, not the client's; a parser problem has already failed the upload
          this.fail(new GatewayError(500, 'server_error', 'upload_spool_failed', 'The gateway could not store the upload.', { cause: err }));
          return err;
        },
      )
      .then(async (problem) => {
        await closed;
        return problem;
      });
    this.spooled.push({ field, filename, mimeType, path: file, written });
  }

  /**
   * The multipart body for the upstream: the head fields as the pipeline left them, then every part.
   * `sends` may leave out text fields the upstream must not get (they stay in `body` for the gateway).
   */
  encode(body: EditFields, upstreamModel: string, sends: FieldFilter = () => true): { contentType: string; body: AsyncIterable<Uint8Array> } {
    this.claim();
    const encoder = new MultipartEncoder();
    return { contentType: encoder.contentType, body: this.encoded(encoder, body, upstreamModel, sends) };
  }

  /** Read every part without sending it anywhere (for providers answered in process). */
  async drain(): Promise<UploadedFileInfo[]> {
    this.claim();
    const files: UploadedFileInfo[] = [];
    try {
      for await (const part of this.parts(this.fields)) {
        if (part.kind !== 'file') continue;
        let size = 0;
        for await (const chunk of part.content) size += chunk.length;
        files.push({ field: part.field, filename: part.filename, mimeType: part.mimeType, size });
      }
    } catch (err) {
      throw this.asUploadError(err);
    }
    return files;
  }

  /** Remove every temporary file and stop reading the request. Safe to call on any path, more than once. */
  async dispose(): Promise<void> {
    this.stopReading();
    for (const part of this.live.takeAll()) if (part.kind === 'file') part.stream.destroy();
    await Promise.all(this.spooled.map((f) => f.written));
    for (const file of this.tempPaths) this.removals.push(rm(file, { force: true }));
    this.tempPaths.clear();
    await Promise.allSettled(this.removals);
  }

  private claim(): void {
    if (this.claimed) throw uploadErrors.resent();
    this.claimed = true;
  }

  private async *encoded(encoder: MultipartEncoder, body: EditFields, upstreamModel: string, sends: FieldFilter): AsyncGenerator<Uint8Array> {
    try {
      for (const name of this.headFields) {
        for (const value of valuesOf(name === 'model' ? upstreamModel : body[name])) if (sends(name, value)) yield encoder.field(name, value);
      }
      for await (const part of this.parts(body)) {
        if (part.kind === 'field') {
          if (sends(part.name, part.value)) yield encoder.field(part.name, part.value);
          continue;
        }
        yield encoder.fileHeader(part.field, part.filename, part.mimeType);
        yield* part.content;
        yield encoder.fileEnd();
      }
      yield encoder.close();
    } catch (err) {
      throw this.asUploadError(err);
    }
  }

  /** Spooled files first, then the live parts in the order the client sent them. */
  private async *parts(body: EditFields): AsyncGenerator<UploadPart> {
    for (const file of this.spooled) {
      const problem = await file.written;
      if (problem) throw this.failure ?? problem;
      yield { kind: 'file', field: file.field, filename: file.filename, mimeType: file.mimeType, content: this.readSpooled(file.path) };
    }
    for (;;) {
      const part = await this.live.next();
      if (!part) return;
      if (part.kind === 'field') {
        if (DECIDED_FIELDS.has(part.name)) continue;
        // the stages after the call (spend: the image size) see fields that came after the files
        addField(body, part.name, part.value);
        yield part;
      } else {
        yield { kind: 'file', field: part.field, filename: part.filename, mimeType: part.mimeType, content: this.readLive(part.field, part.stream) };
      }
    }
  }

  private async *readSpooled(file: string): AsyncGenerator<Uint8Array> {
    try {
      yield* createReadStream(file);
    } finally {
      // sent (or abandoned): no reason to keep it on disk until the request ends
      this.tempPaths.delete(file);
      this.removals.push(rm(file, { force: true }));
    }
  }

  private async *readLive(field: string, stream: FileStream): AsyncGenerator<Uint8Array> {
    yield* stream;
    if (stream.truncated) throw uploadErrors.fileTooLarge(field, this.maxFileBytes);
  }

  private asUploadError(err: unknown): GatewayError {
    if (err instanceof GatewayError) return err;
    return this.failure ?? uploadErrors.malformed(lowerFirst((err as Error)?.message ?? 'unknown error'));
  }
}

export function addField(fields: EditFields, name: string, value: string): void {
  const existing = Object.hasOwn(fields, name) ? fields[name] : undefined;
  if (existing === undefined) fields[name] = value;
  else if (Array.isArray(existing)) existing.push(value);
  else fields[name] = [String(existing), value];
}

function valuesOf(value: EditFields[string] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [String(value)];
}

export function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
