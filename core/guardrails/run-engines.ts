import { GuardrailBlockedError } from '../errors/gateway-error';
import { settleWithin } from '../time/settle-within';
import type { GuardrailVerdict, Logger, TextSegment } from '../plugins/contracts';
import type { GuardrailRecord } from './guardrail-record';
import type { ActiveGuardrail, GuardrailPhase, GuardrailTraffic } from './guardrail-set';
import { putBack, toSegments, type TextSlot } from './text-slots';
import type { WindowCheck } from './stream-window';

export interface CheckScope {
  phase: GuardrailPhase;
  traffic: GuardrailTraffic;
  /** model name or `<server>/<tool>` */
  target: string;
  signal: AbortSignal;
  logger: Logger;
}

type Outcome = { kind: 'verdict'; verdict: GuardrailVerdict } | { kind: 'error' };

/** Run one engine; a throw, an abort or a malformed verdict is an engine failure (logged without text). */
async function runOne(g: ActiveGuardrail, segments: readonly TextSegment[], scope: CheckScope): Promise<Outcome> {
  try {
    const verdict = await withinTime(g, scope.signal, (signal) => g.engine.check({ phase: scope.phase, traffic: scope.traffic, segments, target: scope.target }, signal));
    if (isVerdict(verdict)) return { kind: 'verdict', verdict };
    scope.logger.warn('guardrail returned an invalid verdict', { guardrail: g.id });
  } catch (err) {
    scope.logger.warn('guardrail engine failed', { guardrail: g.id, error: (err as Error)?.name ?? 'Error' });
  }
  return { kind: 'error' };
}

class EngineTimeout extends Error {
  override readonly name = 'EngineTimeout';
}

/**
 * Run a check with the guardrail's time limit. A synchronous engine (pii-mask, block) returns its verdict
 * directly and costs no timer; an asynchronous one gets its own signal, aborted when the request is or
 * when the time is up, and its late answer is ignored.
 */
function withinTime<T>(g: ActiveGuardrail, request: AbortSignal, check: (signal: AbortSignal) => T | Promise<T>): T | Promise<T> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(request.reason);
  if (request.aborted) controller.abort(request.reason);
  else request.addEventListener('abort', onAbort, { once: true });
  let answer: T | Promise<T>;
  try {
    answer = check(controller.signal);
  } catch (err) {
    request.removeEventListener('abort', onAbort);
    throw err;
  }
  if (typeof (answer as { then?: unknown } | null)?.then !== 'function') {
    request.removeEventListener('abort', onAbort);
    return answer;
  }
  const timeUp = () => {
    controller.abort(new EngineTimeout());
    throw new EngineTimeout(`no verdict within ${g.timeoutMs} ms`);
  };
  return settleWithin(answer as Promise<T>, g.timeoutMs, timeUp).finally(() => request.removeEventListener('abort', onAbort));
}

function isVerdict(v: unknown): v is GuardrailVerdict {
  const verdict = v as GuardrailVerdict | undefined;
  if (!verdict || typeof verdict !== 'object') return false;
  if (verdict.action === 'allow') return true;
  if (verdict.action === 'block') return typeof verdict.reason === 'string';
  if (verdict.action !== 'mask' || !Array.isArray(verdict.segments) || !verdict.segments.every(isMaskedSegment)) return false;
  return verdict.findings === undefined || (Array.isArray(verdict.findings) && verdict.findings.every((f) => typeof f === 'string'));
}

/** A masked segment names the segment it replaces by its number: an engine's id is never used as a key. */
function isMaskedSegment(s: unknown): boolean {
  const segment = s as { id?: unknown; text?: unknown } | null;
  return typeof segment === 'object' && segment !== null && Number.isSafeInteger(segment.id) && typeof segment.text === 'string';
}

const SEVERITY: Record<GuardrailRecord['verdict'], number> = { allow: 0, mask: 1, error: 2, block: 3 };

/** Fold one verdict into a guardrail's record (a stream checks many times; the record keeps the worst). */
function note(record: GuardrailRecord, verdict: GuardrailRecord['verdict'], findings?: readonly string[]): void {
  if (SEVERITY[verdict] > SEVERITY[record.verdict]) record.verdict = verdict;
  if (findings?.length) record.findings = [...new Set([...(record.findings ?? []), ...findings.filter((f) => typeof f === 'string')])].sort();
}

export function newRecord(g: ActiveGuardrail, phase: GuardrailPhase): GuardrailRecord {
  return { id: g.id, phase, verdict: 'allow', ...(g.audit ? { audited: true } : {}) };
}

function blockedError(g: ActiveGuardrail, scope: CheckScope, reason: string | null): GuardrailBlockedError {
  const what = scope.phase === 'pre' ? (scope.traffic === 'mcp' ? 'tool call arguments' : 'request') : scope.traffic === 'mcp' ? 'tool result' : 'response';
  return new GuardrailBlockedError(reason ?? `The guardrail "${g.id}" could not check the ${what}, so it was blocked.`, g.id);
}

/**
 * Run the guardrails in order over the slots: masks are written back into the body (each engine sees
 * the text the previous one left), a block throws GuardrailBlockedError, an engine failure follows its
 * `onError`, and an audit-mode guardrail is recorded but never acts. Returns whether anything was masked.
 */
export async function runGuardrails(list: readonly ActiveGuardrail[], slots: TextSlot[], scope: CheckScope, records: GuardrailRecord[], earlier?: ReadonlyMap<string, GuardrailRecord>): Promise<boolean> {
  let masked = false;
  for (const g of list) {
    // a guardrail that already checked this exchange's side text keeps one record (and one metric count)
    let record = earlier?.get(g.id);
    if (!record) {
      record = newRecord(g, scope.phase);
      records.push(record);
    }
    const outcome = await runOne(g, toSegments(slots), scope);
    if (outcome.kind === 'error') {
      note(record, 'error');
      if (!g.audit && g.onError === 'block') throw blockedError(g, scope, null);
      continue;
    }
    const { verdict } = outcome;
    if (verdict.action === 'block') {
      note(record, 'block');
      if (!g.audit) throw blockedError(g, scope, verdict.reason);
    } else if (verdict.action === 'mask') {
      note(record, 'mask', verdict.findings);
      if (!g.audit) {
        putBack(slots, verdict.segments);
        masked = true;
      }
    }
  }
  return masked;
}

/**
 * The same chain as a stream-window check over one piece of text. Records are created once per stream
 * (one per guardrail) and keep the worst verdict seen.
 */
export function windowCheck(list: readonly ActiveGuardrail[], path: string, scope: CheckScope, records: Map<string, GuardrailRecord>): WindowCheck {
  return async (text) => {
    let current = text;
    for (const g of list) {
      const record = records.get(g.id)!;
      const outcome = await runOne(g, [{ id: 0, text: current, path }], scope);
      if (outcome.kind === 'error') {
        note(record, 'error');
        if (!g.audit && g.onError === 'block') return { action: 'block', code: 'guardrail_blocked', reason: blockedError(g, scope, null).message };
        continue;
      }
      const { verdict } = outcome;
      if (verdict.action === 'block') {
        note(record, 'block');
        if (!g.audit) return { action: 'block', code: 'guardrail_blocked', reason: verdict.reason };
      } else if (verdict.action === 'mask') {
        note(record, 'mask', verdict.findings);
        const next = verdict.segments.find((s) => s.id === 0)?.text;
        if (!g.audit && typeof next === 'string') current = next;
      }
    }
    return current === text ? { action: 'allow' } : { action: 'mask', text: current };
  };
}
