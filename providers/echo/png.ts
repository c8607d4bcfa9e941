import { crc32, deflateSync } from 'node:zlib';

export type Rgb = readonly [number, number, number];

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A valid RGB PNG (8 bits per channel) of a diagonal gradient from `from` (top left) to `to`. */
export function gradientPng(width: number, height: number, from: Rgb, to: Rgb): Buffer {
  const stride = 1 + width * 3;
  const raw = Buffer.alloc(stride * height);
  const span = Math.max(1, width + height - 2);
  for (let y = 0; y < height; y++) {
    const row = y * stride; // byte 0 of each row: filter type 0 (none)
    for (let x = 0; x < width; x++) {
      const t = (x + y) / span;
      const at = row + 1 + x * 3;
      for (let c = 0; c < 3; c++) raw[at + c] = Math.round(from[c] + (to[c] - from[c]) * t);
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type: RGB
  return Buffer.concat([SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'ascii');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
