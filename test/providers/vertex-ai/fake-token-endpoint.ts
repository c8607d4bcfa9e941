/**
 * A fake Google OAuth2 token endpoint: takes the JWT bearer grant a service account makes, verifies the
 * assertion's RS256 signature with the account's public key and its claims (issuer, scope, lifetime),
 * and issues numbered access tokens that live `expiresIn` seconds.
 */
import crypto from 'node:crypto';
import { CloudUpstream, json } from '../cloud-upstream';

export interface ServiceAccount {
  json: string;
  clientEmail: string;
}

export class FakeTokenEndpoint {
  readonly issued: string[] = [];
  readonly assertions: Record<string, unknown>[] = [];
  expiresIn = 3600;
  private readonly keys = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  readonly server = new CloudUpstream((request) => {
    const form = new URLSearchParams(request.raw.toString('utf8'));
    if (request.path !== '/token' || form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return json({ error: 'unsupported_grant_type' }, 400);
    const claims = this.verify(form.get('assertion') ?? '');
    if (!claims) return json({ error: 'invalid_grant', error_description: 'Invalid JWT Signature.' }, 400);
    this.assertions.push(claims);
    return undefined;
  });

  constructor(readonly clientEmail = 'gateway@test-project.iam.gserviceaccount.com') {
    this.server.reply(() => {
      const token = `ya29.fake-token-${this.issued.length + 1}`;
      this.issued.push(token);
      return json({ access_token: token, expires_in: this.expiresIn, token_type: 'Bearer' });
    });
  }

  async start(): Promise<this> {
    await this.server.start();
    return this;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  /** The service-account key file a gateway operator would paste, pointing at this endpoint. */
  serviceAccountJson(projectId = 'test-project'): string {
    return JSON.stringify({
      type: 'service_account',
      project_id: projectId,
      private_key_id: 'key-1',
      private_key: this.keys.privateKey.export({ type: 'pkcs8', format: 'pem' }),
      client_email: this.clientEmail,
      client_id: '1234567890',
      token_uri: `${this.server.url}/token`,
    });
  }

  private verify(assertion: string): Record<string, unknown> | undefined {
    const [header, payload, signature] = assertion.split('.');
    if (!header || !payload || !signature) return undefined;
    const ok = crypto.verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), this.keys.publicKey, Buffer.from(signature, 'base64url'));
    if (!ok) return undefined;
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, any>;
    const now = Date.now() / 1000;
    if (claims.iss !== this.clientEmail || !String(claims.scope).split(' ').includes('https://www.googleapis.com/auth/cloud-platform')) return undefined;
    if (!(claims.iat <= now + 60 && claims.exp > now)) return undefined;
    return claims;
  }
}
