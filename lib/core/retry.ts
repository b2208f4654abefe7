/**
 * The one retry helper. Who retries is fixed in ports.ts ("Retries"): an adapter call is one
 * bounded attempt; the caller that owns the deadline retries it here.
 */
import { isReplicatorError } from "../errors.js";
import type { Clock } from "./ports.js";

/** Exponential backoff with equal jitter (a delay is random in [base/2, base]). */
export interface BackoffPolicy {
  /** First delay; doubles per attempt. */
  readonly initialMs: number;
  /** Ceiling of a single delay. */
  readonly maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 100, maxMs: 5_000 };

/** `RetryOptions.random` for full delays without jitter: timing stays reproducible on a fake clock. */
export const NO_JITTER = (): number => 1;

/** Delay before retry number `attempt` (0-based): random in [base/2, base], base doubling up to maxMs. */
export function backoffDelay(
  attempt: number,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  const base = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(attempt, 30));
  return Math.round(base / 2 + (random() * base) / 2);
}

export interface RetryOptions {
  readonly clock: Clock;
  /** Whether a failure is worth another attempt (typically: a retryable ReplicatorError). */
  readonly retryable: (error: unknown) => boolean;
  /** Epoch ms by `clock`; no attempt starts at or after it. Omitted: until `signal` aborts. */
  readonly deadline?: number | (() => number);
  /** Aborting ends the waiting; the last failure is then thrown. */
  readonly signal?: AbortSignal;
  readonly backoff?: BackoffPolicy;
  /** Called before each pause, e.g. to log the failure. */
  readonly onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
  readonly random?: () => number;
}

/**
 * Runs `attempt` until it succeeds, a failure is not retryable, the deadline passes or the signal
 * aborts; rethrows the last failure in the last three cases. Pauses never outlast the deadline.
 */
export async function retryUntil<T>(attempt: (n: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const { clock, signal } = options;
  const deadline = (): number => {
    const d = options.deadline;
    return d === undefined ? Number.POSITIVE_INFINITY : typeof d === "number" ? d : d();
  };
  for (let n = 0; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      if (!options.retryable(error) || signal?.aborted) throw error;
      // The pause is cut so that one more attempt still starts before the deadline.
      const room = deadline() - clock.now() - 1;
      if (room <= 0) throw error;
      const delay = Math.min(backoffDelay(n, options.backoff, options.random), room);
      options.onRetry?.(error, n, delay);
      await clock.sleep(delay, signal);
      if (signal?.aborted || clock.now() >= deadline()) throw error;
    }
  }
}

/** How a caller that owns a deadline retries its Kafka calls (see retryRetryable). */
export interface KafkaRetry {
  readonly clock: Clock;
  /** Epoch ms by `clock`; read when each call starts, so a per-call budget can be `() => now + budget`. */
  readonly deadline: number | (() => number);
  readonly signal?: AbortSignal;
  /** Logs each failure before its pause (what, the error, 0-based attempt, pause). */
  readonly onRetry?: (what: string, error: unknown, attempt: number, delayMs: number) => void;
  readonly backoff?: BackoffPolicy;
}

/** True for a ReplicatorError marked retryable: the one test of "worth another attempt". */
export function isRetryable(error: unknown): boolean {
  return isReplicatorError(error) && error.retryable;
}

/**
 * Runs one Kafka call (`what` names it for onRetry) until it succeeds or `retryUntil` gives up.
 * `retryable` narrows what is retried, for a call whose parts already retry the rest.
 */
export function retryRetryable<T>(
  what: string,
  call: () => Promise<T>,
  retry: KafkaRetry,
  retryable: (error: unknown) => boolean = isRetryable,
): Promise<T> {
  const deadline = typeof retry.deadline === "number" ? retry.deadline : retry.deadline();
  return retryUntil(call, {
    clock: retry.clock,
    retryable,
    deadline,
    ...(retry.signal === undefined ? {} : { signal: retry.signal }),
    ...(retry.backoff === undefined ? {} : { backoff: retry.backoff }),
    onRetry: (error, attempt, delayMs) => retry.onRetry?.(what, error, attempt, delayMs),
  });
}
