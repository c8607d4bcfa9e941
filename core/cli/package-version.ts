import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The version of the installed package (`model-gateway --version`), read from its package.json: the
 * compiled module is in dist/core/cli/, three folders below the package root, and the package.json is the one
 * npm installed (it is always in a published package), so the number cannot drift from a copy in code.
 */
export function packageVersion(): string {
  const file = path.join(__dirname, '..', '..', '..', 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}
