import type { Logger } from './plugins/contracts';

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
export type LogLevel = keyof typeof LEVELS;

/**
 * JSON lines on stderr (stdout carries only the startup line). Callers pass facts, never secrets:
 * nothing here can know what a secret is, so nothing secret may be handed to it.
 */
export function createLogger(level: LogLevel = (process.env.LOG_LEVEL as LogLevel) ?? 'info', bindings: Record<string, unknown> = {}, write: (line: string) => void = (l) => process.stderr.write(l)): Logger & { child(b: Record<string, unknown>): Logger } {
  const min = LEVELS[level] ?? LEVELS.info;
  const emit = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min) return;
    write(`${JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...bindings, ...fields })}\n`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (b) => createLogger(level, { ...bindings, ...b }, write),
  };
}
