import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readConfigFile } from '../../../core/config/load-config';
import { ConfigError } from '../../../core/errors/gateway-error';

describe('review: a malformed JSON config file', () => {
  it('is reported without quoting the text around the error (it may be a literal secret)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mg-review-config-'));
    const file = path.join(dir, 'gateway.json');
    // a common slip: the secret written with single quotes
    writeFileSync(file, `{"organizations": [{"id": "o"}], "adminKey": 'sk-admin-REVIEW-secret-123'}\n`);
    const err = await readConfigFile(file).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message).to.include(`config file ${file} is not valid JSON`);
    expect(message).to.not.include('sk-admin');
    expect(message).to.not.include('REVIEW');
  });
});
