/** The image type of some bytes, from their signature (upstreams do not always say). Defaults to PNG. */
export function imageMimeType(bytes: Uint8Array, declared?: unknown): string {
  if (bytes.length >= 8 && bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47) return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 12 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return 'image/webp';
  if (bytes.length >= 6 && ascii(bytes, 0, 4) === 'GIF8') return 'image/gif';
  if (declared === 'jpeg' || declared === 'webp' || declared === 'png') return `image/${declared}`;
  return 'image/png';
}

function ascii(bytes: Uint8Array, from: number, to: number): string {
  return String.fromCharCode(...bytes.subarray(from, to));
}
