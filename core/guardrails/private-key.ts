/**
 * The BEGIN line of a PEM private key, its label captured: the one value longer than the stream window's
 * hold, so pii-mask (which finds keys) and the stream window (which carries an open key across releases,
 * stream-window.ts) must agree on where one starts. Global: set `lastIndex` to 0 before a loop of `exec`,
 * and finish the loop before any await. The label is words with one space between them, written as one
 * run of letters, digits and spaces (the lookaheads refuse a leading or a double space) rather than
 * `(?:[A-Z0-9]+ )*`: V8 keeps one backtrack entry per repetition of a group, so a BEGIN followed by a
 * few million `A ` overflowed its stack ("Maximum call stack size exceeded") and the text could not be
 * checked; a loop over one character class backtracks without a stack.
 */
export const PRIVATE_KEY_BEGIN = /-----BEGIN (?! )(?![A-Z0-9 ]*  )([A-Z0-9 ]*(?<= )PRIVATE KEY(?: BLOCK)?)-----/g;
