const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** The image type some bytes' signature says (PNG, JPEG, WebP, GIF), or undefined for none of them. */
export function sniffImageType(bytes: Uint8Array): string | undefined {
  if (bytes.length >= 8 && PNG_SIGNATURE.every((b, i) => bytes[i] === b)) return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 12 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return 'image/webp';
  if (bytes.length >= 6 && ascii(bytes, 0, 4) === 'GIF8') return 'image/gif';
  return undefined;
}

/** The image type of some bytes, from their signature (upstreams do not always say). Defaults to PNG. */
export function imageMimeType(bytes: Uint8Array, declared?: unknown): string {
  const sniffed = sniffImageType(bytes);
  if (sniffed) return sniffed;
  if (declared === 'jpeg' || declared === 'webp' || declared === 'png') return `image/${declared}`;
  return 'image/png';
}

function ascii(bytes: Uint8Array, from: number, to: number): string {
  return String.fromCharCode(...bytes.subarray(from, to));
}
