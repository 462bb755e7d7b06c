/**
 * The one way tests wait: for a condition, never for a fixed time (a fixed sleep is too short on
 * a loaded machine and too long everywhere else).
 */
/** Polls `probe` until it returns true; fails with `what` after `timeoutMs`; returns the ms it took. */
export async function waitUntil(
  what: string,
  probe: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
  intervalMs = 100,
): Promise<number> {
  const took = await pollUntil(probe, timeoutMs, intervalMs)
  if (took === undefined) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`)
  return took
}

/**
 * waitUntil for a test that asserts on its own what it waited for (or cleans up first): the ms
 * it took, or undefined when `probe` never held within `timeoutMs`.
 */
export async function pollUntil(
  probe: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
  intervalMs = 100,
): Promise<number | undefined> {
  const started = Date.now()
  while (Date.now() - started < timeoutMs) {
    if (await probe()) return Date.now() - started
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
  return undefined
}
