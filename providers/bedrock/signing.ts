/**
 * SigV4 for Bedrock with the AWS SDK's own signer: the final URL, headers and body bytes are signed on
 * every attempt (a retry gets a fresh date and signature). Credentials are the provider's static keys
 * when it has them, else the standard AWS chain (environment variables, the shared config and
 * credentials files with `profile` or AWS_PROFILE, SSO, web identity, container and instance roles),
 * which caches what it finds and refreshes it before it expires.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { UpstreamError, type PreparedRequest, type ProviderConfig } from '../../core/plugins/sdk';

type CredentialSource = ConstructorParameters<typeof SignatureV4>[0]['credentials'];

export const SIGNING_SERVICE = 'bedrock';

export function credentialSource(provider: ProviderConfig<string>): CredentialSource {
  if (provider.accessKeyId || provider.secretAccessKey) {
    if (!provider.accessKeyId || !provider.secretAccessKey) {
      throw new UpstreamError(`The gateway\u2019s Bedrock provider "${provider.id}" has only one of accessKeyId and secretAccessKey; ask the gateway operator to set both.`, 'provider_misconfigured');
    }
    return { accessKeyId: provider.accessKeyId, secretAccessKey: provider.secretAccessKey, sessionToken: provider.sessionToken };
  }
  return defaultProvider(provider.profile ? { profile: provider.profile } : {});
}

export function createSigner(region: string, credentials: CredentialSource): SignatureV4 {
  return new SignatureV4({ service: SIGNING_SERVICE, region, credentials, sha256: Sha256 });
}

export async function signRequest(signer: SignatureV4, request: PreparedRequest): Promise<PreparedRequest> {
  const url = new URL(request.url);
  // parameter names come from the URL: a table without a prototype, so `__proto__` is just a name
  const query: Record<string, string> = Object.create(null);
  for (const [name, value] of url.searchParams) query[name] = value;
  const signed = await signer.sign({
    method: request.method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port ? Number(url.port) : undefined,
    path: url.pathname,
    query,
    headers: { ...request.headers, host: url.host },
    body: request.body,
  });
  return { ...request, headers: signed.headers as Record<string, string> };
}
