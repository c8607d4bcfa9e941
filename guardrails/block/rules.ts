import { RE2JS } from 're2js';
import { INVISIBLE, PluginError } from '../../core/plugins/sdk';
import type { BlockRule } from './engine';

/**
 * Operator patterns run on RE2 (re2js), whose time is linear in the text: a pattern such as `(a+)+$`
 * cannot stall the event loop on crafted input, as it can on JavaScript's backtracking engine. RE2 takes
 * JavaScript syntax (translated by re2js) except what needs backtracking: lookahead and backreferences.
 * A pattern it cannot express is a boot error naming its option path.
 */
const FLAGS = RE2JS.CASE_INSENSITIVE | RE2JS.LOOKBEHINDS;

/**
 * JavaScript's whitespace as RE2 members of a class: RE2's own `\s` is only ASCII (tab, newline, form
 * feed, return, space), so a no-break or ideographic space between two words would slip past a rule
 * written, as JavaScript reads it, to match any whitespace there.
 */
const JS_SPACE = '\\s\\x{0B}\\p{Z}\\x{FEFF}';

/** `\s` and `\S` of a translated pattern with JavaScript's meaning (a `\S` inside a class keeps RE2's). */
function withJavaScriptSpace(re2: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < re2.length; i++) {
    const ch = re2[i];
    if (ch === '\\' && i + 1 < re2.length) {
      const next = re2[++i];
      if (next === 's') out += inClass ? JS_SPACE : `[${JS_SPACE}]`;
      else if (next === 'S' && !inClass) out += `[^${JS_SPACE}]`;
      else out += ch + next;
      continue;
    }
    if (ch === '[' && !inClass) inClass = true;
    else if (ch === ']' && inClass) inClass = false;
    out += ch;
  }
  return out;
}

export function compilePatterns(patterns: readonly string[]): BlockRule[] {
  return patterns.map((source, i) => {
    const label = `pattern ${i + 1}`;
    const jsError = javascriptError(source);
    if (jsError) throw new PluginError(`patterns[${i}]`, `invalid regular expression: ${jsError}`);
    try {
      const re = RE2JS.compile(withJavaScriptSpace(RE2JS.translateRegExp(source)), FLAGS);
      // the text as sent (a pattern may look for the characters themselves), then as a person reads it
      // (wordText): a fullwidth letter or a zero-width character inside a word must not hide it
      return {
        label,
        test: (text: string) => {
          if (re.test(text)) return true;
          const read = wordText(text);
          return read !== text && re.test(read);
        },
      };
    } catch (err) {
      throw new PluginError(
        `patterns[${i}]`,
        `the linear-time pattern engine (RE2) cannot run this pattern (lookahead and backreferences are not supported): ${(err as Error).message}`,
      );
    }
  });
}

/** Why JavaScript itself refuses the pattern, if it does (with or without the `u` flag). */
function javascriptError(source: string): string | undefined {
  try {
    new RegExp(source, 'iu');
    return undefined;
  } catch {
    try {
      new RegExp(source, 'i');
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  }
}

/**
 * The text words are matched on: a word reads the same to a person whether its "É" is one character or
 * "E" and a combining accent, whether it is typed in fullwidth or compatibility forms (NFKC folds them),
 * and whether an invisible character sits inside it. The text sent on is never this one.
 */
function wordText(text: string): string {
  return text.normalize('NFKC').replace(INVISIBLE, '');
}

/**
 * All words in one pattern: whole words (no letter, digit or underscore on either side, in any script),
 * case-insensitive, matched on `wordText` of both the word and the text; a phrase matches across any run
 * of whitespace (JavaScript's, Unicode spaces included). The boundaries are matched as characters rather
 * than lookarounds, which is the same for a yes/no test.
 */
export function compileWords(words: readonly string[]): BlockRule[] {
  const alternatives = words
    .map((w) => wordText(w).trim())
    .filter((w) => w.length > 0)
    .map((w) => w.split(/\s+/).map(RE2JS.quote).join(`[${JS_SPACE}]+`));
  if (alternatives.length === 0) return [];
  const re = RE2JS.compile(`(?:^|[^\\p{L}\\p{N}_])(?:${alternatives.join('|')})(?:$|[^\\p{L}\\p{N}_])`, RE2JS.CASE_INSENSITIVE);
  return [{ label: 'a blocked word', test: (text: string) => re.test(wordText(text)) }];
}
