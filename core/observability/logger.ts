import pino, { type DestinationStream, type Logger as Pino } from 'pino';
import type PinoPretty from 'pino-pretty';
import { scrubSecrets } from '../errors/scrub';
import { isoTime } from '../time/iso-time';
import type { Logger } from '../plugins/contracts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export type LogFormat = 'json' | 'pretty';
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

export interface LoggerOptions {
  /** default: LOG_LEVEL from the environment, else info */
  level?: LogLevel;
  /** json (default): one JSON object a line; pretty: coloured, for a person at a terminal (pino-pretty) */
  format?: LogFormat;
  /** fields on every line */
  bindings?: Record<string, unknown>;
  /** where lines go instead of stdout (tests) */
  write?: (line: string) => void;
}

/** The plugin-facing Logger, plus what the gateway itself uses. */
export interface GatewayLogger extends Logger {
  child(bindings: Record<string, unknown>): GatewayLogger;
  /** write out what is buffered, synchronously (before the startup lines, before exit) */
  flushSync(): void;
}

/**
 * Field names whose values are credentials: pino's redaction blanks them before the line is built.
 * Callers never pass secrets on purpose; this, and the scrubber of every configured secret value below,
 * are the second and third line of defence. No wildcard paths: they make every line several times
 * slower (measured: 7 -> 46 µs a request line), and the scrubber covers nested values.
 */
const REDACTED_PATHS = [
  'authorization',
  'apiKey',
  'api_key',
  'token',
  'password',
  'secret',
  'key',
  'headers.authorization',
  'headers.cookie',
  'headers["x-api-key"]',
  'headers["x-gateway-api-key"]',
];

/**
 * The gateway's logger (pino): JSON lines on stdout with an ISO time and the level's name, or pino-pretty
 * for humans. Every line passes through the secret scrubber (core/errors/scrub.ts) on its way out, so a
 * configured secret never reaches the log whatever a message quotes (an upstream's error text, say).
 */
export function createLogger(options: LoggerOptions = {}): GatewayLogger {
  const level = options.level ?? levelFromEnv(process.env.LOG_LEVEL);
  const stream = destinationOf(options);
  const log = pino(
    {
      level,
      base: { pid: process.pid, ...options.bindings },
      // pino's isoTime, through the gateway's cheaper printing of the same text
      timestamp: () => `,"time":"${isoTime(Date.now())}"`,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      hooks: { streamWrite: (line) => scrubSecrets(line) },
    },
    stream,
  );
  const flushSync = () => {
    const sync = (stream as { flushSync?: () => void }).flushSync;
    try {
      sync?.call(stream);
    } catch (err) {
      // Not open yet: nothing to write. Stdout gone (EPIPE and the like): nothing more can be written,
      // so the stream is closed, which also tells pino's exit hook not to flush it again (that second
      // flush would throw the same error over the process's exit).
      if ((err as NodeJS.ErrnoException).code) (stream as { destroy?: () => void }).destroy?.();
    }
  };
  return wrap(log, flushSync);
}

function destinationOf(options: LoggerOptions): DestinationStream {
  if (options.write) {
    const write = options.write;
    return { write: (line: string) => write(line) };
  }
  if (options.format === 'pretty') {
    // loaded only when pretty lines are asked for: pino-pretty and its formatters stay out of the
    // memory of a gateway logging JSON (the default)
    const pinoPretty = require('pino-pretty') as typeof PinoPretty;
    return pinoPretty({ destination: 1, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid' });
  }
  // Buffered: lines are written 56 KB at a time (sonic-boom's own limit, 16 KB a write, raised to 64), or
  // a quarter of a second after they were logged when fewer come, and at exit. A write per line (or per
  // couple of lines under load) cost more than any other single part of a request's own work; an
  // asynchronous write costs about 35 µs of CPU whatever its size (the thread pool's hand-offs), so the
  // larger the batch, the less each line pays: 0.79 µs of CPU a 321-byte line in 12 KB writes, 0.43 in
  // 56 KB ones (all threads, to a file). A line can wait at most 250 ms (lost only if the process is killed
  // outright; the request log in the store is the record of what was served).
  // As bytes: in its text mode sonic-boom measures its whole waiting batch (Buffer.byteLength) at every
  // line, which flattens and copies up to 12 KB for each line logged (about 9 KB of garbage a request);
  // in buffer mode a line is added to a list and the batch is joined once, when it is written.
  const boom = pino.destination({ dest: 1, sync: false, minLength: LINE_BUFFER_BYTES, maxWrite: LINE_WRITE_BYTES, periodicFlush: LINE_FLUSH_MS, contentMode: 'buffer' });
  const writeBytes = boom.write as unknown as (bytes: Buffer) => boolean;
  return {
    write: (line: string) => writeBytes.call(boom, Buffer.from(line)),
    flushSync: () => boom.flushSync(),
    destroy: () => boom.destroy(),
  } as DestinationStream;
}

/** How much log text waits before it is written, and how long at most (see destinationOf). */
const LINE_BUFFER_BYTES = 56 * 1024;
const LINE_WRITE_BYTES = 64 * 1024;
const LINE_FLUSH_MS = 250;

/** Loggers made here: their lines are scrubbed already, so the gateway does not wrap them again. */
const ours = new WeakSet<object>();

export function isGatewayLogger(logger: Logger): logger is GatewayLogger {
  return ours.has(logger);
}

function wrap(log: Pino, flushSync: () => void): GatewayLogger {
  const logger: GatewayLogger = {
    debug: (msg, fields) => (fields ? log.debug(fields, msg) : log.debug(msg)),
    info: (msg, fields) => (fields ? log.info(fields, msg) : log.info(msg)),
    warn: (msg, fields) => (fields ? log.warn(fields, msg) : log.warn(msg)),
    error: (msg, fields) => (fields ? log.error(fields, msg) : log.error(msg)),
    child: (bindings) => wrap(log.child(bindings), flushSync),
    flushSync,
  };
  ours.add(logger);
  return logger;
}

/**
 * LOG_LEVEL in any case and without surrounding blanks (`WARN`, `Debug`, a value read from a file), or
 * info when it is unset or not a level (a typo must not silence the log).
 */
export function levelFromEnv(value: string | undefined): LogLevel {
  const level = value?.trim().toLowerCase();
  return LOG_LEVELS.includes(level as LogLevel) ? (level as LogLevel) : 'info';
}

/** LOG_FORMAT or --log-format: json unless it says pretty. */
export function formatFrom(value: string | undefined): LogFormat | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === 'json' || value === 'pretty') return value;
  throw new Error(`log format must be json or pretty, got "${value}"`);
}
