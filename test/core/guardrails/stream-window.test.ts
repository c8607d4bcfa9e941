import { expect } from 'chai';
import { StreamBlockedError, StreamWindow, windowedStream, type WindowCheck } from '../../../core/guardrails/stream-window';
import piiMask from '../../../guardrails/pii-mask';
import block from '../../../guardrails/block';
import type { GuardrailEngine } from '../../../core/plugins/contracts';
import { createEngine, never } from '../../guardrails/harness';

/** The adapter the post-guardrail stage uses: one segment in, masked text or a block out. */
function checkWith(engine: GuardrailEngine): WindowCheck {
  return async (text) => {
    const verdict = await engine.check({ phase: 'post', traffic: 'chat', target: 'm', segments: [{ id: 0, text, path: 'content' }] }, never);
    if (verdict.action === 'mask') return { action: 'mask', text: verdict.segments.find((s) => s.id === 0)?.text ?? text };
    return verdict;
  };
}

async function* from(chunks: string[]) {
  for (const c of chunks) yield c;
}

async function run(chunks: string[], check: WindowCheck, windowChars: number): Promise<string> {
  let out = '';
  for await (const piece of windowedStream(from(chunks), check, { windowChars })) out += piece;
  return out;
}

const FILLER = 'The quick brown fox jumps over the lazy dog while the report is being written. ';
const VALUES = [
  'jane.roe@example.org',
  '+44 20 7946 0958',
  '4111 1111 1111 1111',
  'DE89 3704 0044 0532 0130 00',
  '2001:db8::8a2e:370:7334',
  'sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0f',
];

