/**
 * A fake Bedrock runtime: checks every request's SigV4 signature by signing the same request again with
 * the AWS SDK's signer and the expected credentials (403 InvalidSignatureException in Bedrock's shape
 * when they differ), and answers Converse with JSON and ConverseStream with binary event-stream frames
 * encoded by the AWS codec, cut into small pieces so the gateway reassembles them.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { SignatureV4 } from '@smithy/signature-v4';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { CloudUpstream, json, type Answer, type RecordedRequest } from '../cloud-upstream';

export interface AwsKeys {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export class FakeBedrock {
  readonly server: CloudUpstream;
  /** what the last signature check found */
  readonly checks: { ok: boolean; credentialScope: string }[] = [];

  constructor(
    readonly keys: AwsKeys,
    readonly region = 'us-east-1',
  ) {
    this.server = new CloudUpstream(() => undefined);
  }

  async start(): Promise<this> {
    await this.server.start();
    return this;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  /** Answer with `answer` when the signature verifies. */
  reply(script: (request: RecordedRequest) => Answer): void {
    this.server.reply((request) => {
      return async (res, req) => {
        if (!(await this.verify(request))) {
          res.writeHead(403, { 'content-type': 'application/json', 'x-amzn-errortype': 'InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/' });
          res.end(JSON.stringify({ message: 'The request signature we calculated does not match the signature you provided.' }));
          return;
        }
        await script(req)(res, req);
      };
    });
  }

  private async verify(request: RecordedRequest): Promise<boolean> {
    const authorization = String(request.headers.authorization ?? '');
    const parsed = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(authorization);
    const amzDate = String(request.headers['x-amz-date'] ?? '');
    if (!parsed || !/^\d{8}T\d{6}Z$/.test(amzDate)) {
      this.checks.push({ ok: false, credentialScope: '' });
      return false;
    }
    const [, keyId, , region, service, signedHeaders] = parsed;
    const headers: Record<string, string> = {};
    for (const name of signedHeaders.split(';')) headers[name] = String(request.headers[name] ?? '');
    const url = new URL(request.path, this.server.url);
    const query: Record<string, string> = {};
    for (const [k, v] of url.searchParams) query[k] = v;
    const signer = new SignatureV4({ service: 'bedrock', region: this.region, credentials: this.keys, sha256: Sha256 });
    const signingDate = new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
    const expected = await signer.sign(
      { method: request.method, protocol: 'http:', hostname: '127.0.0.1', port: this.server.port, path: url.pathname, query, headers, body: request.raw },
      { signingDate, unsignableHeaders: new Set(), signableHeaders: new Set(signedHeaders.split(';')) },
    );
    const ok = keyId === this.keys.accessKeyId && region === this.region && service === 'bedrock' && expected.headers.authorization === authorization && (this.keys.sessionToken === undefined || request.headers['x-amz-security-token'] === this.keys.sessionToken);
    this.checks.push({ ok, credentialScope: `${keyId}/${region}/${service}` });
    return ok;
  }
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

function header(value: string) {
  return { type: 'string' as const, value };
}

/** One ConverseStream event as AWS frames it. */
export function eventMessage(event: string, data: unknown): Uint8Array {
  return codec.encode({ headers: { ':message-type': header('event'), ':event-type': header(event), ':content-type': header('application/json') }, body: fromUtf8(JSON.stringify(data)) });
}

export function exceptionMessage(type: string, message: string): Uint8Array {
  return codec.encode({ headers: { ':message-type': header('exception'), ':exception-type': header(type), ':content-type': header('application/json') }, body: fromUtf8(JSON.stringify({ message })) });
}

/** The frames in pieces of `piece` bytes, each written on its own, so messages straddle chunks. */
export function eventStream(messages: Uint8Array[], piece = 17): Answer {
  return (res) => {
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'req-1' });
    const all = Buffer.concat(messages);
    for (let at = 0; at < all.length; at += piece) res.write(all.subarray(at, at + piece));
    res.end();
  };
}

export { json };
