import { statSync } from 'node:fs';
import os from 'node:os';
import type { ImagesSettings } from '../../config/types';

/** The image endpoints' limits with defaults applied (resolved once at boot). */
export interface ResolvedImagesSettings {
  maxFileBytes: number;
  maxFiles: number;
  maxFields: number;
  maxFieldBytes: number;
  urlTtlMs: number;
  tempDir: string;
  publicBaseUrl?: string;
}

/** OpenAI accepts files of up to 50 MB and up to 16 input images; a mask makes 17 file parts. */
export function resolveImagesSettings(settings: ImagesSettings = {}): ResolvedImagesSettings {
  return {
    maxFileBytes: settings.maxFileBytes ?? 50 * 1024 * 1024,
    maxFiles: settings.maxFiles ?? 17,
    maxFields: settings.maxFields ?? 32,
    // prompts of up to 32,000 characters, which may be up to 4 bytes each in UTF-8
    maxFieldBytes: settings.maxFieldBytes ?? 128 * 1024,
    urlTtlMs: (settings.urlTtlSeconds ?? 3600) * 1000,
    tempDir: settings.tempDir ?? os.tmpdir(),
    publicBaseUrl: settings.publicBaseUrl?.replace(/\/+$/, ''),
  };
}

/**
 * What is wrong with `images.tempDir`, checked at boot and by `check`: a folder that does not exist
 * started fine, and every edit whose files came before its model and prompt then failed with a 500.
 */
export function tempDirProblem(dir: string | undefined): string | undefined {
  if (dir === undefined) return undefined;
  try {
    return statSync(dir).isDirectory() ? undefined : `${dir} is not a folder`;
  } catch (err) {
    return `cannot use ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
  }
}
