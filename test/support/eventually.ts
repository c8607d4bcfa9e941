/**
 * Poll until `check` passes: for what the gateway finishes after the response was sent (log entries,
 * charges, a closed upstream connection, a health probe). Resolves with what `check` returned; fails
 * after `timeoutMs` with a generic message. Tests that want their own assertion's diff on a timeout poll
 * and then assert instead (e.g. expectNoTempFiles in test/e2e/images-support.ts).
 */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 3000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
