/**
 * Characters that show nothing and join what is on either side of them: zero-width space and joiners,
 * word joiner, soft hyphen. The block engine matches words with them removed, and the stream window
 * (stream-window.ts) does not count them toward its hold: both must read the same list, or a word padded
 * with one they disagree on slips past a stream.
 */
export const INVISIBLE = /[\u00AD\u200B-\u200D\u2060]/g;

export function isInvisible(code: number): boolean {
  return code === 0xad || (code >= 0x200b && code <= 0x200d) || code === 0x2060;
}
