import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The repository root, whether a test runs from test/ (sources) or dist/test/ (compiled). */
export const REPO_ROOT = path.resolve(__dirname, __dirname.includes(`${path.sep}dist${path.sep}`) ? '../../..' : '../..');

export function fixturePath(...parts: string[]): string {
  return path.join(REPO_ROOT, 'test', 'fixtures', ...parts);
}

export function readFixture<T = any>(...parts: string[]): T {
  return JSON.parse(readFileSync(fixturePath(...parts), 'utf8')) as T;
}
