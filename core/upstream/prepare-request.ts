import { GatewayError, UpstreamError } from '../errors/gateway-error';
import type { PreparedRequest, UpstreamRequest } from '../plugins/contracts';

/** A provider's `prepareRequest`, bound to its target (core/upstream/call-deployment.ts binds it). */
export type PrepareHook = (request: PreparedRequest, signal: AbortSignal) => PreparedRequest | Promise<PreparedRequest>;

/**
 * The request as it will go on the wire, run through the provider's hook. The body is handed over as
 * bytes because a signature covers the exact bytes sent; a body streamed from the client (an image
 * edit's files) is gathered first, which only providers with a hook pay for.
 */
export async function prepareForWire(baseUrl: string, req: UpstreamRequest, hook: PrepareHook, signal: AbortSignal): Promise<PreparedRequest> {
  const wire: PreparedRequest = { url: baseUrl + req.path, method: req.method ?? 'POST', headers: { ...req.headers }, body: await bytesOf(req.body) };
  try {
    return await untilAborted(Promise.resolve().then(() => hook(wire, signal)), signal);
  } catch (err) {
    if (err instanceof GatewayError || signal.aborted) throw err;
    // The hook's own message may quote a credential or a token endpoint's answer: the operator finds the
    // cause in the provider's configuration, the client learns only which side failed.
    throw new UpstreamError('The gateway could not authenticate the request to the upstream (preparing it failed).', 'upstream_auth_failed', { cause: err });
  }
}

async function bytesOf(body: UpstreamRequest['body']): Promise<Uint8Array | undefined> {
  if (body === undefined || body instanceof Uint8Array) return body;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** A hook that ignores its signal must still not hold the attempt past its deadline or the client's exit. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
