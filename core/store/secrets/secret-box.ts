/**
 * Encryption of secrets at rest: AES-256-GCM under a key ring. The first key of the ring encrypts; every
 * key of the ring decrypts, so a key can be rotated while values sealed under the previous one are still
 * read (see rotate-secret-key.ts). Each sealed value names the key it was sealed with by a key id, a
 * truncated hash of the key: it identifies the key without revealing anything usable about it.
 *
 * A value is sealed for one place (its collection and record id, the "context", authenticated as GCM
 * additional data), so a ciphertext copied to another record does not decrypt there.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { ConfigError } from '../../errors/gateway-error';

export const SECRET_KEY_BYTES = 32;
const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;

/** What the store holds instead of a secret: every field is base64 but `kid`. */
export interface SealedValue {
  sealed: typeof ALGORITHM;
  /** id of the key that sealed it */
  kid: string;
  iv: string;
  tag: string;
  data: string;
}

/** A sealed value that the loaded keys cannot open: at boot a config error, on a call the call's error. */
export class SecretKeyError extends ConfigError {
  constructor(message: string) {
    super('secret key', message);
    this.name = 'SecretKeyError';
  }
}

export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update('model-gateway secret key id\0').update(key).digest('hex').slice(0, 16);
}

export function isSealed(value: unknown): value is SealedValue {
  const v = value as Partial<SealedValue> | null;
  return typeof v === 'object' && v !== null && v.sealed === ALGORITHM && typeof v.kid === 'string' && typeof v.data === 'string';
}

export class SecretBox {
  private readonly keys = new Map<string, Buffer>();
  private current!: string;

  /**
   * @param ring keys, the one to encrypt with first
   * @param source where the keys came from, for error messages (never the keys themselves)
   * @param reread reads the ring again (a key file): a value sealed under a key this process has not
   *   loaded yet (rotated by another process) makes it look once more before failing
   */
  constructor(
    ring: readonly Buffer[],
    readonly source: string,
    private readonly reread?: () => Buffer[],
  ) {
    this.load(ring);
  }

  get currentKeyId(): string {
    return this.current;
  }

  private load(ring: readonly Buffer[]): void {
    if (ring.length === 0) throw new SecretKeyError(`no secret key in ${this.source}`);
    for (const key of ring) {
      if (key.length !== SECRET_KEY_BYTES) throw new SecretKeyError(`a key in ${this.source} is ${key.length} bytes; AES-256 needs ${SECRET_KEY_BYTES}`);
      this.keys.set(keyIdOf(key), key);
    }
    this.current = keyIdOf(ring[0]);
  }

  /** A fresh random key that lives only in this process (memory:// stores: nothing outlives it anyway). */
  static ephemeral(): SecretBox {
    return new SecretBox([randomBytes(SECRET_KEY_BYTES)], 'an in-process key');
  }

  get keyIds(): string[] {
    return [...this.keys.keys()];
  }

  seal(plaintext: string, context: string): SealedValue {
    // writes are rare (management API): look at the key file each time, so a gateway that is running
    // while the key is rotated seals under the new key, never under one the file no longer holds
    if (this.reread) this.load(this.reread());
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.keys.get(this.currentKeyId)!, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { sealed: ALGORITHM, kid: this.currentKeyId, iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') };
  }

  /**
   * A 32-byte key for another job (signing, say), derived from the current key with HKDF-SHA256 and the
   * job's name: the same on every instance that shares the key ring, and never the encryption key itself.
   * Undefined when the box has no real key.
   */
  deriveKey(purpose: string): Buffer | undefined {
    return Buffer.from(hkdfSync('sha256', this.keys.get(this.current)!, Buffer.alloc(0), purpose, SECRET_KEY_BYTES));
  }

  open(value: SealedValue, context: string): string {
    if (!this.keys.has(value.kid) && this.reread) this.load(this.reread());
    const key = this.keys.get(value.kid);
    if (!key) {
      throw new SecretKeyError(
        `a stored secret (${context}) was encrypted with key id ${value.kid}, which is not among the loaded keys (${this.keyIds.join(', ')}, from ${this.source}); ` +
          'set GATEWAY_SECRET_KEY or restore the key file that was in use when it was stored',
      );
    }
    try {
      const decipher = createDecipheriv(ALGORITHM, key, Buffer.from(value.iv, 'base64'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(value.tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(value.data, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretKeyError(`a stored secret (${context}) does not decrypt under key id ${value.kid}: it was altered or moved from another record`);
    }
  }
}

/**
 * The box of a store opened without a key (a backend built directly, not through openStore): sealing
 * fails loudly instead of writing a secret in clear.
 */
export class NoSecretBox extends SecretBox {
  constructor() {
    super([Buffer.alloc(SECRET_KEY_BYTES)], 'nowhere');
  }
  override seal(): SealedValue {
    throw new SecretKeyError('this store was opened without a secret key, so it cannot store secrets');
  }
  override open(): string {
    throw new SecretKeyError('this store was opened without a secret key, so it cannot read stored secrets');
  }
  /** its key is all zeros, known to anyone: nothing may be derived from it */
  override deriveKey(_purpose: string): undefined {
    return undefined;
  }
}
