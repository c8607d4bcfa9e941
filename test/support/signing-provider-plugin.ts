/**
 * A provider plugin for tests of the two provider hooks, loaded through the config's `plugins` list.
 * `prepareRequest` fetches a bearer token from a token endpoint (cached until it expires, by the plugin
 * clock) and signs the final method, URL and body bytes with HMAC-SHA256 keyed by the provider's apiKey,
 * as SigV4 does over the real bytes. Its chat streams arrive as length-prefixed binary frames
 * (`application/x-frames`: 4-byte big-endian length, then a JSON document) with no end marker: the body
 * ending at a frame boundary is the end, which its decoder's `end()` reports as a `done` event.
 */
import { createHmac } from 'node:crypto';
import { definePlugin, SseFrame, UpstreamError, type ChatRequest, type PreparedRequest, type Provider, type StreamDecoder } from '../../core/plugins/sdk';

interface Options {
  tokenUrl: string;
  /** throw from the hook with this text (a stand-in for a credential) in the message */
  failWith?: string;
}

export function signatureOf(secret: string, method: string, url: string, body: Uint8Array | undefined): string {
  return createHmac('sha256', secret).update(`${method}\n${url}\n`).update(body ?? new Uint8Array()).digest('hex');
}

/** 4-byte big-endian length + payload, possibly split anywhere across chunks. */
export class LengthPrefixedDecoder implements StreamDecoder {
  private buffer = Buffer.alloc(0);
  push(chunk: Uint8Array): SseFrame[] {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    const frames: SseFrame[] = [];
    while (this.buffer.length >= 4 && this.buffer.length >= 4 + this.buffer.readUInt32BE(0)) {
      const length = this.buffer.readUInt32BE(0);
      const payload = JSON.parse(this.buffer.subarray(4, 4 + length).toString('utf8'));
      frames.push(SseFrame.fromJson(payload.chunk ?? {}, payload.kind));
      this.buffer = this.buffer.subarray(4 + length);
    }
    return frames;
  }
  end(): SseFrame[] {
    if (this.buffer.length > 0) throw new Error('the stream ended inside a frame');
    return [SseFrame.fromJson({}, 'done')];
  }
}

export default definePlugin<'provider', Options, Provider>({
  kind: 'provider',
  id: 'signed-llm',
  apiVersion: 1,
  optionsSchema: { type: 'object', additionalProperties: false, required: ['tokenUrl'], properties: { tokenUrl: { type: 'string' }, failWith: { type: 'string' } } },
  create(options, deps) {
    let token: { value: string; expiresAt: number } | undefined;
    async function bearer(signal: AbortSignal): Promise<string> {
      if (token && token.expiresAt > deps.clock.now()) return token.value;
      const res = await deps.fetch(options.tokenUrl, { method: 'POST', signal });
      const body = (await res.json()) as { access_token: string; expires_in: number };
      token = { value: body.access_token, expiresAt: deps.clock.now() + body.expires_in * 1000 };
      return token.value;
    }
    return {
      operations: {
        chat: {
          toUpstream: (request: ChatRequest, target) => ({
            path: '/generate?deployment=' + encodeURIComponent(target.model.model),
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ ...request, model: target.model.model }),
          }),
          fromUpstream: (body) => body,
          streamDecoder: (contentType) => (contentType.startsWith('application/x-frames') ? new LengthPrefixedDecoder() : undefined),
          fromUpstreamEvent: (frame) => (frame.event === 'done' ? SseFrame.fromRaw('[DONE]') : SseFrame.fromRaw(frame.data)),
        },
      },
      async prepareRequest(request: PreparedRequest, target, signal): Promise<PreparedRequest> {
        if (options.failWith) throw new Error(`token endpoint refused ${options.failWith}`);
        const headers: Record<string, string> = { ...request.headers, authorization: `Bearer ${await bearer(signal)}` };
        headers['x-signature'] = signatureOf(target.provider.apiKey ?? '', request.method, request.url, request.body);
        return { ...request, headers };
      },
      toError: (status) => new UpstreamError(`signed-llm failed with status ${status}`),
    };
  },
});
