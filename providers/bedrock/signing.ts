/**
 * SigV4 for Bedrock with the AWS SDK's own signer: the final URL, headers and body bytes are signed on
 * every attempt (a retry gets a fresh date and signature). Credentials are the provider's static keys
 * when it has them, else the standard AWS chain (environment variables, the shared config and
 * credentials files with `profile` or AWS_PROFILE, SSO, web identity, container and instance roles),
 * which caches what it finds and refreshes it before it expires.
 */
import type * as AwsSha256 from '@aws-crypto/sha256-js';
import type * as AwsCredentials from '@aws-sdk/credential-provider-node';
import type { SignatureV4 } from '@smithy/signature-v4';
import type * as SmithySigner from '@smithy/signature-v4';
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
  const { defaultProvider } = require('@aws-sdk/credential-provider-node') as typeof AwsCredentials;
  return defaultProvider(provider.profile ? { profile: provider.profile } : {});
}

// The AWS packages are required here, when a Bedrock provider is first set up, not when the gateway
// starts: a gateway without Bedrock never holds their code (megabytes of heap).
export function createSigner(region: string, credentials: CredentialSource): SignatureV4 {
  const { SignatureV4: Signer } = require('@smithy/signature-v4') as typeof SmithySigner;
  const { Sha256 } = require('@aws-crypto/sha256-js') as typeof AwsSha256;
  return new Signer({ service: SIGNING_SERVICE, region, credentials, sha256: Sha256 });
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
