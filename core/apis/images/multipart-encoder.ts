import { randomBytes } from 'node:crypto';

/**
 * Writes a multipart/form-data body piece by piece (RFC 7578), so file contents can be streamed between
 * the headers this builds. Names and filenames are escaped the way browsers' FormData does.
 */
export class MultipartEncoder {
  readonly boundary = `----model-gateway-${randomBytes(16).toString('hex')}`;

  get contentType(): string {
    return `multipart/form-data; boundary=${this.boundary}`;
  }

  field(name: string, value: string): Buffer {
    return Buffer.from(`--${this.boundary}\r\nContent-Disposition: form-data; name="${escape(name)}"\r\n\r\n${value}\r\n`, 'utf8');
  }

  fileHeader(name: string, filename: string, mimeType: string): Buffer {
    return Buffer.from(
      `--${this.boundary}\r\nContent-Disposition: form-data; name="${escape(name)}"; filename="${escape(filename)}"\r\n` +
        `Content-Type: ${mimeType.replace(/[\r\n]/g, '') || 'application/octet-stream'}\r\n\r\n`,
      'utf8',
    );
  }

  fileEnd(): Buffer {
    return CRLF;
  }

  close(): Buffer {
    return Buffer.from(`--${this.boundary}--\r\n`, 'utf8');
  }
}

const CRLF = Buffer.from('\r\n');

function escape(value: string): string {
  return value.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
}
