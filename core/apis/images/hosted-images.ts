import { randomBytes } from 'node:crypto';
import type Keyv from 'keyv';
import type { Clock } from '../../plugins/contracts';
import type { StoreBackend } from '../../store/store-backend';

export interface HostedImage {
  bytes: Buffer;
  mimeType: string;
  expiresAt: number;
}

interface StoredImage {
  data: string;
  mimeType: string;
  expiresAt: number;
}

/** What a hosted image is called in its URL: 192 random bits, and the file type's extension. */
const FILE_NAME = /^([A-Za-z0-9_-]{32})\.(png|jpeg|webp|gif)$/;

/**
 * Images an upstream returned inline (`b64_json`) to a client that asked for a `url`: kept in the store
 * (keyv, so several gateway instances on Redis share them) under an unguessable id, until they expire.
 * The id is the only credential the URL needs. Expiry is checked against the gateway's clock; the
 * store's own TTL frees the space.
 */
export class HostedImages {
  private readonly kv: Keyv;

  constructor(store: StoreBackend, private readonly clock: Clock, private readonly ttlMs: number) {
    this.kv = store.keyv('hosted-images');
  }

  /** Store an image; returns its file name (`<id>.<ext>`). */
  async put(bytes: Buffer, mimeType: string): Promise<string> {
    const id = randomBytes(24).toString('base64url');
    const value: StoredImage = { data: bytes.toString('base64'), mimeType, expiresAt: this.clock.now() + this.ttlMs };
    await this.kv.set(id, value, this.ttlMs);
    return `${id}.${extensionOf(mimeType)}`;
  }

  async get(fileName: string): Promise<HostedImage | undefined> {
    const match = FILE_NAME.exec(fileName);
    if (!match) return undefined;
    const stored = await this.kv.get<StoredImage>(match[1]);
    if (!stored || stored.expiresAt <= this.clock.now() || extensionOf(stored.mimeType) !== match[2]) return undefined;
    return { bytes: Buffer.from(stored.data, 'base64'), mimeType: stored.mimeType, expiresAt: stored.expiresAt };
  }
}

function extensionOf(mimeType: string): string {
  return mimeType.slice('image/'.length);
}
