/**
 * The one retry rule of lib/kafka: the backoff every retry in the adapter pauses by (the client's
 * `retryBackoffMs` as the first pause, doubling up to the core's cap), and the loop, which is the
 * core's retryUntil. The writer's in-write resends keep their own rule (target-writer.ts: a batch
 * that may have landed is resent only as it was) but pause by this backoff too.
 */
import { type BackoffPolicy, DEFAULT_BACKOFF, type RetryOptions, retryUntil } from "../../core/retry.js";

/** The backoff of a client configured with `retryBackoffMs` (kafkajs's name for the first pause). */
export function kafkaBackoff(retryBackoffMs: number): BackoffPolicy {
  return { ...DEFAULT_BACKOFF, initialMs: retryBackoffMs };
}

/** Runs `attempt` until it succeeds or retryUntil gives up, pausing by `kafkaBackoff(retryBackoffMs)`. */
export function retryKafka<T>(
  attempt: (n: number) => Promise<T>,
  retryBackoffMs: number,
  options: Omit<RetryOptions, "backoff">,
): Promise<T> {
  return retryUntil(attempt, { ...options, backoff: kafkaBackoff(retryBackoffMs) });
}
