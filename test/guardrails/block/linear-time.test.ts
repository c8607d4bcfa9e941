import { expect } from 'chai';
import block from '../../../guardrails/block';
import { createEngine, input, never } from '../harness';

const SIZE = 100 * 1024;

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = process.hrtime.bigint();
  const value = await fn();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, value };
}

describe('block engine: operator patterns run on a linear-time engine', () => {
  it('checks 100 KB of crafted text against a pattern that backtracks quadratically in JavaScript', async () => {
    // On a backtracking engine every start position scans the whole run of letters: about 10^10 steps.
    const engine = await createEngine(block, { patterns: ['[a-z]+@example\\.com'] });
    const { ms, value } = await timed(async () => engine.check(input(['a'.repeat(SIZE)]), never));
    expect(value).to.deep.equal({ action: 'allow' });
    expect(ms).to.be.below(1000);
    expect((await engine.check(input(['mail bob@example.com']), never)).action).to.equal('block');
  });

  it('refuses at boot a pattern the linear-time engine cannot run, naming its option path', async () => {
    for (const pattern of ['secret(?=\\d)', '(a)\\1']) {
      let error: Error | undefined;
      try {
        await createEngine(block, { patterns: ['ok', pattern] }, 'guardrails[1].options');
      } catch (err) {
        error = err as Error;
      }
      expect(error?.name, pattern).to.equal('PluginError');
      expect(error?.message).to.match(/^guardrails\[1\]\.options\.patterns\[1\]: the linear-time pattern engine \(RE2\) cannot run this pattern/);
    }
  });
});
