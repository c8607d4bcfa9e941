/**
 * The BEGIN line of a PEM private key, its label captured: the one value longer than the stream window's
 * hold, so pii-mask (which finds keys) and the stream window (which carries an open key across releases,
 * stream-window.ts) must agree on where one starts. Global: set `lastIndex` to 0 before a loop of `exec`,
 * and finish the loop before any await.
 */
export const PRIVATE_KEY_BEGIN = /-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----/g;
