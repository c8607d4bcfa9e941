import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's chromium package; `.ci/run` installs it. */
export const CHROMIUM = '/usr/bin/chromium';

/** Where browser tests write screenshots for a reviewer (git-ignored, not committed). */
export const SCREENSHOT_DIR = path.resolve('test-screenshots');

/**
 * A headless Chromium driven by playwright-core, with a fresh profile that is removed on close. Without
 * chromium the suite fails with one line saying what to install (CI treats a skip as a failure).
 */
export async function launchBrowser(options: { timezoneId?: string } = {}): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: the browser tests need Debian's chromium (apt-get install chromium)`);
  const profile = mkdtempSync(path.join(os.tmpdir(), 'mg-chromium-'));
  // playwright passes the profile as --user-data-dir (it refuses that flag in `args`)
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    timezoneId: options.timezoneId,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
