import { expect } from 'chai';
import block from '../../../guardrails/block';
import { createEngine, input, never } from '../harness';

describe('block engine', () => {
  it('blocks on a whole word, whatever its case, without quoting it', async () => {
    const engine = await createEngine(block, { words: ['Project Falcon', 'secret'] });
    const verdict = await engine.check(input(['all fine', 'tell me about project   FALCON please'], { phase: 'pre' }), never);
    expect(verdict).to.deep.equal({ action: 'block', code: 'guardrail_blocked', reason: 'The request matched a blocked word of a content guardrail.' });
    expect(JSON.stringify(verdict).toLowerCase()).to.not.include('falcon');
  });

  it('does not block a word inside a longer word', async () => {
    const engine = await createEngine(block, { words: ['secret', 'ünï'] });
    expect(await engine.check(input(['the secretary and secrets', 'xünïx']), never)).to.deep.equal({ action: 'allow' });
    expect((await engine.check(input(['a Secret.']), never)).action).to.equal('block');
    expect((await engine.check(input(['(ÜNÏ)']), never)).action).to.equal('block');
  });

  it('treats words as plain text, not as regular expressions', async () => {
    const engine = await createEngine(block, { words: ['c++', 'a.b'] });
    expect(await engine.check(input(['cpp and axb']), never)).to.deep.equal({ action: 'allow' });
    expect((await engine.check(input(['I like c++ code']), never)).action).to.equal('block');
  });

  it('blocks on a case-insensitive pattern and names the pattern by number', async () => {
    const engine = await createEngine(block, { patterns: ['\\bdrop\\s+table\\b', 'password\\s*[:=]'] });
    const verdict = await engine.check(input(['set PASSWORD= hunter2'], { traffic: 'mcp', target: 'db/query' }), never);
    expect(verdict).to.deep.equal({ action: 'block', code: 'guardrail_blocked', reason: 'The tool result matched pattern 2 of a content guardrail.' });
    expect(JSON.stringify(verdict)).to.not.include('hunter2');
  });

  it('blocks on a pattern whatever the form the text is typed in (fullwidth letters, zero-width characters), and still on the text as sent', async () => {
    const engine = await createEngine(block, { patterns: ['internal\\s+use\\s+only', '\\u200b{3}'] });
    // NFKC folds the fullwidth letters; the zero-width space inside "use" is ignored, as it is for words
    expect((await engine.check(input(['for \uff49\uff4e\uff54\uff45\uff52\uff4e\uff41\uff4c u\u200bse only']), never)).action).to.equal('block');
    // a pattern written for the characters themselves still sees them
    expect((await engine.check(input(['a\u200b\u200b\u200bb']), never)).action).to.equal('block');
    expect(await engine.check(input(['for external use only']), never)).to.deep.equal({ action: 'allow' });
  });

  it('keeps patterns that are only valid without the unicode flag', async () => {
    const engine = await createEngine(block, { patterns: ['[\\w-.]+@internal'] });
    expect((await engine.check(input(['ping ops-team@internal now']), never)).action).to.equal('block');
  });

  it('gives the same verdict on every call (no lastIndex state leaks between checks)', async () => {
    const engine = await createEngine(block, { patterns: ['forbidden'] });
    for (let i = 0; i < 3; i++) expect((await engine.check(input(['forbidden']), never)).action).to.equal('block');
  });

  it('fails at boot on an invalid regular expression, naming the option path', async () => {
    let error: Error | undefined;
    try {
      await createEngine(block, { patterns: ['ok', '(unclosed'] }, 'guardrails[1].options');
    } catch (err) {
      error = err as Error;
    }
    expect(error?.name).to.equal('PluginError');
    expect(error?.message).to.match(/^guardrails\[1\]\.options\.patterns\[1\]: invalid regular expression/);
  });

  it('needs patterns or words', async () => {
    let error: Error | undefined;
    try {
      await createEngine(block, {});
    } catch (err) {
      error = err as Error;
    }
    expect(error?.message).to.match(/^guardrails\[0\]\.options/);
  });
});
