/**
 * `model-gateway rotate-secret-key`: re-encrypt every stored secret under a new key.
 *
 * With a key file (the default): a new key is put first in the file, the old one kept after it (so every
 * secret stays readable, by this command and by running gateways, while the command works), every sealed
 * record is re-encrypted under the new key, then the old key is removed from the file. Running gateways
 * pick the new key up from the file when they first meet a value sealed with it. If the command stops
 * half-way, the file still holds both keys; run it again.
 *
 * With GATEWAY_SECRET_KEY: the environment cannot be rewritten from here, so the operator provides the
 * ring: set GATEWAY_SECRET_KEY=NEW,OLD on every instance, run this command with the same value, then set
 * GATEWAY_SECRET_KEY=NEW.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { ConfigError } from '../../errors/gateway-error';
import { openStore } from '../open-store';
import { writePrivateFileAtomic } from '../private-file';
import { SECRET_KEY_BYTES, SecretBox, keyIdOf } from './secret-box';
import { SEALED_COLLECTIONS, sealedCollection } from './sealed-collection';
import { SECRET_KEY_ENV, formatKeyFile, keySourceFor, parseKeyRing, readKeyFile } from './secret-key-source';

export interface RotationResult {
  /** the key id everything is now sealed with */
  keyId: string;
  /** key ids no longer needed */
  retiredKeyIds: string[];
  /** records re-encrypted */
  resealed: number;
  /** where the key ring lives: "GATEWAY_SECRET_KEY" or the key file's path */
  source: string;
}

export async function rotateSecretKey(storeUrl: string, env: NodeJS.ProcessEnv = process.env): Promise<RotationResult> {
  const source = keySourceFor(storeUrl, env);
  if (source.kind === 'ephemeral') throw new ConfigError('store.url', `${storeUrl} keeps nothing after the process ends: there is no stored secret to rotate`);
  if (source.kind === 'env') {
    const ring = parseKeyRing(env[SECRET_KEY_ENV]!, SECRET_KEY_ENV);
    if (ring.length < 2) {
      throw new ConfigError(
        SECRET_KEY_ENV,
        'holds one key. To rotate it, make a new key (openssl rand -base64 32), set GATEWAY_SECRET_KEY=NEW,OLD on every gateway instance and for this command, run it, then set GATEWAY_SECRET_KEY=NEW',
      );
    }
    const box = new SecretBox(ring, SECRET_KEY_ENV);
    const resealed = await resealStore(storeUrl, box);
    return { keyId: box.currentKeyId, retiredKeyIds: box.keyIds.slice(1), resealed, source: SECRET_KEY_ENV };
  }
  const { file } = source;
  if (!existsSync(file)) throw new ConfigError('secret key', `no key file at ${file}: the gateway has not stored a secret with it yet, so there is nothing to rotate`);
  const old = readKeyFile(file);
  const fresh = randomBytes(SECRET_KEY_BYTES);
  // both keys while re-encrypting: whatever is read meanwhile (here or by a running gateway) still opens
  writePrivateFileAtomic(file, formatKeyFile([fresh, ...old]));
  const box = new SecretBox([fresh, ...old], file);
  const resealed = await resealStore(storeUrl, box);
  writePrivateFileAtomic(file, formatKeyFile([fresh]));
  return { keyId: keyIdOf(fresh), retiredKeyIds: old.map(keyIdOf), resealed, source: file };
}

async function resealStore(storeUrl: string, box: SecretBox): Promise<number> {
  const store = await openStore(storeUrl, Date.now, { secretBox: box });
  try {
    let count = 0;
    for (const name of SEALED_COLLECTIONS) count += await sealedCollection(store, name).resealAll();
    return count;
  } finally {
    await store.close();
  }
}
