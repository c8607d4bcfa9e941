import { PRIVATE_KEY_BEGIN as PEM_BEGIN } from '../../../core/plugins/sdk';
import type { PiiMatch, Recognizer } from './types';

/**
 * Credentials: provider API keys and tokens by their documented prefixes, JWTs (checked by decoding the
 * header) and PEM private-key blocks. Every pattern is anchored by a literal prefix, has no nested
 * quantifier over the same characters and ends in a greedy run its lookahead cannot reject, so each
 * costs time linear in the text. A run of at least n characters is written `[…]{n}[…]*`, not `[…]{n,}`:
 * V8 backtracks a `*` loop over one character without a stack but keeps one backtrack entry per
 * character of `{n,}`, so a run of a few million (`sk-` or `eyJ…` then base64url) overflowed it
 * ("Maximum call stack size exceeded") and the text could not be checked. A private key that is cut off
 * (a truncated paste, or a stream that has not reached the END line yet) is masked from its BEGIN line
 * to the end of its base64 body.
 */
interface SecretRule {
  name: string;
  pattern: RegExp;
  /** capture group holding the secret itself (default: the whole match) */
  group?: number;
  validate?: (value: string) => boolean;
}

const TAIL = '(?![A-Za-z0-9_-])';
const HEAD = '(?<![A-Za-z0-9_-])';

function jwtHeaderValid(token: string): boolean {
  try {
    const header = JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null && typeof header.alg === 'string';
  } catch {
    return false;
  }
}

const RULES: SecretRule[] = [
  { name: 'anthropic', pattern: new RegExp(`${HEAD}sk-ant-(?:api|admin|oat|sid)\\d{2}-[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*${TAIL}`, 'g') },
  { name: 'openai', pattern: new RegExp(`${HEAD}sk-(?:(?:proj|svcacct|admin|None)-)?[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*${TAIL}`, 'g') },
  { name: 'aws-access-key-id', pattern: new RegExp(`${HEAD}(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[A-Z0-9]{16}${TAIL}`, 'g') },
  {
    name: 'aws-secret-access-key',
    pattern: /aws_?secret_?access_?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/gi,
    group: 1,
  },
  { name: 'github', pattern: new RegExp(`${HEAD}(?:gh[pousr]_[A-Za-z0-9]{36}[A-Za-z0-9]*|github_pat_[A-Za-z0-9_]{50}[A-Za-z0-9_]*)${TAIL}`, 'g') },
  { name: 'slack', pattern: new RegExp(`${HEAD}xox[abposre]-[A-Za-z0-9-]{10}[A-Za-z0-9-]*${TAIL}`, 'g') },
  { name: 'slack-webhook', pattern: /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9]+\/[A-Za-z0-9]+\/[A-Za-z0-9]+/g },
  { name: 'stripe', pattern: new RegExp(`${HEAD}(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16}[A-Za-z0-9]*${TAIL}`, 'g') },
  { name: 'google', pattern: new RegExp(`${HEAD}AIza[0-9A-Za-z_-]{35}${TAIL}`, 'g') },
  { name: 'gitlab', pattern: new RegExp(`${HEAD}gl(?:pat|dt|rt|ptt|cbt|oas)-[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*${TAIL}`, 'g') },
  { name: 'huggingface', pattern: new RegExp(`${HEAD}hf_[A-Za-z0-9]{30}[A-Za-z0-9]*${TAIL}`, 'g') },
  { name: 'npm', pattern: new RegExp(`${HEAD}npm_[A-Za-z0-9]{36}${TAIL}`, 'g') },
  { name: 'sendgrid', pattern: new RegExp(`${HEAD}SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}${TAIL}`, 'g') },
  {
    // a credential pasted with its HTTP header; the token only (opaque, 20+ characters)
    name: 'bearer-header',
    pattern: /\bauthorization["']?\s*[:=]\s*["']?bearer\s+([A-Za-z0-9._~+/-]{20}[A-Za-z0-9._~+/-]*=*)/gi,
    group: 1,
  },
  {
    name: 'jwt',
    pattern: new RegExp(`${HEAD}eyJ[A-Za-z0-9_-]{8}[A-Za-z0-9_-]*\\.eyJ[A-Za-z0-9_-]{8}[A-Za-z0-9_-]*\\.[A-Za-z0-9_-]*${TAIL}`, 'g'),
    validate: jwtHeaderValid,
  },
];

/**
 * PEM private keys: a complete block, or a BEGIN line followed by base64 lines up to wherever the text
 * stops. The END line is found with indexOf rather than a lazy `[\s\S]*?` so that many BEGIN lines
 * without an END cost one scan of the text, not one per BEGIN line: where a label's END was last found
 * (or that there is none) is remembered for the rest of the text.
 */
// one line of a body; each match consumes a newline and none is given back, so the loop over lines
// is linear. The loop is in code, not a `(?:…)*` in the pattern: V8 keeps a backtrack entry per
// repetition of a group, and a few million short lines overflowed its stack. A header line
// (`Proc-Type: 4,ENCRYPTED`) is tried first: base64 took its first word and the body ended there.
const PEM_LINE = /\r?\n[ \t]*(?:[A-Za-z-]+: [^\r\n]*|[A-Za-z0-9+/=]+)?/y;

function findPrivateKeys(text: string, out: PiiMatch[]): void {
  const nextEnd = new Map<string, number>(); // END line -> its next position, -1 when there is none
  PEM_BEGIN.lastIndex = 0;
  for (let m = PEM_BEGIN.exec(text); m !== null; m = PEM_BEGIN.exec(text)) {
    const after = m.index + m[0].length;
    const endLine = `-----END ${m[1]}-----`;
    let end = nextEnd.get(endLine);
    if (end === undefined || (end >= 0 && end < after)) {
      end = text.indexOf(endLine, after);
      nextEnd.set(endLine, end);
    }
    let stop: number;
    if (end >= 0) stop = end + endLine.length;
    else {
      stop = after;
      PEM_LINE.lastIndex = after;
      while (PEM_LINE.exec(text) !== null) stop = PEM_LINE.lastIndex;
    }
    out.push({ entity: 'SECRET', start: m.index, end: stop });
    PEM_BEGIN.lastIndex = stop;
  }
}

export const secretRecognizer: Recognizer = {
  entity: 'SECRET',
  priority: 100,
  find(text) {
    const out: PiiMatch[] = [];
    for (const rule of RULES) {
      rule.pattern.lastIndex = 0;
      for (let m = rule.pattern.exec(text); m !== null; m = rule.pattern.exec(text)) {
        const value = rule.group ? m[rule.group] : m[0];
        if (!value) continue;
        if (rule.validate && !rule.validate(value)) continue;
        const start = rule.group ? m.index + m[0].lastIndexOf(value) : m.index;
        out.push({ entity: 'SECRET', start, end: start + value.length });
      }
    }
    findPrivateKeys(text, out);
    return out;
  },
};
