/**
 * The one way tests wait: for a condition, never for a fixed time (a fixed sleep is too short on
 * a loaded machine and too long everywhere else).
 */
/** Polls `probe` until it returns true; fails with `what` after `timeoutMs`; returns the ms it took. */
export async function waitUntil(
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs = 15_000,
): Promise<number> {
  const started = Date.now()
  while (Date.now() - started < timeoutMs) {
    if (await probe()) return Date.now() - started
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`)
}
