import { expect } from 'chai';
import { readdirSync } from 'node:fs';

/**
 * The gateway removes an edit's temporary files right after it has written the answer, so a client can
 * see the answer a moment before the removal: wait (up to 2 s) until the folder is empty.
 */
export async function expectNoTempFiles(dir: string): Promise<void> {
  for (let i = 0; i < 400 && readdirSync(dir).length > 0; i++) await new Promise((r) => setTimeout(r, 5));
  expect(readdirSync(dir)).to.deep.equal([]);
}
