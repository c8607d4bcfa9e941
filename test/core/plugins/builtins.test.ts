import { expect } from 'chai';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { BUILTIN_PLUGINS } from '../../../core/plugins/builtins';
import { REPO_ROOT } from '../../support/fixtures';

const FOLDERS: Record<string, string> = { providers: 'provider', guardrails: 'guardrail', plugins: 'mcp-transport' };

describe('built-in plugin list', () => {
  for (const [folder, kind] of Object.entries(FOLDERS)) {
    it(`lists every folder of ${folder}/ (the folder name is the plugin id)`, () => {
      const dir = path.join(REPO_ROOT, folder);
      const ids = readdirSync(dir).filter((name) => statSync(path.join(dir, name)).isDirectory());
      const registered = BUILTIN_PLUGINS.filter((p) => p.kind === kind).map((p) => p.id);
      for (const id of ids) expect(registered, `${folder}/${id} is missing from core/plugins/builtins.ts`).to.include(id);
    });
  }

  it('has unique ids per kind and apiVersion 1', () => {
    const keys = BUILTIN_PLUGINS.map((p) => `${p.kind}:${p.id}`);
    expect(new Set(keys).size).to.equal(keys.length);
    expect(BUILTIN_PLUGINS.every((p) => p.apiVersion === 1)).to.equal(true);
  });
});
