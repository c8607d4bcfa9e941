/**
 * OAuth2 access tokens for Vertex AI, from google-auth-library:
 *
 * - with `credentials` (a service-account key file's JSON): the JWT bearer grant, signed with the key;
 *   the library caches the token and fetches a new one shortly before it expires. The grant goes to the
 *   key file's `token_uri` (Google's endpoint in real key files; a private or test endpoint otherwise):
 *   the library always addresses Google's, so its HTTP requests for that one URL are sent to `token_uri`.
 * - without: the host's application default credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's
 *   login, the metadata server on Google Cloud).
 */
import type * as GoogleAuthLibrary from 'google-auth-library';
import { onFirstUse, UpstreamError, type HttpFetch } from '../../core/plugins/sdk';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
/** where google-auth-library sends the JWT grant, whatever the key file says */
const LIBRARY_TOKEN_URL = 'https://oauth2.googleapis.com/token';

export interface TokenSource {
  token(): Promise<string>;
  /**
   * Vertex refused a token (401): forget the cached one, so the next token() fetches another. The library
   * only refreshes near the expiry, so a revoked token (or one a skewed clock keeps too long) failed
   * every request for up to an hour.
   */
  drop(): void;
  /** the project named in the key file, the default for a provider without `project` */
  readonly projectId?: string;
}

interface ServiceAccountKey {
  type?: string;
  client_email?: string;
  private_key?: string;
  private_key_id?: string;
  token_uri?: string;
  project_id?: string;
}

/**
 * google-auth-library (with gaxios and gcp-metadata, megabytes of heap) is required here, when a Vertex
 * provider first needs a token source, so a gateway without Vertex AI never loads it.
 */
const googleAuth = onFirstUse(() => require('google-auth-library') as typeof GoogleAuthLibrary);

export function tokenSource(credentials: string | undefined, fetch: HttpFetch, providerId: string): TokenSource {
  if (!credentials) {
    const { GoogleAuth } = googleAuth();
    const newAuth = () => new GoogleAuth({ scopes: [CLOUD_PLATFORM_SCOPE] });
    let auth = newAuth();
    return {
      token: async () => tokenOf(await auth.getAccessToken()),
      drop: () => void (auth = newAuth()),
    };
  }
  const key = parseKey(credentials, providerId);
  const tokenUri = key.token_uri ?? LIBRARY_TOKEN_URL;
  const { JWT } = googleAuth();
  // a new client is the way to forget a token: the JWT client's own cache and its GoogleToken's both
  // hold it, and clearing the client's credentials alone gets the same token back from the other
  const newClient = () =>
    new JWT({
      email: key.client_email,
      key: key.private_key,
      keyId: key.private_key_id,
      scopes: [CLOUD_PLATFORM_SCOPE],
      transporterOptions: {
        fetchImplementation: ((input: string | URL, init?: RequestInit) => fetch(String(input) === LIBRARY_TOKEN_URL ? tokenUri : input, init)) as typeof globalThis.fetch,
      },
    });
  let client = newClient();
  return {
    token: async () => tokenOf((await client.getAccessToken()).token),
    drop: () => void (client = newClient()),
    projectId: key.project_id,
  };
}

function parseKey(credentials: string, providerId: string): ServiceAccountKey {
  let key: ServiceAccountKey;
  try {
    key = JSON.parse(credentials) as ServiceAccountKey;
  } catch {
    throw misconfigured(providerId, 'is not JSON');
  }
  if (key?.type !== 'service_account' || typeof key.client_email !== 'string' || typeof key.private_key !== 'string') {
    throw misconfigured(providerId, 'is not a service-account key (type "service_account" with client_email and private_key)');
  }
  return key;
}

function misconfigured(providerId: string, what: string): UpstreamError {
  return new UpstreamError(`The gateway\u2019s Vertex AI provider "${providerId}" has credentials that ${what}; ask the gateway operator to fix them.`, 'provider_misconfigured');
}

function tokenOf(token: string | null | undefined): string {
  if (!token) throw new Error('no access token');
  return token;
}
