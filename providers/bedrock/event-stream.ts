/**
 * AWS binary event-stream messages (ConverseStream's `application/vnd.amazon.eventstream` body) ->
 * events for the stream translator. Decoding, CRC checks included, is @smithy/eventstream-codec's; this
 * file only cuts the byte stream into whole messages (each starts with its total length, a big-endian
 * uint32) and names each event:
 *
 *   :message-type event      -> frame named by `:event-type`, the payload as data
 *   :message-type exception  -> frame named by `:exception-type` (throttlingException, ...)
 *   :message-type error      -> frame named `internalServerException` with `:error-message`
 */
import type * as SmithyCodec from '@smithy/eventstream-codec';
import type * as SmithyUtf8 from '@smithy/util-utf8';
import { onFirstUse, SseFrame, UpstreamError, type StreamDecoder } from '../../core/plugins/sdk';

export const EVENT_STREAM_CONTENT_TYPE = 'application/vnd.amazon.eventstream';

/** @smithy's codec, required at the first Bedrock stream: a gateway without Bedrock never loads it. */
const smithyModules = onFirstUse(() => ({
  EventStreamCodec: (require('@smithy/eventstream-codec') as typeof SmithyCodec).EventStreamCodec,
  utf8: require('@smithy/util-utf8') as typeof SmithyUtf8,
}));

/** A codec per decoder (it may keep state between messages); the modules are looked up once. */
function smithy(): { codec: SmithyCodec.EventStreamCodec; toUtf8: typeof SmithyUtf8.toUtf8 } {
  const { EventStreamCodec, utf8 } = smithyModules();
  return { codec: new EventStreamCodec(utf8.toUtf8, utf8.fromUtf8), toUtf8: utf8.toUtf8 };
}

/**
 * The largest message the format allows (AWS's event-stream library refuses bigger ones). A message's
 * first four bytes say its length: one that says more is not an event stream (a proxy's HTML page reads
 * as a gigabyte), and is refused at once instead of buffered until the body ends.
 */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export class EventStreamDecoder implements StreamDecoder {
  private readonly smithy = smithy();
  private readonly codec = this.smithy.codec;
  /** the bytes not decoded yet, joined */
  private pending: Buffer = Buffer.alloc(0);
  /** chunks that came while a long message waits for its end: joined once, when it is whole */
  private later: Buffer[] = [];
  private laterBytes = 0;
  /** the length of the message `pending` starts with, while it waits for more (0: not waiting) */
  private needed = 0;

  push(chunk: Uint8Array): SseFrame[] {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.needed > this.pending.length + this.laterBytes + bytes.length) {
      this.later.push(bytes);
      this.laterBytes += bytes.length;
      return [];
    }
    this.pending = this.pending.length === 0 && this.later.length === 0 ? bytes : Buffer.concat([this.pending, ...this.later, bytes]);
    this.later = [];
    this.laterBytes = 0;
    this.needed = 0;
    const frames: SseFrame[] = [];
    while (this.pending.length >= 4) {
      const length = this.pending.readUInt32BE(0);
      if (length > MAX_MESSAGE_BYTES) {
        throw new UpstreamError(`The Bedrock upstream sent no event stream: a message said it was ${length} bytes long, over the format's ${MAX_MESSAGE_BYTES}.`, 'upstream_bad_response');
      }
      if (this.pending.length < length) {
        this.needed = length;
        break;
      }
      let message;
      try {
        message = this.codec.decode(this.pending.subarray(0, length));
      } catch {
        throw new UpstreamError('The Bedrock upstream sent a damaged event-stream message.', 'upstream_bad_response');
      }
      this.pending = this.pending.subarray(length);
      frames.push(frameOf(message.headers, this.smithy.toUtf8(message.body)));
    }
    return frames;
  }

  end(): SseFrame[] {
    if (this.pending.length + this.laterBytes > 0) throw new UpstreamError('The Bedrock upstream ended the stream in the middle of a message.', 'upstream_stream_cut');
    return [];
  }
}

type Headers = Record<string, { type: string; value: unknown }>;

function frameOf(headers: Headers, body: string): SseFrame {
  const value = (name: string) => (typeof headers[name]?.value === 'string' ? (headers[name].value as string) : undefined);
  const kind = value(':message-type');
  if (kind === 'exception') return SseFrame.fromRaw(body || '{}', value(':exception-type') ?? 'internalServerException');
  if (kind === 'error') return SseFrame.fromJson({ message: value(':error-message') ?? value(':error-code') ?? '' }, 'internalServerException');
  return SseFrame.fromRaw(body || '{}', value(':event-type') ?? 'unknown');
}