describe('stream window for post guardrails', () => {
  let check: WindowCheck;
  before(async () => {
    check = checkWith(await createEngine(piiMask, {}));
  });

  for (const value of VALUES) {
    it(`masks ${value.slice(0, 12)}... split into two chunks at every position`, async () => {
      const text = `${FILLER}${FILLER}Here it is: ${value}, and then ${FILLER}${FILLER}`;
      const expected = (await check(text)) as { action: 'mask'; text: string };
      expect(expected.action).to.equal('mask');
      const start = text.indexOf(value);
      for (let cut = start - 1; cut <= start + value.length + 1; cut++) {
        const out = await run([text.slice(0, cut), text.slice(cut)], check, 64);
        expect(out, `cut at ${cut - start}`).to.equal(expected.text);
        expect(out).to.not.include(value);
      }
    });
  }

  it('masks values delivered one character per chunk, with the same output as the whole text', async () => {
    const text = `${FILLER}${VALUES.join(` ${FILLER}`)} ${FILLER}`;
    const expected = (await check(text)) as { action: 'mask'; text: string };
    const out = await run([...text], check, 64);
    expect(out).to.equal(expected.text);
    for (const v of VALUES) expect(out).to.not.include(v);
  });

  it('masks values at every three-way split around them', async () => {
    const value = '4111 1111 1111 1111';
    const text = `${FILLER}card ${value} done ${FILLER}`;
    const expected = ((await check(text)) as { text: string }).text;
    const start = text.indexOf(value);
    for (let a = start; a < start + value.length; a++) {
      for (let b = a + 1; b <= start + value.length; b++) {
        expect(await run([text.slice(0, a), text.slice(a, b), text.slice(b)], check, 48)).to.equal(expected);
      }
    }
  });

  it('releases text as it arrives and never holds more than about two windows of plain text', async () => {
    const window = new StreamWindow(check, { windowChars: 64 });
    let released = '';
    let pushed = '';
    for (const word of `${FILLER.repeat(20)}`.split(/(?<= )/)) {
      pushed += word;
      released += await window.push(word);
      expect(window.heldChars).to.be.at.most(2 * 64 + word.length);
      expect(pushed.startsWith(released)).to.equal(true);
    }
    expect(released.length).to.be.greaterThan(pushed.length - 2 * 64);
    released += await window.end();
    expect(released).to.equal(pushed);
  });

  it('cuts after whitespace where it can', async () => {
    const window = new StreamWindow(check, { windowChars: 16, stepChars: 1 });
    const out = await window.push('alpha beta gamma delta epsilon zeta eta theta');
    expect(out.length).to.be.greaterThan(0);
    expect(out.endsWith(' ')).to.equal(true);
  });

  it('holds a found value that straddles the cut until the cut can move past it', async () => {
    // a private key longer than the window: nothing of it may be released before it is complete
    const pem = `-----BEGIN PRIVATE KEY-----\n${'MIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEA\n'.repeat(6)}-----END PRIVATE KEY-----`;
    const text = `${FILLER}${pem}\n${FILLER}`;
    for (const size of [1, 7, 50]) {
      const chunks = text.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g')) ?? [];
      const out = await run(chunks, check, 64);
      expect(out, `chunks of ${size}`).to.equal(`${FILLER}[SECRET]\n${FILLER}`);
    }
  });

  it('masks the whole of a private key longer than the hold limit, as the JSON answer reads', async () => {
    // an RSA-8192 key is about 6.3 KB; the window releases what it holds at 4096 characters
    const line = (i: number) => `MII${String(i).padStart(4, '0')}${'Qk'.repeat(28)}AB`.slice(0, 64);
    const key = (lines: number) => ['-----BEGIN RSA PRIVATE KEY-----', ...Array.from({ length: lines }, (_, i) => line(i)), '-----END RSA PRIVATE KEY-----'].join('\n');
    for (const lines of [120, 260]) {
      const text = `${FILLER}${key(lines)}\n${FILLER}`;
      const expected = (await check(text)) as { action: 'mask'; text: string };
      expect(expected.text).to.equal(`${FILLER}[SECRET]\n${FILLER}`);
      for (const size of lines === 120 ? [1, 100] : [100, 997]) {
        const chunks = text.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g')) ?? [];
        expect(await run(chunks, check, 64), `${lines} lines in chunks of ${size}`).to.equal(expected.text);
      }
    }
    // lines ended by CRLF, with deltas that end between the CR and the LF
    const crlf = `${FILLER}${key(120).replaceAll('\n', '\r\n')}\n${FILLER}`;
    expect(await run(crlf.match(/[\s\S]{1,3}/g) ?? [], check, 256)).to.equal(`${FILLER}[SECRET]\n${FILLER}`);
    // a stream that ends inside the key masks all of what is left, as a cut-off key in a JSON answer
    const cutOff = `${FILLER}${key(200).split('\n-----END')[0]}`;
    expect(await run(cutOff.match(/[\s\S]{1,50}/g) ?? [], check, 64)).to.equal(`${FILLER}[SECRET]`);
    // without an engine that masks secrets the key goes through as it came
    const emailsOnly = checkWith(await createEngine(piiMask, { entities: ['EMAIL'] }));
    const plain = `${FILLER}${key(120)}\n${FILLER}`;
    expect(await run(plain.match(/[\s\S]{1,100}/g) ?? [], emailsOnly, 64)).to.equal(plain);
  });

  it('bounds what it holds when a value straddles every cut', async () => {
    const unstable: WindowCheck = (text) => ({ action: 'mask', text: `<${text.length}>` });
    const window = new StreamWindow(unstable, { windowChars: 8, maxHoldChars: 40 });
    let out = '';
    for (let i = 0; i < 100; i++) {
      out += await window.push('x');
      expect(window.heldChars).to.be.at.most(40);
    }
    expect(out).to.match(/^(<40>)+$/);
  });

  it('throws the block verdict, without the text, and stays blocked', async () => {
    const blocker = checkWith(await createEngine(block, { words: ['forbidden'] }));
    const window = new StreamWindow(blocker, { windowChars: 32 });
    let out = await window.push(FILLER);
    let error: unknown;
    try {
      out += await window.push(`forbidden ${FILLER}`);
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(StreamBlockedError);
    expect((error as StreamBlockedError).code).to.equal('guardrail_blocked');
    expect((error as StreamBlockedError).message).to.not.include('forbidden');
    expect(out).to.not.include('forbidden');
    let again: unknown;
    try {
      await window.end();
    } catch (err) {
      again = err;
    }
    expect(again).to.equal(error);
  });

  it('does not block on a word the next delta goes on with (a longer word, or a combining accent)', async () => {
    const blocker = checkWith(await createEngine(block, { words: ['internal', 'cafe'] }));
    const text = `${FILLER}${FILLER}It is internally fine. ${FILLER}A cafe\u0301 au lait. ${FILLER}${FILLER}`;
    expect((await blocker(text)).action).to.equal('allow');
    for (const word of ['internal', 'cafe']) {
      const at = text.indexOf(word) + word.length;
      for (const chunks of [[text.slice(0, at), text.slice(at)], [...text]]) {
        expect(await run(chunks, blocker, 64), `${word} in ${chunks.length} chunks`).to.equal(text);
      }
    }
    // a blocked word that ends where a delta ends is still blocked once the next one shows it ended
    let error: unknown;
    try {
      await run([`${FILLER}${FILLER}It is internal`, `. ${FILLER}`], blocker, 64);
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(StreamBlockedError);
  });

  it('does not block on a word the next delta goes on with when a long run of invisible characters is inside it', async () => {
    const blocker = checkWith(await createEngine(block, { words: ['falcon'] }));
    const zw = '\u200b'.repeat(200);
    const chunks = [`${FILLER.repeat(4)}It is Fal`, zw, zw, 'con', 'structure, fine. ', FILLER, FILLER];
    expect((await blocker(chunks.join(''))).action).to.equal('allow');
    expect(await run(chunks, blocker, 256)).to.equal(chunks.join(''));
    let error: unknown;
    try {
      await run([`${FILLER.repeat(4)}It is Fal`, zw, zw, zw, 'con', '. ', FILLER], blocker, 256);
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(StreamBlockedError);
  });

  it('blocks at the end of a short stream that never filled the window', async () => {
    const blocker = checkWith(await createEngine(block, { words: ['forbidden'] }));
    let error: unknown;
    const out: string[] = [];
    try {
      for await (const piece of windowedStream(from(['a forb', 'idden word']), blocker)) out.push(piece);
    } catch (err) {
      error = err;
    }
    expect(out).to.deep.equal([]);
    expect(error).to.be.instanceOf(StreamBlockedError);
  });

  it('never splits a surrogate pair', async () => {
    const window = new StreamWindow(() => ({ action: 'allow' }), { windowChars: 3 });
    const emoji = '😀'.repeat(10);
    const out = await window.push(emoji);
    expect(out.length % 2).to.equal(0);
    expect(out + (await window.end())).to.equal(emoji);
  });
});
