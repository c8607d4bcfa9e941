import { expect } from 'chai';
import { detectPii } from '../../../guardrails/pii-mask/detect';
import { PII_ENTITIES, type PiiEntity } from '../../../guardrails/pii-mask/recognizers';
import { readFixture } from '../../support/fixtures';

interface Sample {
  text: string;
  expect: { type: PiiEntity; value: string }[];
}

/** Minimum precision and recall per entity over test/fixtures/pii/corpus.json. */
// The held-out samples at the end of the corpus include one known miss ("OpenSSL 3.0.2.1" reads as an IP).
const MIN_PRECISION = 0.9;
const MIN_RECALL = 0.9;

describe('pii-mask recognizers on the PII corpus', () => {
  const { samples } = readFixture<{ samples: Sample[] }>('pii', 'corpus.json');
  const stats = Object.fromEntries(PII_ENTITIES.map((e) => [e, { tp: 0, fp: 0, fn: 0 }])) as Record<PiiEntity, { tp: number; fp: number; fn: number }>;
  const misses: string[] = [];

  before(() => {
    for (const sample of samples) {
      const found = detectPii(sample.text).map((m) => ({ type: m.entity, value: sample.text.slice(m.start, m.end) }));
      const expected = [...sample.expect];
      for (const f of found) {
        const i = expected.findIndex((e) => e.type === f.type && e.value === f.value);
        if (i >= 0) {
          stats[f.type].tp++;
          expected.splice(i, 1);
        } else {
          stats[f.type].fp++;
          misses.push(`false positive ${f.type} ${JSON.stringify(f.value)} in ${JSON.stringify(sample.text)}`);
        }
      }
      for (const e of expected) {
        stats[e.type].fn++;
        misses.push(`missed ${e.type} ${JSON.stringify(e.value)} in ${JSON.stringify(sample.text)}`);
      }
    }
    const rows = PII_ENTITIES.map((e) => {
      const { tp, fp, fn } = stats[e];
      return { entity: e, tp, fp, fn, precision: tp + fp ? +(tp / (tp + fp)).toFixed(3) : 1, recall: tp + fn ? +(tp / (tp + fn)).toFixed(3) : 1 };
    });
    console.log(`\n  PII corpus: ${samples.length} samples`);
    console.table(rows);
    if (misses.length) console.log(misses.map((m) => `  ${m}`).join('\n'));
  });

  it('has positives and near-misses for every entity type', () => {
    for (const e of PII_ENTITIES) expect(stats[e].tp + stats[e].fn, e).to.be.greaterThan(2);
    expect(samples.filter((s) => s.expect.length === 0).length).to.be.greaterThan(20);
  });

  for (const entity of PII_ENTITIES) {
    it(`finds ${entity} with precision >= ${MIN_PRECISION} and recall >= ${MIN_RECALL}`, () => {
      const { tp, fp, fn } = stats[entity];
      expect(tp / (tp + fp || 1), `${entity} precision`).to.be.at.least(MIN_PRECISION);
      expect(tp / (tp + fn || 1), `${entity} recall`).to.be.at.least(MIN_RECALL);
    });
  }
});
