/** Exponential backoff with full jitter for the adapter's own retry loops. */
export interface BackoffOptions {
  /** @default 100 */
  readonly initialMs?: number;
  /** @default 5000 */
  readonly maxMs?: number;
}

/** Delay before retry number `attempt` (0-based): random in [base/2, base], base doubling up to maxMs. */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions = {},
  random: () => number = Math.random,
): number {
  const initial = options.initialMs ?? 100;
  const max = options.maxMs ?? 5000;
  const base = Math.min(max, initial * 2 ** Math.min(attempt, 30));
  return Math.round(base / 2 + (random() * base) / 2);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The pause before retry `attempt` of a loop that must end by `until` (epoch ms by `now`): the
 * jittered backoff, cut short so the retry still happens before `until`.
 */
export function sleepBeforeRetry(
  attempt: number,
  until: number,
  options: BackoffOptions = {},
  now: () => number = Date.now,
): Promise<void> {
  return sleep(Math.min(backoffDelay(attempt, options), Math.max(0, until - now())));
}
