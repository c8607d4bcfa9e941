import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SecretBox } from '../../../core/store/secrets/secret-box';
import { parseKeyRing } from '../../../core/store/secrets/secret-key-source';

describe('core/store/secrets/secret-box', () => {
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);

  it('seals under the first key of the ring and opens values sealed under any key of it', () => {
    const before = new SecretBox([oldKey], 'test');
    const sealed = before.seal('s3cret-CANARY', 'mcp_server_secrets/a');
    expect(JSON.stringify(sealed)).to.not.include('s3cret-CANARY');
    const ring = new SecretBox([newKey, oldKey], 'test');
    expect(ring.open(sealed, 'mcp_server_secrets/a')).to.equal('s3cret-CANARY');
    expect(ring.seal('x', 'c').kid).to.equal(ring.currentKeyId).and.not.equal(before.currentKeyId);
    expect(() => new SecretBox([newKey], 'test').open(sealed, 'mcp_server_secrets/a')).to.throw(/encrypted with key id [0-9a-f]{16}, which is not among the loaded keys/);
  });

  it('refuses a ciphertext moved to another record or altered', () => {
    const box = new SecretBox([oldKey], 'test');
    const sealed = box.seal('s3cret-CANARY', 'mcp_server_secrets/a');
    expect(() => box.open(sealed, 'mcp_server_secrets/b')).to.throw(/altered or moved/);
    const data = Buffer.from(sealed.data, 'base64');
    data[0] ^= 1;
    expect(() => box.open({ ...sealed, data: data.toString('base64') }, 'mcp_server_secrets/a')).to.throw(/altered or moved/);
  });

  it('reads keys as 64 hex digits or base64, and a comma-separated ring', () => {
    const ring = parseKeyRing(`${newKey.toString('hex')}, ${oldKey.toString('base64')}`, 'GATEWAY_SECRET_KEY');
    expect(ring.map((k) => k.toString('hex'))).to.deep.equal([newKey.toString('hex'), oldKey.toString('hex')]);
  });

  it('creates the key file once when many processes start on a new store at the same moment, and each reads it whole', async () => {
    // the workers of `--workers N` on a first start: before, one could read the file another had just
    // created and not yet written, and fail with "holds no key"
    const dir = mkdtempSync(path.join(tmpdir(), 'mg-keyrace-'));
    const source = require.resolve('../../../core/store/secrets/secret-key-source');
    const startAt = Date.now() + 1500;
    const script = `
      const { loadSecretBox } = require(${JSON.stringify(source)});
      while (Date.now() < ${startAt});
      try { process.stdout.write(loadSecretBox('sqlite://${dir}/gateway.db', {}).currentKeyId); }
      catch (err) { process.stdout.write('error: ' + err.message); }`;
    const outputs = await Promise.all(
      Array.from({ length: 8 }, () =>
        new Promise<string>((resolve) => {
          const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
          let out = '';
          child.stdout.on('data', (c: Buffer) => (out += c));
          child.on('exit', () => resolve(out));
        }),
      ),
    );
    expect(outputs.every((o) => /^[0-9a-f]{16}$/.test(o)), outputs.join(' | ')).to.equal(true);
    expect(new Set(outputs).size).to.equal(1);
    expect(readdirSync(dir)).to.deep.equal(['secret.key']);
  }).timeout(20_000);
});
