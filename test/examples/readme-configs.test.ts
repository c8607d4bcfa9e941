import 'reflect-metadata';
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { readConfigFile, resolveConfig } from '../../core/config/load-config';
import type { GatewayConfigInput } from '../../core/config/types';
import { unusedGuardrails } from '../../core/cli/unused-guardrails';
import { startGateway } from '../support/start-gateway';
import { REPO_ROOT } from '../support/fixtures';

/**
 * Every config block in the README is a file under examples/config/, quoted whole, and each file loads
 * (shape, env() markers, references) and starts a gateway that answers readiness.
 */
const DIR = path.join(REPO_ROOT, 'examples', 'config');
const FILES = readdirSync(DIR).filter((f) => f.endsWith('.ts')).sort();
const README = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');

/** the ```ts blocks of the README that are configs (a defineConfig call, or a top-level config field) */
function readmeConfigBlocks(): string[] {
  const blocks = [...README.matchAll(/```ts\n([\s\S]*?)```\n/g)].map((m) => m[1]);
  return blocks.filter((b) => /defineConfig\(|^(?:server|store|adminKey|organizations|keys|providers|models|mcpServers|guardrails|mcp|routing|timeouts|responses|images|plugins): /m.test(b));
}

describe('README config examples (examples/config)', () => {
  it('has one file per README config block, each quoted whole', () => {
    expect(FILES.length).to.be.at.least(3);
    const contents = FILES.map((f) => readFileSync(path.join(DIR, f), 'utf8'));
    const blocks = readmeConfigBlocks();
    expect(blocks.length).to.equal(FILES.length);
    for (const block of blocks) expect(contents, `README block not under examples/config:\n${block}`).to.include(block);
    for (const f of FILES) expect(README, f).to.include(`\`examples/config/${f}\``);
  });

  for (const file of FILES) {
    it(`${file} loads and starts a gateway`, async () => {
      const source = readFileSync(path.join(DIR, file), 'utf8');
      // every env('NAME') the example uses gets a stand-in value
      const env: NodeJS.ProcessEnv = Object.fromEntries([...source.matchAll(/env\('([A-Z0-9_]+)'\)/g)].map((m) => [m[1], `sk-example-${m[1].toLowerCase()}`]));
      const input = (await readConfigFile(path.join(DIR, file))) as GatewayConfigInput;
      // resolved as the gateway would (shape, env() values, references); no example has a guardrail that applies to nobody
      const resolved = resolveConfig(input, env, DIR);
      expect(unusedGuardrails(resolved.guardrails, resolved.keys)).to.deep.equal([]);
      // run on a throwaway store and a free loopback port, whatever the example says
      const gw = await startGateway({ ...input, store: { url: 'memory://' } }, { env, baseDir: DIR });
      try {
        expect((await fetch(`${gw.url}/health/readiness`)).status).to.equal(200);
        const key = resolved.keys[0].key;
        const res = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
        expect(res.status).to.equal(200);
        const listed = ((await res.json()) as { data: { id: string }[] }).data.map((m) => m.id);
        // the key's model restrictions apply: what it lists is some of the configured models
        expect(resolved.models.map((m) => m.name)).to.include.members(listed);
        expect(listed.length > 0).to.equal(resolved.models.length > 0);
      } finally {
        await gw.close();
      }
    });
  }
});
