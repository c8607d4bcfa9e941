import { expect } from 'chai';
import piiMask from '../../../guardrails/pii-mask';
import { RECOGNIZERS, type PiiEntity } from '../../../guardrails/pii-mask/recognizers';
import { createEngine, input, never } from '../harness';
import { ADVERSARIAL } from './adversarial';

const SIZE = 100 * 1024;
// Linear recognizers take a few ms to tens of ms on 100 KB; the backtracking ones took tens of seconds.
const BOUND_MS = 1000;

function elapsedMs(fn: () => unknown): number {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

describe('pii-mask recognizers run in linear time on adversarial input', () => {
  for (const [entity, makers] of Object.entries(ADVERSARIAL) as [PiiEntity, readonly ((n: number) => string)[]][]) {
    it(`${entity}: each crafted 100 KB input for its patterns, and every other recognizer on it`, () => {
      for (const [i, make] of makers.entries()) {
        const text = make(SIZE);
        expect(text.length).to.be.at.least(SIZE);
        for (const recognizer of Object.values(RECOGNIZERS)) {
          const ms = elapsedMs(() => recognizer.find(text));
          expect(ms, `${recognizer.entity} on ${entity} input ${i}`).to.be.below(BOUND_MS);
        }
      }
    });
  }

  it('resolves overlaps in linear time: 400 KB of short values (tens of thousands of matches) is masked quickly', async () => {
    // Comparing every match with every kept one took ~30 s here; marking covered characters takes ms.
    const engine = await createEngine(piiMask, {});
    for (const unit of ['a@b.co ', '1.1.1.1 ']) {
      const text = unit.repeat(Math.ceil((400 * 1024) / unit.length));
      const start = process.hrtime.bigint();
      const verdict = await engine.check(input([text]), never);
      expect(Number(process.hrtime.bigint() - start) / 1e6, unit).to.be.below(3000);
      expect(verdict.action).to.equal('mask');
      const masked = verdict.action === 'mask' ? verdict.segments[0].text : '';
      expect(masked.split(' ').filter((w) => w.startsWith('[')).length, unit).to.equal(Math.ceil((400 * 1024) / unit.length));
    }
  });
});

describe('pii-mask checks one run of millions of characters (up to the 10 MiB body limit)', () => {
  // V8 keeps one backtrack entry per repetition of a group or of `{n,}`; a run of a few million
  // overflowed its stack and the text was refused as "could not check" (or passed unmasked).
  it('EMAIL: millions of dotted characters, then an address', async () => {
    const engine = await createEngine(piiMask, { entities: ['EMAIL'] });
    const run = '1.'.repeat(3_500_000);
    const verdict = await engine.check(input([`${run} write to jane.roe@example.org`]), never);
    expect(verdict.action).to.equal('mask');
    expect(verdict.action === 'mask' && verdict.segments[0].text === `${run} write to [EMAIL]`).to.equal(true);
  });

  it('SECRET: `sk-` or a JWT head then millions of base64url characters, then a key', async () => {
    const engine = await createEngine(piiMask, { entities: ['SECRET'] });
    for (const head of ['sk-', 'eyJhbGciOiJIUzI1NiJ9.eyJ']) {
      const run = `${head}${'a'.repeat(5_700_000)}`;
      const verdict = await engine.check(input([`${run} then sk-proj-abcdefghijklmnopqrstuvwx`]), never);
      expect(verdict.action, head).to.equal('mask');
      const expected = head === 'sk-' ? '[SECRET] then [SECRET]' : `${run} then [SECRET]`;
      expect(verdict.action === 'mask' && verdict.segments[0].text === expected, head).to.equal(true);
    }
  });

  it('SECRET: a private key cut off after millions of characters of short base64 lines is masked whole', async () => {
    const engine = await createEngine(piiMask, { entities: ['SECRET'] });
    const key = `-----BEGIN RSA PRIVATE KEY-----${'\nA'.repeat(2_200_000)}`;
    const verdict = await engine.check(input([`key: ${key}`]), never);
    expect(verdict).to.deep.equal({ action: 'mask', segments: [{ id: 0, text: 'key: [SECRET]' }], findings: ['SECRET'] });
  });

  it('SECRET: a private key whose BEGIN label is millions of characters long is masked whole', async () => {
    const engine = await createEngine(piiMask, { entities: ['SECRET'] });
    const key = `-----BEGIN ${'A '.repeat(4_000_000)}PRIVATE KEY-----\nMIIEowIBAAKCAQEA`;
    const verdict = await engine.check(input([`key: ${key}`]), never);
    expect(verdict).to.deep.equal({ action: 'mask', segments: [{ id: 0, text: 'key: [SECRET]' }], findings: ['SECRET'] });
  });
});
