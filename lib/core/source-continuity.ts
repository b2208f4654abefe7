/**
 * Is the source log a checkpoint points into still the log it was taken from? Kafka reuses
 * offsets in two ways that a plain "resume at the checkpoint" reads on silently:
 *   - the topic was deleted and created again: a new log that starts at 0, whose first
 *     `checkpoint` records would be skipped;
 *   - an unclean leader election truncated the log below the checkpoint and new, different
 *     records now sit at offsets we already copied: resuming at the checkpoint skips them.
 * The checkpoint stores the topic id and the leader epoch of the last record copied (Lease
 * sourceTopicId / sourceLeaderEpoch). On taking a lease they are compared with the log as it is
 * now: a new topic id restarts the partition at the new log's start; an OffsetForLeaderEpoch end
 * below the checkpoint resumes at that end (what Kafka's own consumer does after divergence).
 * Either is logged as an error and the offsets whose copies no longer match the source are
 * reported through recordsLost. Items without these fields (written before they existed) are
 * resumed as before.
 */
import type { LeaseEnd } from "./held-lease.js";
import type { TopicPartition } from "./model.js";
import type {
  CheckpointResetReason,
  Clock,
  ClusterAdmin,
  Lease,
  LeaseStore,
  Logger,
  PartitionIdentity,
  ReplicationMetrics,
  SourceReader,
} from "./ports.js";

export interface ContinuityDeps {
  readonly source: SourceReader;
  readonly sourceAdmin: ClusterAdmin;
  readonly logger: Logger;
  readonly metrics: ReplicationMetrics;
}

export type Continuity =
  /** The checkpoint belongs to the current log (or nothing stored allows telling otherwise). */
  | { readonly kind: "same"; readonly identity: PartitionIdentity }
  /** The log diverged: resume at `resumeAt`, after storing it with LeaseStore.resetCheckpoint. */
  | {
      readonly kind: "reset";
      readonly identity: PartitionIdentity;
      readonly reason: CheckpointResetReason;
      readonly resumeAt: number;
      /** Offsets [from, to) of the old log that we copied and the source no longer has. */
      readonly lost: { readonly from: number; readonly to: number };
    };

/**
 * Compares `lease`'s checkpoint with the log `tp` is now. Reports (metrics, error log) what it
 * finds but does not store anything: the caller stores the reset, fenced, and only then reads.
 * Throws what the source throws (KAFKA_RETRIABLE is retried by the caller).
 */
export async function checkContinuity(
  deps: ContinuityDeps,
  tp: TopicPartition,
  lease: Lease,
): Promise<Continuity> {
  const identity = await deps.source.describePartition(tp);
  const checkpoint = lease.checkpoint;
  if (checkpoint === null) return { kind: "same", identity };
  const storedId = lease.sourceTopicId ?? null;
  if (storedId !== null && identity.topicId !== null && storedId !== identity.topicId) {
    return recreated(deps, tp, checkpoint, storedId, identity);
  }
  const storedEpoch = lease.sourceLeaderEpoch ?? null;
  if (storedEpoch === null || storedEpoch < 0) return { kind: "same", identity };
  const end = await deps.source.endOffsetForLeaderEpoch(tp, storedEpoch);
  // -1: this leader does not know the epoch; nothing to compare, and a checkpoint past the log
  // end still stops the partition (SourceFeed's out-of-range handling).
  if (end < 0 || end >= checkpoint) return { kind: "same", identity };
  const lost = { from: end, to: checkpoint };
  reportLost(deps, tp, lost);
  deps.logger.error(
    "source log truncated below the checkpoint (unclean leader election): copied records are gone from the source and new ones reuse their offsets; resuming where the log diverged",
    { ...tp, checkpoint, leaderEpoch: storedEpoch, endOffset: end, currentLeaderEpoch: identity.leaderEpoch },
  );
  return { kind: "reset", identity, reason: "log-truncated", resumeAt: end, lost };
}

async function recreated(
  deps: ContinuityDeps,
  tp: TopicPartition,
  checkpoint: number,
  storedId: string,
  identity: PartitionIdentity,
): Promise<Continuity> {
  const offsets = await deps.sourceAdmin.listOffsets(tp.topic, [tp.partition]);
  const start = offsets.find((o) => o.partition === tp.partition)?.logStartOffset ?? 0;
  // What we know is gone: the old log's offsets we copied that the new log reuses. The old log's
  // records after the checkpoint are gone too, but how many there were nobody can tell now.
  const lost = { from: Math.min(start, checkpoint), to: checkpoint };
  reportLost(deps, tp, lost);
  deps.logger.error(
    "source topic was re-created under the checkpoint: the checkpoint belongs to a log that no longer exists; restarting at the new log's start",
    { ...tp, checkpoint, storedTopicId: storedId, topicId: identity.topicId, resumeAt: start },
  );
  return { kind: "reset", identity, reason: "topic-recreated", resumeAt: start, lost };
}

function reportLost(deps: ContinuityDeps, tp: TopicPartition, lost: { from: number; to: number }): void {
  if (lost.to > lost.from) deps.metrics.recordsLost({ ...tp, ...lost });
}

/**
 * Runs a step, retrying it while the lease is held; the lease's end when it ends first
 * (LeaseGuard.retry).
 */
export type RetryWhileHeld = <T>(what: string, attempt: () => Promise<T>) => Promise<T | LeaseEnd>;

export interface ResumeDeps extends ContinuityDeps {
  readonly store: LeaseStore;
  readonly clock: Clock;
}

/**
 * What the pump needs of its held lease to apply a reset; HeldLease implements it.
 */
export interface ResumeTarget {
  readonly lease: Lease;
  update(lease: Lease): void;
}

/**
 * Runs the check for a lease the pump just took and, when the log diverged, stores the reset
 * with a fenced write before anything is read. In exactly-once mode the reset carries the
 * target's current end as the new target position and `tail.restartAt` moves the tail there: the
 * reset's offsets are reused by different records, so provenance headers written before it
 * must not count as landed. Returns the topic id to store with later checkpoints, or how the
 * lease ended first.
 */
export async function resumeContinuity(
  deps: ResumeDeps,
  tp: TopicPartition,
  held: ResumeTarget,
  retry: RetryWhileHeld,
  tail: { targetEnd(): Promise<number>; restartAt(position: number): void } | null,
): Promise<PartitionIdentity | LeaseEnd> {
  const found = await retry("checking the source log failed", () => checkContinuity(deps, tp, held.lease));
  if (typeof found === "string") return found;
  if (found.kind === "same") return found.identity;
  const reset = found;
  // Truncation: the records before resumeAt are still of the stored epoch (that is where it
  // ended); after re-creation nothing of the new log has been copied yet.
  const leaderEpoch = reset.reason === "log-truncated" ? (held.lease.sourceLeaderEpoch ?? null) : null;
  return retry("storing the checkpoint reset failed", async () => {
    const targetOffset = tail === null ? null : await tail.targetEnd();
    held.update(
      await deps.store.resetCheckpoint(held.lease, reset.resumeAt, deps.clock.now(), reset.reason, {
        targetOffset,
        source: { topicId: reset.identity.topicId, leaderEpoch },
      }),
    );
    if (tail !== null && targetOffset !== null) tail.restartAt(targetOffset);
    return reset.identity;
  });
}
