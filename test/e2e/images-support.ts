import { expect } from 'chai';
import { readdirSync } from 'node:fs';

/**
 * The gateway removes an edit's temporary files right after it has written the answer, so a client can
 * see the answer a moment before the removal: wait until the folder is empty. Up to 10 s: the removal
 * waits for the file's writes and close, which a disk busy with other work (a CI host running several
 * suites) held for over 2 s once; a file left behind for good still fails.
 */
export async function expectNoTempFiles(dir: string): Promise<void> {
  for (const until = Date.now() + 10_000; readdirSync(dir).length > 0 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 5));
  expect(readdirSync(dir)).to.deep.equal([]);
}
