/**
 * A GroupAdmin whose calls are retried until the caller's deadline (retryRetryable), for callers
 * that own a deadline: the CLI's `offsets` and `failover`, and the lag function's sync step.
 * Like retryingAdmin (core/retrying-ports.ts): the adapter makes one attempt per call, this is the
 * one layer that retries. A commit sent again after a lost answer commits the same offsets: no harm.
 */
import type { GroupAdmin } from "../core/ports.js";
import { type KafkaRetry, retryRetryable } from "../core/retry.js";

export function retryingGroups(groups: GroupAdmin, retry: KafkaRetry): GroupAdmin {
  return {
    listGroups: () => retryRetryable("listing consumer groups", () => groups.listGroups(), retry),
    describeGroups: (ids) =>
      retryRetryable("describing consumer groups", () => groups.describeGroups(ids), retry),
    fetchOffsets: (groupId, topics) =>
      retryRetryable(
        `fetching offsets of group ${groupId}`,
        () => groups.fetchOffsets(groupId, topics),
        retry,
      ),
    commitOffsets: (groupId, offsets) =>
      retryRetryable(
        `committing offsets of group ${groupId}`,
        () => groups.commitOffsets(groupId, offsets),
        retry,
      ),
    close: () => groups.close(),
  };
}
