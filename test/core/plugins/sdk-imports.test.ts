import { expect } from 'chai';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../support/fixtures';

/** Folders whose code is plugin code: it may reach the engine only through core/plugins/sdk. */
const PLUGIN_FOLDERS = ['providers', 'guardrails', 'plugins', 'examples'];
const CORE = path.join(REPO_ROOT, 'core');
const SDK = path.join(CORE, 'plugins', 'sdk');

/** Every module specifier in a file: import/export ... from, side-effect imports, import(), require(). */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"]([^'"]+)['"]/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return name === 'node_modules' ? [] : sourceFiles(full);
    return /\.(ts|js|mjs|cjs)$/.test(name) ? [full] : [];
  });
}

/** "file:line: specifier" for each import of core/ that is not the SDK entry. */
function coreImportViolations(file: string, text = readFileSync(file, 'utf8')): string[] {
  const lines = text.split('\n');
  const found: string[] = [];
  lines.forEach((line, i) => {
    for (const match of line.matchAll(SPECIFIER)) {
      const spec = match[1];
      if (!spec.startsWith('.')) continue;
      const target = path.resolve(path.dirname(file), spec).replace(/\.(js|ts)$/, '');
      const intoCore = target === CORE || target.startsWith(CORE + path.sep);
      if (intoCore && target !== SDK) found.push(`${path.relative(REPO_ROOT, file)}:${i + 1}: ${spec}`);
    }
  });
  return found;
}

describe('plugins import the engine only through the SDK entry (core/plugins/sdk)', () => {
  for (const folder of PLUGIN_FOLDERS) {
    it(`no file under ${folder}/ imports a core/ internal`, () => {
      const violations = sourceFiles(path.join(REPO_ROOT, folder)).flatMap((file) => coreImportViolations(file));
      expect(violations, `import from core/plugins/sdk instead:\n${violations.join('\n')}`).to.deep.equal([]);
    });
  }

  it('names the file, line and specifier of each import that bypasses the SDK, whatever its form', () => {
    const file = path.join(REPO_ROOT, 'providers', 'demo', 'index.ts');
    const text = [
      "import { definePlugin } from '../../core/plugins/sdk';",
      "import { SseFrame } from '../../core/streaming/sse-frame';",
      "import type { ChatRequest } from '../../core';",
      "export { scrubMessage } from '../../core/errors/scrub.js';",
      "const lazy = () => import('../../core/upstream/egress');",
      "const { GatewayError } = require('../../core/errors/gateway-error');",
      "import { local } from './local';",
    ].join('\n');
    expect(coreImportViolations(file, text)).to.deep.equal([
      'providers/demo/index.ts:2: ../../core/streaming/sse-frame',
      'providers/demo/index.ts:3: ../../core',
      'providers/demo/index.ts:4: ../../core/errors/scrub.js',
      'providers/demo/index.ts:5: ../../core/upstream/egress',
      'providers/demo/index.ts:6: ../../core/errors/gateway-error',
    ]);
  });
});
