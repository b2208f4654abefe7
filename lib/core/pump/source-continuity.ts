/**
 * Is the source log a checkpoint points into still the log it was taken from? Kafka reuses
 * offsets in two ways that a plain "resume at the checkpoint" reads on silently:
 *   - the topic was deleted and created again: a new log that starts at 0, whose first
 *     `checkpoint` records would be skipped;
 *   - an unclean leader election truncated the log below what we copied and new, different
 *     records now sit at offsets we already copied: resuming after them skips them.
 * The checkpoint stores the topic id and the leader epoch of the records copied from it on
 * (Lease.sourceTopicId / sourceEpoch; a holder writes past its stored checkpoint only records of
 * that epoch, see Checkpointer.enterEpoch). On taking a lease they are compared with the log as
 * it is now: a new topic id restarts the partition at the new log's start; a truncation is
 * declared only when OffsetForLeaderEpoch proves one, i.e. the stored epoch ends below the
 * offset after the last record we copied (the checkpoint, or further when the target shows a
 * crashed holder's writes past it). Then the partition resumes at that end, which is what
 * Kafka's own consumer does after divergence. A clean leader change (the epoch bumps, nothing
 * is truncated) never ends an epoch below what was read in it. Either divergence is logged as
 * an error and the offsets whose copies no longer match the source are reported through
 * recordsLost, once the reset is stored: a holder whose lease was taken meanwhile compares its
 * stale checkpoint with what the next holder wrote since, in a newer epoch, and would report a
 * truncation that never happened (seen in the chaos run on real Kafka: a worker frozen while
 * taking a partition woke, found the next holder's copies past its checkpoint and reported ten
 * records lost, then its reset was refused). Items without these fields are resumed as before.
 */

import type { TopicPartition } from "../model.js";
import type {
  CheckpointResetReason,
  Clock,
  ClusterAdmin,
  Lease,
  LeaseStore,
  LogFields,
  Logger,
  PartitionIdentity,
  ReplicationMetrics,
  SourceReader,
} from "../ports.js";
import type { LeaseEnd } from "./model.js";

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
      /** The error reportReset logs. */
      readonly message: string;
      readonly fields: LogFields;
    };

/**
 * Compares what was copied of `tp` with the log it is now: `lease`'s stored source position,
 * and `copiedTo`, the offset after the last record known copied (at least the checkpoint).
 * Neither stores nor reports anything: the caller stores the reset, fenced, then reports it
 * (reportReset) and only then reads. Throws what the source throws (KAFKA_RETRIABLE is retried
 * by the caller).
 */
export async function checkContinuity(
  deps: ContinuityDeps,
  tp: TopicPartition,
  lease: Lease,
  copiedTo: number | null = lease.checkpoint,
): Promise<Continuity> {
  const identity = await deps.source.describePartition(tp);
  const checkpoint = lease.checkpoint;
  if (checkpoint === null || copiedTo === null) return { kind: "same", identity };
  const storedId = lease.sourceTopicId ?? null;
  if (storedId !== null && identity.topicId !== null && storedId !== identity.topicId) {
    return recreated(deps, tp, Math.max(checkpoint, copiedTo), storedId, identity);
  }
  const storedEpoch = lease.sourceEpoch ?? null;
  if (storedEpoch === null || storedEpoch < 0) return { kind: "same", identity };
  const copied = Math.max(checkpoint, copiedTo);
  const end = await deps.source.endOffsetForLeaderEpoch(tp, storedEpoch);
  // -1: this leader does not know the epoch; nothing proves a truncation, and a checkpoint past
  // the log end still stops the partition (SourceFeed's out-of-range handling).
  if (end < 0 || end >= copied) return { kind: "same", identity };
  return {
    kind: "reset",
    identity,
    reason: "log-truncated",
    resumeAt: end,
    lost: { from: end, to: copied },
    message:
      "source log truncated below what was copied (unclean leader election): copied records are gone from the source and new ones reuse their offsets; resuming where the log diverged",
    fields: {
      ...tp,
      checkpoint,
      copiedTo: copied,
      leaderEpoch: storedEpoch,
      endOffset: end,
      currentLeaderEpoch: identity.leaderEpoch,
    },
  };
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
  return {
    kind: "reset",
    identity,
    reason: "topic-recreated",
    resumeAt: start,
    lost: { from: Math.min(start, checkpoint), to: checkpoint },
    message:
      "source topic was re-created under the checkpoint: the checkpoint belongs to a log that no longer exists; restarting at the new log's start",
    fields: { ...tp, checkpoint, storedTopicId: storedId, topicId: identity.topicId, resumeAt: start },
  };
}

/** Logs a stored reset as an error and reports its lost offsets through recordsLost. */
export function reportReset(
  deps: ContinuityDeps,
  tp: TopicPartition,
  reset: Extract<Continuity, { kind: "reset" }>,
): void {
  const { lost } = reset;
  if (lost.to > lost.from) deps.metrics.recordsLost({ ...tp, ...lost });
  deps.logger.error(reset.message, reset.fields);
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
 * Runs the check for a lease the pump just took (after its look at the target tail, whose
 * `landed` says how far a crashed holder's writes got) and, when the log diverged, stores the
 * reset with a fenced write before anything is read. In exactly-once mode the reset carries the
 * target's current end as the new target position and `tail.restartAt` moves the tail there: the
 * reset's offsets are reused by different records, so provenance headers written before it
 * must not count as landed. Returns the identity (its topic id is stored with later
 * checkpoints) and whether the checkpoint was reset, or how the lease ended first.
 */
export async function resumeContinuity(
  deps: ResumeDeps,
  tp: TopicPartition,
  held: ResumeTarget,
  retry: RetryWhileHeld,
  tail: {
    readonly landed: number;
    readonly unmatchedRecords: number;
    targetEnd(): Promise<number>;
    restartAt(position: number): void;
  } | null,
): Promise<{ readonly identity: PartitionIdentity; readonly reset: boolean } | LeaseEnd> {
  const { checkpoint } = held.lease;
  // Batches mode knows how many records its look found past the checkpoint, not their offsets:
  // they cover at least as many offsets, so a truncation below that is one under copies.
  const copiedTo =
    checkpoint === null
      ? null
      : Math.max(checkpoint, (tail?.landed ?? -1) + 1, checkpoint + (tail?.unmatchedRecords ?? 0));
  const found = await retry("checking the source log failed", () =>
    checkContinuity(deps, tp, held.lease, copiedTo),
  );
  if (typeof found === "string") return found;
  if (found.kind === "same") return { identity: found.identity, reset: false };
  const reset = found;
  // Truncation: the stored epoch ends at resumeAt, and the records from there on will enter a
  // newer one (Checkpointer.enterEpoch); after re-creation nothing of the new log is copied yet.
  const leaderEpoch = reset.reason === "log-truncated" ? (held.lease.sourceEpoch ?? null) : null;
  return retry("storing the checkpoint reset failed", async () => {
    const targetOffset = tail === null ? null : await tail.targetEnd();
    held.update(
      await deps.store.resetCheckpoint(held.lease, reset.resumeAt, deps.clock.now(), reset.reason, {
        targetOffset,
        source: { topicId: reset.identity.topicId, leaderEpoch },
      }),
    );
    if (tail !== null && targetOffset !== null) tail.restartAt(targetOffset);
    // Only now: the fenced write proved this holder's view of the checkpoint current.
    reportReset(deps, tp, reset);
    return { identity: reset.identity, reset: true };
  });
}
