/**
 * A SourceReader whose calls are retried with retryUntil, as the pump retries the reader's one
 * bounded attempts while it holds a lease (lib/core/ports.ts, "Retries"). For adapter tests that
 * check the system rides out faults a single attempt does not.
 */
import { systemClock } from "../../lib/core/clock.js";
import type { SourceReader } from "../../lib/core/ports.js";
import { retryUntil } from "../../lib/core/retry.js";
import { isReplicatorError } from "../../lib/errors.js";

export function retryingReader(reader: SourceReader, withinMs = 15_000): SourceReader {
  const retried = <T>(call: () => Promise<T>): Promise<T> =>
    retryUntil(call, {
      clock: systemClock,
      retryable: (error) => isReplicatorError(error) && error.retryable,
      deadline: systemClock.now() + withinMs,
      backoff: { initialMs: 100, maxMs: 1_000 },
    });
  return {
    fetch: (tp, offset, limits) => retried(() => reader.fetch(tp, offset, limits)),
    fetchBatches: (tp, offset, limits) => retried(() => reader.fetchBatches(tp, offset, limits)),
    contentCrc: (batch) => reader.contentCrc(batch),
    describePartition: (tp) => retried(() => reader.describePartition(tp)),
    endOffsetForLeaderEpoch: (tp, epoch) => retried(() => reader.endOffsetForLeaderEpoch(tp, epoch)),
    close: () => reader.close(),
  };
}
