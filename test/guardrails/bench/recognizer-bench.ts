import { RECOGNIZERS } from '../../../guardrails/pii-mask/recognizers';
import { ADVERSARIAL, ordinaryText } from '../pii-mask/adversarial';

const SIZE = 100 * 1024;
const TARGET_US_PER_KB = 1000;

/** Best of a few runs, in µs per KB of `text`. */
function usPerKb(fn: () => unknown, bytes: number, runs = 3): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    fn();
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 1000);
  }
  return best / (bytes / 1024);
}

/**
 * Each pii-mask recognizer's cost per KB: on ordinary prose with a few values in it, and on the worst of
 * the crafted inputs (test/guardrails/pii-mask/adversarial.ts, every recognizer on every input). The
 * target is at most 1 ms per KB on adversarial input; the backtracking phone pattern took ~150 ms.
 */
export async function recognizerBench(): Promise<string> {
  const ordinary = ordinaryText(SIZE);
  const crafted = Object.entries(ADVERSARIAL).flatMap(([entity, makers]) => makers.map((make, i) => ({ name: `${entity}[${i}]`, text: make(SIZE) })));
  const out = ['', `pii-mask recognizers, µs per KB (100 KB inputs, best of 3; target ≤ ${TARGET_US_PER_KB} on adversarial)`];
  out.push(`  ${'recognizer'.padEnd(12)} ${'ordinary'.padStart(9)} ${'adversarial'.padStart(12)}  worst input`);
  for (const recognizer of Object.values(RECOGNIZERS)) {
    const plain = usPerKb(() => recognizer.find(ordinary), ordinary.length);
    let worst = { name: '', us: 0 };
    for (const c of crafted) {
      const us = usPerKb(() => recognizer.find(c.text), c.text.length);
      if (us > worst.us) worst = { name: c.name, us };
    }
    const flag = worst.us > TARGET_US_PER_KB ? '  OVER TARGET' : '';
    out.push(`  ${recognizer.entity.padEnd(12)} ${plain.toFixed(1).padStart(9)} ${worst.us.toFixed(1).padStart(12)}  ${worst.name}${flag}`);
  }
  return out.join('\n');
}
